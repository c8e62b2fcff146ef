"""`reliability.html`: the profile on a page of its own (inline CSS and SVG, no script, no network).

Rendered from a `ReliabilityProfile` alone (so `reliability.json` regenerates it). Order: the profile first (one
line per axis: figure, interval, a sentence), then the fault sweep's curve, the arms, consistency, safety, and
each lost task in one line with its cause and a link to its battle's trace page. Every text from a run (task ids,
causes, the agent's answers, AppWorld's requirements) goes through `html_text`; links are the profile's own
relative paths, escaped as attributes.
"""

from __future__ import annotations

from green_agent.models.eval_run import Interval
from green_agent.models.reliability_profile import Arm, CurvePoint, Figure, ReliabilityProfile
from green_agent.reliability.words import ci_text
from kernel.untrusted import html_text

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d2330;
  background:#fafbfc;max-width:1200px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:26px 0 8px}.meta{color:#5b6475;font-size:12px}
.lead{font-size:15px;margin:8px 0 12px}
table{border-collapse:collapse;background:#fff;width:100%}
th,td{border:1px solid #dde2ea;padding:5px 7px;text-align:left;vertical-align:top}th{background:#eef1f6}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.axis{font-weight:600;white-space:nowrap}
.chart{width:620px;max-width:100%;background:#fff;border:1px solid #dde2ea;border-radius:8px}
.grid{stroke:#e6e9ef}.one{stroke:#1a7f37;stroke-dasharray:4 3}.tick{font-size:10px;fill:#5b6475}
.line{stroke:#3d7be0;stroke-width:2;fill:none}.dot{fill:#3d7be0}.whisker{stroke:#1d2330;stroke-width:1.5}
ul.lost{padding-left:18px}ul.lost li{margin:3px 0}.cause{color:#cf222e}.answer{color:#5b6475}
.bad{color:#cf222e}.good{color:#1a7f37}
"""
W, H, LEFT, BOTTOM, TOP, RIGHT = 620, 260, 48, 40, 14, 16


def _num(value: float | None, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if value is not None else "-"


def _ci(ci: Interval | None, note: str | None = None) -> str:
    if ci is None:
        return f'<span class="meta">{html_text(note or "no interval")}</span>'
    return f'<span title="{html_text(ci.method)}">{html_text(ci_text(ci))}</span>'


def _profile_table(p: ReliabilityProfile) -> str:
    rows = "".join(f'<tr><td class="axis">{html_text(a.axis)}</td><td class="num">{_num(a.value)}</td>'
                   f'<td class="num">{_ci(a.ci)}</td><td>{html_text(a.sentence)}</td></tr>' for a in p.axes)
    return ('<table id="profile"><tr><th>axis</th><th>figure</th><th>interval</th><th>what it says</th></tr>'
            f"{rows}</table>")


def curve_svg(points: list[CurvePoint]) -> str:
    """r_fault against the fault rate, with each point's interval as a whisker and the line at 1."""
    top = max([1.2, *[(p.high or 0) for p in points], *[(p.ratio or 0) for p in points]])
    x_max = max(p.rate for p in points) * 1.1
    plot_w, plot_h = W - LEFT - RIGHT, H - BOTTOM - TOP

    def x(rate: float) -> float:
        return LEFT + plot_w * rate / x_max

    def y(value: float) -> float:
        return TOP + plot_h - plot_h * min(value, top) / top
    body = [f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>'
            f'<text x="{LEFT - 4}" y="{y(v) + 4:.1f}" text-anchor="end" class="tick">{v:.2g}</text>'
            for v in (top * i / 4 for i in range(5))]
    body.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y(1):.1f}" y2="{y(1):.1f}" class="one"/>')
    shown = [p for p in points if p.ratio is not None]
    if shown:
        path = " ".join(f"{x(p.rate):.1f},{y(p.ratio or 0):.1f}" for p in shown)
        body.append(f'<polyline points="{path}" class="line"/>')
    for p in points:
        body.append(f'<text x="{x(p.rate):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle" class="tick">'
                    f"{p.rate:g}</text>")
        if p.low is not None and p.high is not None:
            body.append(f'<line x1="{x(p.rate):.1f}" x2="{x(p.rate):.1f}" y1="{y(p.low):.1f}" y2="{y(p.high):.1f}" '
                        f'class="whisker"/>')
        if p.ratio is not None:
            body.append(f'<circle cx="{x(p.rate):.1f}" cy="{y(p.ratio):.1f}" r="4" class="dot"><title>rate '
                        f"{p.rate:g}: r_fault {p.ratio:.2f}, {html_text(_bounds(p))}</title></circle>")
    body.append(f'<text x="{LEFT + plot_w / 2:.1f}" y="{H - 6}" text-anchor="middle" class="tick">fault rate</text>'
                f'<text x="12" y="{TOP + plot_h / 2:.1f}" transform="rotate(-90 12 {TOP + plot_h / 2:.1f})" '
                'text-anchor="middle" class="tick">r_fault (TGC with / without)</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" role="img" id="curve" class="chart" '
            f'aria-label="r_fault by fault rate"><title>r_fault by fault rate</title>{"".join(body)}</svg>')


def _bounds(p: CurvePoint) -> str:
    return f"interval {p.low:.2f}-{p.high:.2f}" if p.low is not None and p.high is not None else "no interval"


def _arms_table(arms: list[Arm]) -> str:
    rows = []
    for a in arms:
        rec = a.recovery
        faults = f"{rec.faults_injected} / {rec.faults_recovered}" if rec else "-"
        rows.append(f'<tr><td class="axis">{html_text(a.name)}</td><td class="num">{_num(a.tgc, 1)}</td>'
                    f'<td class="num">{_num(a.ratio)}</td><td class="num">{_ci(a.ratio_ci, a.note)}</td>'
                    f'<td class="num">{_num(a.ratio_sgc)}</td><td class="num">{len(a.lost_tasks)}</td>'
                    f'<td class="num">{len(a.gained_tasks)}</td><td class="num">{faults}</td>'
                    f'<td class="num">{a.infra_errors}</td></tr>')
    return ('<table id="arms"><tr><th>arm</th><th>TGC</th><th>ratio</th><th>interval</th><th>SGC ratio</th>'
            '<th>lost</th><th>gained</th><th>faults injected / recovered</th><th>infra errors</th></tr>'
            f'{"".join(rows)}</table>')


def _figure_row(name: str, f: Figure) -> str:
    return (f'<tr><td class="axis">{html_text(name)}</td><td class="num">{_num(f.value)}</td>'
            f'<td class="num">{_ci(f.ci, f.note)}</td></tr>')


def _consistency(p: ReliabilityProfile) -> str:
    c = p.consistency
    if c is None:
        return '<p class="meta" id="consistency">One trial per task: run with --trials 2 or more to measure it.</p>'
    rows = [_figure_row(f"pass^{k}", f) for k, f in c.pass_hat_k.items()]
    rows += [_figure_row("outcome consistency", c.outcome), _figure_row("trajectory consistency", c.trajectory),
             _figure_row("resource consistency", c.resource)]
    by = ", ".join(f"{k} {v:.2f}" for k, v in c.resource_by.items() if v is not None) or "none reported"
    return (f'<table id="consistency"><tr><th>figure</th><th>value</th><th>interval</th></tr>{"".join(rows)}</table>'
            f'<p class="meta">{c.tasks} task(s) with all {c.trials} baseline trials judged; resources: '
            f"{html_text(by)}</p>")


def _safety(p: ReliabilityProfile) -> str:
    s = p.safety
    kinds = ", ".join(f"{k}: {n}" for k, n in s.by_kind.items())
    items = "".join(f'<li>{html_text(e.arm)} · {html_text(e.task_id)} trial {e.trial}: '
                    f'{html_text(e.requirement or "a no_op_pass test failed")} · changed {html_text(e.changes or "-")}'
                    f' · <a href="{html_text(e.trace or "")}">trace</a></li>' for e in s.examples)
    return (f'<p id="safety">{s.violations} of {s.battles} judged battles changed what the task should not touch: '
            f'{_num(s.share.value)} ({_ci(s.share.ci, s.share.note)}). Tables touched by those battles, by kind: '
            f'{html_text(kinds)}.</p>' + (f'<ul class="lost">{items}</ul>' if items else ""))


def _lost(p: ReliabilityProfile) -> str:
    if not p.lost:
        return '<p id="lost">No arm lost a battle the baseline passed.</p>'
    items = []
    for t in p.lost:
        answer = f' <span class="answer">· answered {html_text(t.answer)}</span>' if t.answer is not None else ""
        link = f' · <a href="{html_text(t.trace)}">trace</a>' if t.trace else ""
        items.append(f'<li>{html_text(t.arm)} · <b>{html_text(t.task_id)}</b> trial {t.trial}: '
                     f'<span class="cause">{html_text(t.cause)}</span>{answer}{link}</li>')
    return f'<ul class="lost" id="lost">{"".join(items)}</ul>'


def render_profile_html(p: ReliabilityProfile) -> str:
    """The whole page (module docstring)."""
    title = f"Reliability profile: {p.blue}"
    curve = (f"<h2>The fault sweep</h2>{curve_svg(p.curve)}<p class=\"meta\">Each point: r_fault at that rate, "
             "its whisker the interval; the dashed line is 1 (nothing lost).</p>") if p.curve else ""
    secret = (f"The fault arms' shared secret: {html_text(p.fault_salt)} (SHA-256 "
              f"{html_text(p.fault_commitment or '-')})." if p.fault_salt else "")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html_text(title)}</title>'
            f'<meta name="viewport" content="width=device-width,initial-scale=1"><style>{CSS}</style></head><body>'
            f"<h1>{html_text(title)}</h1><p class=\"lead\">{html_text(p.message)}</p>{_profile_table(p)}"
            f'<p class="meta"><a href="{html_text(p.baseline)}/report.html">the baseline\'s report</a> · ratios are '
            "not capped at 1 (docs/reliability.md) · hover an interval for its method</p>"
            f"{curve}<h2>Lost tasks</h2>{_lost(p)}<h2>Arms</h2>{_arms_table(p.arms)}"
            f"<h2>Consistency over trials</h2>{_consistency(p)}<h2>Safety</h2>{_safety(p)}"
            f'<p class="meta">{secret}</p></body></html>')
