"""The profile in words: one line per axis (figure, interval, a sentence read in seconds) and a two-sentence summary.

Pure functions of a `ReliabilityProfile`; the terminal and reliability.html both print these lines. A sentence
states what the interval allows, so a figure of 1.00 whose interval reaches 0.59 reads as "no loss seen", never as
"certainly robust".
"""

from __future__ import annotations

from green_agent.models.eval_run import Interval
from green_agent.models.reliability_profile import Arm, AxisLine, Figure, ReliabilityProfile


def ci_text(ci: Interval | None) -> str:
    return f"{ci.level * 100:g}% CI {ci.low:.2f}-{ci.high:.2f}" if ci else "no interval"


def arm_axis(arm: Arm) -> str:
    return f"R_fault @ rate {arm.rate:g}" if arm.axis == "faults" else f"R_prompt {arm.strength}"


def arm_sentence(arm: Arm) -> str:
    """What the arm's ratio says."""
    what = f"faults at rate {arm.rate:g}" if arm.axis == "faults" else f"the {arm.strength} wording"
    if arm.ratio is None:
        return f"No ratio under {what}: {arm.note or 'nothing to compare'}."
    kept = f"{arm.ratio * 100:.0f}% of the baseline's TGC held under {what}"
    lost = f"{len(arm.lost_tasks)} task(s) lost, {len(arm.gained_tasks)} gained"
    ci = arm.ratio_ci
    if ci is None:
        return f"{kept}; {lost}."
    if ci.high < 1:
        return f"{kept}; {lost}: a real loss (the interval stays below 1)."
    if ci.low > 1:
        return f"{kept}; {lost}: it did better perturbed (the interval stays above 1)."
    if not arm.lost_tasks:
        return f"{kept}: no loss seen, yet the data still allow a ratio as low as {ci.low:.2f}."
    return f"{kept}; {lost}: not distinguishable from no effect on this many scenarios."


def _figure_line(axis: str, figure: Figure, sentence: str) -> AxisLine:
    return AxisLine(axis=axis, value=figure.value, ci=figure.ci, sentence=sentence)


def axis_lines(p: ReliabilityProfile) -> list[AxisLine]:
    """The profile's head: the arms, then consistency, then safety."""
    lines = [AxisLine(axis=arm_axis(a), value=a.ratio, ci=a.ratio_ci, sentence=arm_sentence(a)) for a in p.arms]
    c = p.consistency
    if c is not None:
        top = c.pass_hat_k[str(c.trials)]
        lines.append(_figure_line(f"pass^{c.trials}", top, (
            f"the chance that all {c.trials} trials of a task pass; pass^1 "
            f"{c.pass_hat_k['1'].value if c.pass_hat_k['1'].value is not None else '-'} is the plain success rate.")))
        lines.append(_figure_line("outcome consistency", c.outcome, (
            "(2p-1)^2 per task: 1 when every trial of a task agrees, 0 when it passes half the time.")))
        lines.append(_figure_line("trajectory consistency", c.trajectory, (
            "how alike a task's trials are in which APIs they call and in what order (1: the same calls).")))
        lines.append(_figure_line("resource consistency", c.resource, (
            "exp(-mean coefficient of variation) of calls, seconds and tokens per task (1: the same cost each time)"
            + "; " + ", ".join(f"{k} {v:.2f}" for k, v in c.resource_by.items() if v is not None) + ".")))
    s = p.safety
    kinds = ", ".join(f"{n} table(s) {k}" for k, n in s.by_kind.items() if n) or "nothing recorded"
    lines.append(_figure_line("safety (collateral damage)", s.share, (
        f"{s.violations} of {s.battles} battles changed what the task should not touch ({kinds})." if s.violations
        else f"no battle of {s.battles} changed what the task should not touch; the interval says how rare that is "
             "shown to be.")))
    return lines


def profile_message(p: ReliabilityProfile) -> str:
    """Two sentences: the baseline and the weakest arm."""
    base = f"TGC {p.tgc_baseline:.1f}" if p.tgc_baseline is not None else "no TGC"
    head = f"{p.blue} on {p.tasks} task(s) in {p.scenarios} scenario(s), {p.trials} trial(s): baseline {base}."
    rated = [a for a in p.arms if a.ratio is not None]
    if not rated:
        return head
    worst = min(rated, key=lambda a: a.ratio or 0)
    return f"{head} Weakest arm: {arm_axis(worst)} {worst.ratio:.2f} ({ci_text(worst.ratio_ci)})."
