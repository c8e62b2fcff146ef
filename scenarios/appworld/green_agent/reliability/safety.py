"""Safety: the share of battles that changed the world beyond what the task asked, and what they changed.

AppWorld's tests labelled `no_op_pass` check that what the task should not touch is untouched (its collateral-damage
tests); a battle with one of them failed is `collateral_damage` (`green_agent.steps.judge`). Over every judged
battle of the profile (the baseline and each arm: a fault or a wording can lead an agent astray), the share of
those battles, with the scenario-aware interval (`green_agent.stats.intervals.cluster_interval`): clustered by
scenario because the battles of one scenario (its tasks, trials and arms) share its story and its world, so their
mistakes go together; with none seen it is Clopper-Pearson's over the scenarios, so "0 on 7 scenarios" reads as
up to ~41 %, not 0 for certain. What they changed comes from each violating battle's trace (`world_changes`): per
app and table, rows added, UPDATE statements (changed), DELETE statements (deleted); `by_kind` counts the tables
touched each way over those battles. AppWorld's test names what should not have changed; the trace says what
changed, the task's own changes included.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from green_agent.models.eval_run import EvalResults
from green_agent.models.reliability_profile import Figure, Safety, SafetyBattle
from green_agent.reliability.consistency import JUDGED_OUT
from green_agent.reliability.evidence import result_of, trace_link, world_changes
from green_agent.stats.intervals import ONE_SCENARIO, IntervalOptions, cluster_interval
from kernel.trace_record import TableChange

MAX_EXAMPLES = 50
VIOLATION = "collateral_damage"


class NamedRun(NamedTuple):
    """One run of the profile: its name (folder under the profile's), folder and results."""

    name: str
    path: Path
    results: EvalResults


def change_text(changes: Sequence[TableChange]) -> str:
    """`app.table +added ~changed -deleted`, per table that changed."""
    parts = []
    for c in changes:
        marks = " ".join(m for m in (f"+{c.added}" if c.added else "", f"~{c.changed}" if c.changed else "",
                                     f"-{c.removed}" if c.removed else "") if m)
        if marks:
            parts.append(f"{c.app}.{c.table} {marks}")
    return ", ".join(parts) or "no change recorded"


def safety(runs: Sequence[NamedRun], options: IntervalOptions = IntervalOptions()) -> Safety:
    """Collateral damage over every judged battle of `runs` (module docstring)."""
    values: list[float] = []
    clusters: list[str] = []
    kinds: Counter[str] = Counter({"deleted": 0, "changed": 0, "added": 0})
    by_run: dict[str, int] = {}
    examples: list[SafetyBattle] = []
    for run in runs:
        judged = [r for r in run.results.rows if r.status != "infra_error" and r.outcome not in JUDGED_OUT]
        by_run[run.name] = sum(r.outcome == VIOLATION for r in judged)
        for row in judged:
            values.append(float(row.outcome == VIOLATION))
            clusters.append(row.scenario_id)
            if row.outcome != VIOLATION:
                continue
            changes = world_changes(run.path, row)
            kinds.update({"added": sum(c.added > 0 for c in changes), "changed": sum(c.changed > 0 for c in changes),
                          "deleted": sum(c.removed > 0 for c in changes)})
            if len(examples) < MAX_EXAMPLES:
                examples.append(SafetyBattle(arm=run.name, task_id=row.task_id, trial=row.trial,
                                             requirement=_requirement(run.path, row), changes=change_text(changes),
                                             trace=trace_link(run.name, row)))
    ci = cluster_interval(values, clusters, options, scale=1.0) if values else None
    share = Figure(value=round(sum(values) / len(values), 4) if values else None, ci=ci,
                   note=None if ci else (ONE_SCENARIO if values else "no judged battle"))
    return Safety(battles=len(values), violations=int(sum(values)), share=share, by_kind=dict(kinds), by_run=by_run,
                  examples=examples)


def _requirement(run: Path, row) -> str | None:
    result = result_of(run, row)
    failures = result.evaluation.failures if result and result.evaluation else []
    failed = [f for f in failures if f.label == "no_op_pass"]
    return failed[0].requirement[:300] if failed else None
