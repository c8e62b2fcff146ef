"""`Comparison` -> a terminal table and a self-contained HTML page in report.html's style.

Both are rendered from the `Comparison` record alone (no file is read). Each changed task links each trial's
trace page (`TaskComparison.pages_a`/`pages_b`), relative to the folder the page is written to. Everything
taken from the runs (blue names, paths, task ids, outcomes) goes through `kernel.untrusted.html_text` on the
page; the page has no script and loads nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from kernel.untrusted import html_text

from green_agent.reliability.report import reliability_html, reliability_lines
from green_agent.batch.report_html import CSS
from green_agent.models.comparison import Comparison, PairedDifference, TaskComparison
from green_agent.models.cost import cost_short

MAX_CHANGED_SHOWN = 40


def _ci(diff: PairedDifference) -> str:
    return f"{diff.ci.low:+.1f} .. {diff.ci.high:+.1f}" if diff.ci else "n/a"


def _rate(passed: int, trials: int) -> str:
    return ("pass" if passed else "fail") if trials == 1 else f"{passed}/{trials}"


def _outcomes(outcomes: list[str], reasons: list[str] | None = None) -> str:
    if reasons and len(reasons) == len(outcomes):
        return "; ".join(f"{o} ({r})" if r != o.replace("_", " ") else o for o, r in zip(outcomes, reasons))
    return ",".join(outcomes)


COUNT_WORDS = {"better": "{} better in B", "worse": "{} worse", "same": "{} the same",
               "both": "passed in both runs {}", "a_only": "only in A {}", "b_only": "only in B {}",
               "neither": "in neither {}"}


def counts_in_words(counts: dict[str, int]) -> str:
    """`compare`'s task counts as a sentence: how the pass rates moved, then (one trial each) where tasks passed."""
    moved = ", ".join(COUNT_WORDS[k].format(counts[k]) for k in ("better", "worse", "same") if k in counts)
    where = ", ".join(COUNT_WORDS[k].format(counts[k]) for k in ("both", "a_only", "b_only", "neither") if k in counts)
    return f"tasks: {moved}" + (f"; {where}" if where else "") + "."


def mdd_note(c: Comparison) -> str:
    level = f"{c.confidence_level * 100:g}%"
    return (f"MDD (min. detectable): the smallest B - A difference, in points, that this many tasks would show as "
            f"significant at {level} confidence {c.power * 100:g}% of the time; a smaller real difference may go "
            "unseen.")


def text_table(c: Comparison) -> str:
    """The terminal rendering: sides, the difference table, the changed tasks, the verdict."""
    level = f"{c.confidence_level * 100:g}%"
    lines = [f"A: {c.a.blue} ({c.a.run_id}, {c.a.tasks} task(s) x {c.a.trials} trial(s), {c.a.status})",
             f"B: {c.b.blue} ({c.b.run_id}, {c.b.tasks} task(s) x {c.b.trials} trial(s), {c.b.status})"]
    lines.append(f"cost: A {cost_short(c.a.cost)} · B {cost_short(c.b.cost)}")
    if c.only_in_a or c.only_in_b:
        lines.append(f"--intersect: left out {len(c.only_in_a)} task(s) only in A, {len(c.only_in_b)} only in B")
    if c.incomplete_tasks:
        lines.append(f"{len(c.incomplete_tasks)} task(s) with a trial not judged (counted as not passed, as TGC does): "
                     f"{', '.join(c.incomplete_tasks[:10])}")
    lines.append(counts_in_words(c.counts))
    header = f"{'':<14}{'tasks':>6}{'TGC A':>8}{'TGC B':>8}{'B - A':>8}  {level + ' CI':<18}{'test':<20}{'p':>9}{'MDD':>6}"
    lines += ["", header, "-" * len(header)]
    rows = [("all", c.overall)] + [(f"difficulty {k}", d) for k, d in c.by_difficulty.items()]
    for label, d in rows:
        mdd = f"{d.minimum_detectable:.0f}" if d.minimum_detectable is not None else "-"
        lines.append(f"{label:<14}{d.tasks:>6}{d.tgc_a:>8.1f}{d.tgc_b:>8.1f}{d.difference:>+8.1f}  {_ci(d):<18}"
                     f"{d.test.name:<20}{d.test.p_value:>9.2g}{mdd:>6}")
    lines.append(mdd_note(c))
    for change, title in (("better", "better in B"), ("worse", "worse in B")):
        changed = [t for t in c.tasks if t.change == change]
        if changed:
            shown = "; ".join(f"{t.task_id} {_rate(t.passed_a, t.trials_a)} -> {_rate(t.passed_b, t.trials_b)}"
                              f" ({_outcomes(t.outcomes_a, t.reasons_a)} -> {_outcomes(t.outcomes_b, t.reasons_b)})"
                              for t in changed[:MAX_CHANGED_SHOWN])
            more = f" ... and {len(changed) - MAX_CHANGED_SHOWN} more" if len(changed) > MAX_CHANGED_SHOWN else ""
            lines += ["", f"{title} ({len(changed)}): {shown}{more}"]
    lines += [""] + ([c.standard_note] if c.standard_note else []) + [c.overall.message]
    if c.reliability:
        lines += [""] + reliability_lines(c.reliability)
    return "\n".join(lines)


