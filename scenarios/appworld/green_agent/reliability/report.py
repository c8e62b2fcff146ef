"""The reliability block in words: terminal lines and an HTML section (`compare`), and the profile's terminal lines
(`reliability`).

Renders a `Reliability` (`green_agent.models.reliability`) or a `ReliabilityProfile`; every text goes through
`html_text` on the page.
"""

from __future__ import annotations

from green_agent.models.eval_run import Interval
from green_agent.models.reliability import Reliability
from green_agent.models.reliability_profile import ReliabilityProfile
from green_agent.reliability.words import ci_text
from kernel.untrusted import html_text, terminal_text

MAX_TASKS_SHOWN = 10


def _ratio(value: float | None, interval: Interval | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" + (f" ({interval.level * 100:g}% CI {interval.low:.2f}-{interval.high:.2f})"
                             if interval else " (no interval)")


def _points(value: float | None) -> str:
    return f"{value:.1f}" if value is not None else "-"


def _rate(value: float | None) -> str:
    return f"{value * 100:.0f}%" if value is not None else "-"


def _tasks(ids: list[str]) -> str:
    more = f" and {len(ids) - MAX_TASKS_SHOWN} more" if len(ids) > MAX_TASKS_SHOWN else ""
    return ", ".join(ids[:MAX_TASKS_SHOWN]) + more


def reliability_lines(r: Reliability) -> list[str]:
    """The block for the terminal."""
    lines = [f"reliability under {r.faults.text()}",
             f"  TGC {_points(r.tgc_baseline)} without faults, {_points(r.tgc_faults)} with: "
             f"r_fault {_ratio(r.r_fault, r.r_fault_ci)}",
             f"  SGC {_points(r.sgc_baseline)} without, {_points(r.sgc_faults)} with: "
             f"r_fault(SGC) {_ratio(r.r_fault_sgc, r.r_fault_sgc_ci)}",
             f"  faults injected {r.faults_injected}, recovered {r.faults_recovered} (loud {_rate(r.recovery_loud)}, "
             f"silent {_rate(r.recovery_silent)})"
             + (f", {r.faults_undelivered} never reached the agent (not counted)" if r.faults_undelivered else "")]
    for kind, k in r.recovery_by_kind.items():
        lines.append(f"    {kind:<11} {'loud' if k.loud else 'silent':<7} injected {k.injected:>4}, recovered "
                     f"{k.recovered:>4} ({_rate(k.rate)})")
    if r.lost_tasks:
        lines.append(f"  passed without faults, failed with them ({len(r.lost_tasks)}): {_tasks(r.lost_tasks)}")
    if r.r_fault_ci:
        lines.append(f"  interval: {r.r_fault_ci.method}")
    lines.append(f"  {r.message}")
    return lines


def reliability_html(r: Reliability) -> str:
    """The block as a page section (`id="reliability"`)."""
    kinds = "".join(f'<tr><td>{html_text(kind)}</td><td>{"loud" if k.loud else "silent"}</td>'
                    f'<td class="num">{k.injected}</td><td class="num">{k.recovered}</td>'
                    f'<td class="num">{html_text(_rate(k.rate))}</td></tr>' for kind, k in r.recovery_by_kind.items())
    lost = (f'<p id="lost-tasks">passed without faults, failed with them: {html_text(_tasks(r.lost_tasks))}</p>'
            if r.lost_tasks else "")
    return (f'<section id="reliability"><h2>Reliability under faults</h2>'
            f'<p class="meta">{html_text(r.faults.text())}</p><p class="verdict">{html_text(r.message)}</p>'
            '<table id="r-fault"><tr><th></th><th>without faults</th><th>with faults</th><th>r_fault</th></tr>'
            f'<tr><td>TGC</td><td class="num">{_points(r.tgc_baseline)}</td><td class="num">{_points(r.tgc_faults)}'
            f'</td><td class="num">{html_text(_ratio(r.r_fault, r.r_fault_ci))}</td></tr>'
            f'<tr><td>SGC</td><td class="num">{_points(r.sgc_baseline)}</td><td class="num">{_points(r.sgc_faults)}'
            f'</td><td class="num">{html_text(_ratio(r.r_fault_sgc, r.r_fault_sgc_ci))}</td></tr></table>'
            f'<p class="meta">interval: {html_text(r.r_fault_ci.method if r.r_fault_ci else r.r_fault_note or "none")}'
            '</p><table id="recovery"><tr><th>kind</th><th></th><th>injected</th><th>recovered</th><th>rate</th></tr>'
            f"{kinds}</table>{lost}</section>")


def profile_lines(p: ReliabilityProfile) -> list[str]:
    """The profile for the terminal: the summary, one line per axis, the curve's points, the lost tasks."""
    lines = [p.message, "profile:"]
    for a in p.axes:
        value = f"{a.value:.2f}" if a.value is not None else "-"
        lines.append(f"  {a.axis:<28} {value:>5}  ({ci_text(a.ci)})  {a.sentence}")
    if p.consistency is not None:
        c = p.consistency
        lines.append("  pass^k: " + ", ".join(f"pass^{k} {f.value:.2f}" if f.value is not None else f"pass^{k} -"
                                              for k, f in c.pass_hat_k.items()))
    if p.curve:
        lines.append("curve (fault rate: r_fault [interval]):")
        lines += [f"  {pt.rate:g}: {pt.ratio:.2f}" + (f" [{pt.low:.2f}, {pt.high:.2f}]" if pt.low is not None
                                                       and pt.high is not None else "")
                  if pt.ratio is not None else f"  {pt.rate:g}: -" for pt in p.curve]
    for t in p.lost[:MAX_TASKS_SHOWN]:
        lines.append(f"  lost {t.arm} {terminal_text(t.task_id)} trial {t.trial}: {terminal_text(t.cause)}")
    if len(p.lost) > MAX_TASKS_SHOWN:
        lines.append(f"  ... and {len(p.lost) - MAX_TASKS_SHOWN} more lost battle(s): see reliability.html")
    return lines
