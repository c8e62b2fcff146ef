"""`report.html`: one self-contained page (inline CSS, JS and SVG; no network) for a run.

Sections: headline numbers with their confidence intervals, charts (pass rate by difficulty with
its interval as a whisker, calls and errors per battle, call latency distribution), with trials >= 2
the stability section (tasks by trials passed, the TGC spread between two single runs), a sortable per-battle table, and per-battle detail (instruction, scope vs.
gold, the call sequence with redacted arguments, AppWorld's failed tests). Everything from the
files on disk goes through `kernel.untrusted.html_text`. The page works without JavaScript; the script adds
column sorting (also from the URL: `report.html#sort=<column>:asc|desc`) and marks
`<body data-ready="1">` once it ran.
"""

from __future__ import annotations

from pathlib import Path

from green_agent.batch.charts import bar_chart, histogram, stacked_chart
from green_agent.models.explanation import kind_words
from green_agent.batch.report_data import BattleDetail, CallView, load_details
from green_agent.batch.report_provenance import provenance_html
from green_agent.models.cost import usd
from green_agent.models.eval_run import EvalResults, EvalRow, Interval, Stability
from green_agent.stats.intervals import ONE_SCENARIO
from green_agent.runfolder.layout import PROFILE_PAGE
from kernel.untrusted import html_text

TRACE_PAGE = "trace.html"
COLUMNS = [  # (key, header, numeric)
    ("task", "Task", False), ("trial", "Trial", True), ("difficulty", "Diff.", True), ("outcome", "Outcome", False),
    ("tests", "Tests passed", True), ("calls", "Calls", True), ("errors", "Failed calls", True),
    ("faults", "Injected faults (recovered)", True),
    ("p50", "p50 ms", True), ("p95", "p95 ms", True), ("recall", "Scope recall", True), ("f1", "API F1", True),
    ("duration", "Duration s", True), ("attempts", "Attempts", True), ("why", "Why", False),
]

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d2330;
  background:#fafbfc}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}.meta{color:#5b6475;font-size:12px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:14px 0}