def _diff_row(label: str, d: PairedDifference, key: str) -> str:
    mdd = f"{d.minimum_detectable:.0f}" if d.minimum_detectable is not None else "–"
    return (f'<tr id="diff-{html_text(key)}"><td>{html_text(label)}</td><td class="num">{d.tasks}</td>'
            f'<td class="num">{d.tgc_a:.1f}</td><td class="num">{d.tgc_b:.1f}</td>'
            f'<td class="num">{d.difference:+.1f}</td><td class="num ci">{html_text(_ci(d))}</td>'
            f'<td>{html_text(d.test.name)}</td><td class="num">{d.test.p_value:.2g}</td><td class="num">{mdd}</td>'
            f'<td class="verdict-{html_text(d.verdict)}">{html_text(d.verdict.replace("_", " "))}</td></tr>')


def _links(pages: list[str | None], side: str, page_dir: Path | None) -> str:
    """Links to the trial's trace pages (`A1 trace`, ...), relative to `page_dir` when given."""
    links = []
    for trial, page in enumerate(pages, start=1):
        if page is None:
            continue
        href = os.path.relpath(page, page_dir) if page_dir is not None else Path(page).as_uri()
        links.append(f'<a class="trace" href="{html_text(Path(href).as_posix())}">{side}{trial} trace</a>')
    return " " + " ".join(links) if links else ""


def _task_row(t: TaskComparison, page_dir: Path | None = None) -> str:
    return (f'<tr class="change-{html_text(t.change)}"><td>{html_text(t.task_id)}</td><td class="num">'
            f'{html_text(str(t.difficulty) if t.difficulty is not None else "–")}</td>'
            f'<td>{html_text(_rate(t.passed_a, t.trials_a))}</td><td>{html_text(_outcomes(t.outcomes_a, t.reasons_a))}'
            f'{_links(t.pages_a, "A", page_dir)}</td>'
            f'<td>{html_text(_rate(t.passed_b, t.trials_b))}</td><td>{html_text(_outcomes(t.outcomes_b, t.reasons_b))}'
            f'{_links(t.pages_b, "B", page_dir)}</td><td>{html_text(t.change)}</td></tr>')


def render_compare_html(c: Comparison, page_dir: Path | None = None) -> str:
    """The whole page as a string; `page_dir`: the folder it is written to (trace links relative to it)."""
    title = f"AppWorld compare: {c.a.blue} (A) vs {c.b.blue} (B)"
    level = f"{c.confidence_level * 100:g}%"
    meta = (f"A {c.a.run_id} · {c.a.path} · {c.a.tasks} task(s) x {c.a.trials} trial(s) · {c.a.status} — "
            f"B {c.b.run_id} · {c.b.path} · {c.b.tasks} task(s) x {c.b.trials} trial(s) · {c.b.status}")
    left = ""
    if c.only_in_a or c.only_in_b or c.incomplete_tasks:
        left = (f'<p class="meta" id="left-out">left out: {len(c.only_in_a)} task(s) only in A, {len(c.only_in_b)} '
                f'only in B; {len(c.incomplete_tasks)} with a trial not judged (counted as not passed)</p>')
    head = ("<tr><th></th><th>tasks</th><th>TGC A</th><th>TGC B</th><th>B - A</th>"
            f"<th>{html_text(level)} CI</th><th>test</th><th>p</th><th>min. detectable</th><th>verdict</th></tr>")
    diffs = _diff_row("all tasks", c.overall, "all") + "".join(
        _diff_row(f"difficulty {k}", d, k) for k, d in c.by_difficulty.items())
    counts = counts_in_words(c.counts)
    changed = [t for t in c.tasks if t.change != "same"]
    tasks = ("".join(_task_row(t, page_dir) for t in changed)
             or '<tr><td colspan="7" class="empty">no task changed</td></tr>')
    extra = ".change-better td{background:#eaf6ec}.change-worse td{background:#fbeaea}.verdict-b_better," \
            ".verdict-a_better{font-weight:600}.verdict-cannot_tell{color:#5b6475}.verdict{font-size:16px}"
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html_text(title)}</title>'
            f'<meta name="viewport" content="width=device-width,initial-scale=1"><style>{CSS}{extra}</style></head>'
            f'<body data-ready="1"><h1>{html_text(title)}</h1><p class="meta">{html_text(meta)}</p>{left}'
            f'<p class="meta" id="cost">cost: A {html_text(cost_short(c.a.cost))} · B {html_text(cost_short(c.b.cost))}'
            '</p>'
            + (f'<p class="meta" id="standard-note"><b>{html_text(c.standard_note)}</b></p>' if c.standard_note else '')
            + f'<p class="verdict" id="verdict">{html_text(c.overall.message)}</p>'
            + (reliability_html(c.reliability) if c.reliability else "")
            + f'<h2>Difference in TGC (B - A, points)</h2><table id="differences">{head}{diffs}</table>'
            f'<p class="meta">interval: {html_text(c.overall.ci.method if c.overall.ci else "none")}; '
            f'{html_text(mdd_note(c))}</p>'
            f'<h2>Tasks</h2><p id="counts">{html_text(counts)}</p>'
            f'<table id="changed"><tr><th>task</th><th>diff.</th><th>A</th><th>A outcomes (why)</th><th>B</th>'
            f'<th>B outcomes (why)</th><th>change</th></tr>{tasks}</table></body></html>')