.card{background:#fff;border:1px solid #dde2ea;border-radius:8px;padding:10px 14px;min-width:110px}
.card .v{font-size:22px;font-weight:600}.card .k{color:#5b6475;font-size:12px}
.card .ci{font-size:12px;color:#1d2330;font-variant-numeric:tabular-nums}.card .ci .muted{font-size:11px}
.whisker{stroke:#1d2330;stroke-width:1.5}
.charts{display:flex;flex-wrap:wrap;gap:14px}
.chart{width:560px;max-width:100%;background:#fff;border:1px solid #dde2ea;border-radius:8px}
.chart-box{margin:0}.chart-box figcaption{font-weight:600;margin:0 0 4px}
.grid{stroke:#e6e9ef}.tick{font-size:10px;fill:#5b6475}.val{font-size:10px;fill:#1d2330}
.bar{fill:#3d7be0}.bar-bad{fill:#e0533d}
table{border-collapse:collapse;background:#fff;width:100%}
th,td{border:1px solid #dde2ea;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#eef1f6;cursor:pointer;user-select:none;white-space:nowrap}
th[data-dir=asc]::after{content:" \\25B2"}th[data-dir=desc]::after{content:" \\25BC"}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.o-passed{color:#1a7f37;font-weight:600}.o-infra_error{color:#8250df}.o-scope_error{color:#9a6700}
.o-failed,.o-timeout,.o-collateral_damage{color:#cf222e}.o-partial{color:#9a6700}
details{background:#fff;border:1px solid #dde2ea;border-radius:8px;margin:8px 0;padding:6px 10px}
summary{cursor:pointer;font-weight:600}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f5f8;padding:6px;border-radius:4px;font-size:12px;
  max-height:260px;overflow:auto}
.calls td{font-size:12px}.ok{color:#1a7f37}.bad{color:#cf222e}.muted{color:#5b6475}.injected{color:#9a6700}
.empty{color:#5b6475;font-style:italic}a.trace{font-size:11px;margin-left:4px}
"""

JS = """
(function(){
  function openHash(){var h=decodeURIComponent(location.hash.slice(1));
    if(h.indexOf('detail-')===0){var d=document.getElementById(h); if(d){d.open=true;}}}
  window.addEventListener('hashchange',openHash); openHash();
  var table=document.getElementById('battles'); if(!table){document.body.dataset.ready='1';return;}
  var heads=table.tHead.rows[0].cells, body=table.tBodies[0];
  function sortBy(idx,dir){
    var rows=Array.prototype.slice.call(body.rows), numeric=heads[idx].dataset.numeric==='1';
    rows.sort(function(a,b){
      var x=a.cells[idx].dataset.v, y=b.cells[idx].dataset.v;
      if(numeric){x=x===''?-Infinity:parseFloat(x); y=y===''?-Infinity:parseFloat(y);}
      var c=x<y?-1:x>y?1:0; return dir==='asc'?c:-c;});
    rows.forEach(function(r){body.appendChild(r);});
    for(var i=0;i<heads.length;i++){heads[i].removeAttribute('data-dir');}
    heads[idx].setAttribute('data-dir',dir);
    document.getElementById('sort-state').textContent=heads[idx].dataset.key+':'+dir;
  }
  for(var i=0;i<heads.length;i++){(function(i){heads[i].addEventListener('click',function(){
    sortBy(i,heads[i].getAttribute('data-dir')==='asc'?'desc':'asc');});})(i);}
  var m=/sort=([a-z0-9_]+):(asc|desc)/.exec(decodeURIComponent(location.hash||''));
  if(m){for(var j=0;j<heads.length;j++){if(heads[j].dataset.key===m[1]){sortBy(j,m[2]);}}}
  document.body.dataset.ready='1';
})();
"""


def _fmt(value: float | int | None, digits: int = 2) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _card(key: str, label: str, value: str, interval: str = "") -> str:
    return (f'<div class="card" id="headline-{html_text(key)}"><div class="v">{html_text(value)}</div>{interval}'
            f'<div class="k">{html_text(label)}</div></div>')


def _faults_card(results: EvalResults) -> str:
    """A reliability run's faults: injected and recovered, by kind, loud and silent, apart from the agent's own
    failed calls (`green_agent.reliability.faults`)."""
    totals = results.aggregates.faults
    injected, recovered = (totals.injected, totals.recovered) if totals else (0, 0)
    parts = [f"{kind} {k.recovered}/{k.injected}" for kind, k in (totals.by_kind.items() if totals else [])]
    if totals and totals.silent and totals.silent.injected:
        parts.append(f"silent {totals.silent.recovered}/{totals.silent.injected}")
    if totals and totals.retry_after_ignored:
        parts.append(f"{totals.retry_after_ignored} call(s) within a 429's retry-after")
    shown = html_text(", ".join(parts) or "none")
    detail = f'<div class="ci" id="faults-by-kind">recovered/injected: {shown}</div>'
    return _card("faults", "injected faults recovered / injected (the test, not the agent's failed calls)",
                 f"{recovered}/{injected}", detail)


def _ci_html(key: str, interval: Interval | None, digits: int = 1, reference: Interval | None = None,
             figure: float | None = None) -> str:
    """`95% CI 34.7–83.2` under a card's value (and the Wilson interval beside it, when given); without an
    interval, why in words when the figure exists (one scenario)."""
    if interval is None:
        return (f'<div class="ci" id="ci-{html_text(key)}">{html_text(ONE_SCENARIO)}</div>'
                if figure is not None else "")
    ref = (f' <span class="muted" id="ci-{html_text(key)}-wilson">Wilson {reference.low:.{digits}f}–'
           f'{reference.high:.{digits}f}</span>') if reference else ""
    return (f'<div class="ci" id="ci-{html_text(key)}" title="{html_text(interval.method)}">{interval.level * 100:g}% CI '
            f'{interval.low:.{digits}f}–{interval.high:.{digits}f}{ref}</div>')


def _headline(results: EvalResults) -> str:
    agg, cfg = results.aggregates, results.manifest.config
    over = "over the task set" + (", incomplete" if agg.incomplete else "")
    cards = [
        _card("tgc", f"TGC (task goal completion, {over})", f"{_fmt(agg.tgc, 1)}%" if agg.tgc is not None else "–",
              _ci_html("tgc", agg.tgc_ci, reference=agg.tgc_wilson, figure=agg.tgc)),
        _card("sgc", f"SGC (scenario goal completion, {over})", f"{_fmt(agg.sgc, 1)}%" if agg.sgc is not None else "–",
              _ci_html("sgc", agg.sgc_ci, figure=agg.sgc)),
        _card("passed", "battles passed / judged / in the task set", f"{agg.passed}/{agg.judged}/{agg.expected_battles}"),
        _card("tgc-judged", "TGC over judged battles only", f"{_fmt(agg.tgc_judged, 1)}%" if agg.tgc_judged is not None
              else "–"),
        _card("infra", "infra errors (not passed, not the Blue's loss)", str(agg.infra_errors)),
        _card("scope-errors", "scope errors (not passed, not the Blue's loss)", str(agg.scope_errors)),
        _card("scope-misses", "battles with a scope miss", str(sum(1 for r in results.rows if r.missed_gold))),
        _card("tasks", "tasks", str(len(results.manifest.task_ids))),
        _card("scenarios", "scenarios passed / judged", f"{agg.scenarios_passed}/{agg.scenarios}"),
        _card("calls", "mean calls per battle", _fmt(agg.mean_trajectory.get("calls"), 1)),
        _card("f1", "mean API F1", _fmt(agg.mean_trajectory.get("api_f1"), 3)),
        _card("cost-per-task", "cost per task (the Blue's reported usage + the Green's)",
              usd(agg.cost.cost_per_task_usd) if agg.cost else "unknown"),
        _card("cost-per-solved-task", "cost per solved task" + (f" ({agg.cost.unknown_because})" if agg.cost and
              agg.cost.unknown_because else ""), usd(agg.cost.cost_per_solved_task_usd) if agg.cost else "unknown"),
    ]
    if results.faults is not None:
        cards.append(_faults_card(results))
    for k, v in (agg.pass_hat_k or {}).items():
        cards.append(_card(f"pass-hat-{k}", f"pass^{k}", _fmt(v, 3),
                           _ci_html(f"pass-hat-{k}", (agg.pass_hat_k_ci or {}).get(k), 3, figure=v)))
    if agg.stability and agg.stability.flip_rate is not None:
        cards.append(_card("flip-rate", f"tasks whose verdict flips between trials (of {agg.stability.tasks})",
                           f"{agg.stability.flip_rate:.1f}%", _ci_html("flip-rate", agg.stability.flip_rate_ci, figure=agg.stability.flip_rate)))
    if agg.missing:
        cards.append(_card("missing", "battles not run yet", str(agg.missing)))
    if agg.scenarios_incomplete:
        cards.append(_card("incomplete", "scenarios incomplete (not in SGC): "
                           + ", ".join(agg.scenarios_incomplete[:8]), str(len(agg.scenarios_incomplete))))
    meta = (f"run {results.manifest.run_id} · status {results.status} · blue {cfg.blue} · "
            f"predictor {cfg.predictor} · scope policy {cfg.scope_policy} · interaction {cfg.interaction} · "
            f"split {cfg.split or 'custom task list'} · {cfg.trials} trial(s) · {cfg.workers} worker(s) · "
            f"generated {results.generated_at:%Y-%m-%d %H:%M:%S} UTC")
    outcomes = ", ".join(f"{k} {v}" for k, v in agg.outcome_counts.items() if v)
    return (f'<p class="meta">{html_text(meta)}</p>{provenance_html(results)}<div class="cards">{"".join(cards)}</div>'
            f'<p class="meta" id="outcomes">outcomes: {html_text(outcomes or "none")}</p>')


def _stability_html(stab: Stability | None) -> str:
    """The stability section: pass-rate histogram chart and the TGC spread in words (trials >= 2)."""
    if stab is None:
        return ""
    items = [(rate, float(count), "tasks") for rate, count in stab.pass_rate_histogram.items()]
    trials = " · ".join(f"trial {k}: {_fmt(v, 1)}" for k, v in stab.tgc_by_trial.items())
    spread = (f"Two single runs of this agent differ in TGC by {stab.tgc_spread_mean:.1f} points on average and by "
              f"up to {stab.tgc_spread_p95:.1f} points 95% of the time." if stab.tgc_spread_p95 is not None else "")
    return (f'<h2>Stability across trials</h2><div class="charts" id="stability">'
            + bar_chart(items, "Tasks by trials passed (passed/judged)", "tasks")
            + f'</div><p class="meta" id="stability-text">TGC per trial: {html_text(trials)}. {html_text(spread)} '
            f"Flaky tasks: {html_text(', '.join(stab.flaky_tasks[:20]) or 'none')}"
            f"{' …' if len(stab.flaky_tasks) > 20 else ''}</p>")


def _charts(results: EvalResults, details: list[BattleDetail]) -> str:
    by_diff = [(f"difficulty {k}", s.tgc, f"n={s.battles}", (s.ci.low, s.ci.high) if s.ci else None)
               for k, s in results.aggregates.tgc_by_difficulty.items()]
    calls = [(d.row.task_id + (f"#{d.row.trial}" if results.manifest.config.trials > 1 else ""),
              (d.row.calls or 0) - (d.row.failed_calls or 0), d.row.failed_calls or 0) for d in details]
    latencies = [ms for d in details for ms in d.call_durations_ms]
    return ('<div class="charts">'
            + bar_chart(by_diff, f"Pass rate (TGC %) by difficulty, with its "
                        f"{(results.aggregates.confidence_level or 0.95) * 100:g}% interval", "TGC %", y_max=100.0)
            + stacked_chart(calls, "Calls per battle (red: failed calls)", "calls")
            + histogram(latencies, "Call latency distribution (gateway, ms)", "milliseconds per call")
            + "</div>")


def _cell(value: object, shown: str | None = None, numeric: bool = True, css: str = "") -> str:
    sort_value = "" if value is None else str(value)
    classes = " ".join(c for c in ("num" if numeric else "", css) if c)
    class_attr = f' class="{html_text(classes)}"' if classes else ""
    text = shown if shown is not None else _fmt(value)  # type: ignore[arg-type]
    return f'<td data-v="{html_text(sort_value)}"{class_attr}>{html_text(text)}</td>'


def _anchor(row: EvalRow) -> str:
    return f"detail-{row.task_id}-{row.trial}"


def _why(d: BattleDetail | None, r: EvalRow) -> str:
    """The verdict's reason for the table (its headline after "Blue wins:"/"Green wins:"), else the row's own."""
    if d is not None and d.explanation:
        return d.explanation.headline.partition(": ")[2] or d.explanation.headline
    return (d.reason if d is not None and d.reason else None) or r.reason()


def trace_link(row: EvalRow, traces: set[str]) -> str:
    """A link to the battle's page (`trace.html` beside its result.json), when it has one."""
    if row.result_path not in traces:
        return ""
    href = (Path(row.result_path).parent / TRACE_PAGE).as_posix()
    return f' <a class="trace" href="{html_text(href)}" title="the battle\'s story">trace</a>'


def _table(rows: list[EvalRow], details: list[BattleDetail] | None = None, traces: set[str] | None = None) -> str:
    by_anchor = {_anchor(d.row): d for d in details or []}
    head = "".join(f'<th data-key="{k}" data-numeric="{int(num)}">{html_text(h)}</th>' for k, h, num in COLUMNS)
    body = []
    for r in rows:
        tests = f"{r.tests_passed}/{r.tests_total}" if r.tests_total is not None else "–"
        body.append(
            "<tr>" + f'<td data-v="{html_text(r.task_id)}"><a href="#{html_text(_anchor(r))}">{html_text(r.task_id)}</a>'
            + trace_link(r, traces or set()) + "</td>"
            + _cell(r.trial) + _cell(r.difficulty) + _cell(r.outcome, r.outcome, False, f"o-{r.outcome}")
            + _cell(r.tests_passed, tests) + _cell(r.calls) + _cell(r.failed_calls)
            + _cell(r.faults.injected if r.faults else None,
                    f"{r.faults.injected} ({r.faults.recovered})" if r.faults else "–")
            + _cell(r.p50_latency_ms, _fmt(r.p50_latency_ms, 1)) + _cell(r.p95_latency_ms, _fmt(r.p95_latency_ms, 1))
            + _cell(r.scope_recall) + _cell(r.api_f1) + _cell(r.duration_s, _fmt(r.duration_s, 1)) + _cell(r.attempts)
            + _cell(_why(by_anchor.get(_anchor(r)), r), numeric=False, css="why") + "</tr>")
    return (f'<p class="meta">Click a column to sort. Sorted by: <span id="sort-state">task order</span></p>'
            f'<table id="battles"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>')


def _scope_html(d: BattleDetail) -> str:
    gold = set(d.gold_apis)
    if d.scope_apis is None:
        return f"<p>Scope: every tool ({html_text(d.scope_predictor or 'no predictor')}).</p>"
    scope = set(d.scope_apis)
    items = "".join(f'<li class="{"ok" if api in scope else "bad"}">{html_text(api)} '
                    f'{"✓ in scope" if api in scope else "✗ missing from scope"}</li>' for api in sorted(gold))
    extra = sorted(scope - gold)
    missed = (f'<p class="bad" id="missed-{html_text(_anchor(d.row))}">Scope miss: gold API(s) not in the scope: '
              f"{html_text(', '.join(d.row.missed_gold))}</p>") if d.row.missed_gold else ""
    refused = (f'<p class="bad">Refused by the enforced scope: {html_text(", ".join(d.row.refused_gold))} '
               f"(graded scope_error, not in TGC).</p>") if d.row.refused_gold else ""
    return (f"<p>Scope ({html_text(d.scope_predictor or '?')}): {len(scope)} APIs; gold: {len(gold)} APIs.</p>"
            f"{missed}{refused}<ul>{items}</ul>"
            f"<p class=\"muted\">In scope but not gold: {html_text(', '.join(extra) or 'none')}</p>")


def _call_result(c: CallView) -> str:
    """A call's result cell: ok, failed (the agent's own), or an injected fault (the test, not the agent's)."""
    if c.fault:
        return f'<td class="injected">injected fault: {html_text(c.fault)}</td>'
    css, text = ("ok", "ok") if c.success else ("bad", "failed") if c.success is False else ("muted", "?")
    return f'<td class="{css}">{text}</td>'


def _calls_html(d: BattleDetail) -> str:
    if not d.calls:
        return '<p class="empty">No call records archived.</p>'
    rows = "".join(
        f"<tr><td class=\"num\">{c.seq}</td><td>{html_text(c.tool)}</td><td><code>{html_text(c.arguments)}</code></td>"
        f"{_call_result(c)}"
        f"<td class=\"num\">{html_text(_fmt(c.duration_ms, 1))}</td><td>{html_text(c.error or '')}</td></tr>"
        for c in d.calls)
    more = (f"<p class=\"muted\">showing {len(d.calls)} of {d.calls_total} calls</p>"
            if d.calls_total > len(d.calls) else "")
    return (f"<p class=\"muted\">from {html_text(d.calls_source or '?')} (arguments redacted)</p>"
            f"<table class=\"calls\"><tr><th>#</th><th>tool</th><th>arguments</th><th>result</th><th>ms</th>"
            f"<th>error</th></tr>{rows}</table>{more}")


def _failures_html(d: BattleDetail) -> str:
    if not d.failures:
        return "<p class=\"muted\">No failed tests.</p>" if d.row.tests_total is not None else \
            "<p class=\"muted\">Not evaluated.</p>"
    return "".join(f"<div><p><b>{html_text(kind_words(f))}</b> ({html_text(f.label or 'test')}): "
                   f"{html_text(f.requirement)}</p>"
                   f"<pre>{html_text(f.trace or '')}</pre></div>" for f in d.failures)


def _why_html(d: BattleDetail) -> str:
    """The explanation's lines: the Blue's answer vs the expected one (local page), how it ended, what failed."""
    e = d.explanation
    if e is None:
        return ""
    parts = []
    if e.question:
        expected = f" · <b>expected:</b> {html_text(e.expected_answer)}" if e.expected_answer else ""
        parts.append(f"<p class=\"answer\"><b>Blue's answer:</b> {html_text(e.answer)}{expected}</p>")
    parts.append(f"<p><b>How the Blue ended:</b> {html_text(e.ending)}</p>")
    if e.failed:
        items = "".join(f"<li>{html_text(f.requirement)} <span class=\"muted\">({html_text(f.kind)})</span></li>"
                        for f in e.failed)
        parts.append(f"<p><b>Failed requirements:</b></p><ul class=\"failed\">{items}</ul>")
    if e.scope:
        parts.append(f"<p><b>Scope:</b> {html_text(e.scope + (f'; {e.recall}' if e.recall else ''))}</p>")
    return "".join(parts)


def _detail(d: BattleDetail) -> str:
    r = d.row
    instruction = d.info.instruction if d.info and d.info.instruction else "(instruction not available)"
    error = f"<p class=\"bad\">{html_text(d.error)}</p>" if d.error else ""
    why = d.explanation.headline if d.explanation else d.reason or ""
    return (f'<details id="{html_text(_anchor(r))}"><summary>{html_text(r.task_id)} · trial {r.trial} · '
            f'<span class="o-{html_text(r.outcome)}">{html_text(r.outcome)}</span> · {html_text(why)}</summary>'
            f"<p><b>Instruction:</b> {html_text(instruction)}</p>{error}{_why_html(d)}"
            f"<h3>Scope vs. gold APIs</h3>{_scope_html(d)}"
            f"<h3>Calls</h3>{_calls_html(d)}<h3>Failed tests</h3>{_failures_html(d)}"
            f"<p class=\"muted\">battle {html_text(r.battle_id)} · {html_text(r.result_path)}</p></details>")


def render_html(results: EvalResults, details: list[BattleDetail], traces: set[str] | None = None,
                profile: str | None = None) -> str:
    """The whole page as a string (`traces`: the rows' result paths that have a trace page beside them;
    `profile`: the relative link to the reliability profile this run belongs to)."""
    title = f"AppWorld eval: {results.manifest.config.blue} on {results.manifest.config.split or 'custom tasks'}"
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html_text(title)}</title>'
            f'<meta name="viewport" content="width=device-width,initial-scale=1"><style>{CSS}</style></head>'
            f'<body data-ready="0"><h1>{html_text(title)}</h1>'
            + (f'<p class="meta" id="profile-link">A run of <a href="{html_text(profile)}">a reliability profile</a>'
               '</p>' if profile else "") + f'{_headline(results)}'
            f'<h2>Charts</h2>{_charts(results, details)}{_stability_html(results.aggregates.stability)}'
            f'<h2>Battles</h2>{_table(results.rows, details, traces)}'
            f'<h2>Per-battle detail</h2>{"".join(_detail(d) for d in details)}'
            f"<script>{JS}</script></body></html>")


def render_report(out: Path, results: EvalResults) -> str:
    """Load the per-battle detail from `out` and render the page."""
    traces = {r.result_path for r in results.rows if (Path(out) / r.result_path).parent.joinpath(TRACE_PAGE).is_file()}
    profile = f"../{PROFILE_PAGE}" if (Path(out).parent / PROFILE_PAGE).is_file() else None
    return render_html(results, load_details(out, results.rows), traces, profile)
