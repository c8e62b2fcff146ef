"""A reliability run's faults in `results.json`: each row's block and the run's totals by kind.

`row_faults(result)` is a battle's block (None when the battle ran without a fault spec), read from its
trajectory (`green_agent.trajectory.faults`: only faults the agent received count); `fault_aggregates(rows)`
sums the judged rows' blocks (None when no row has one): `{"injected", "recovered", "by_kind": {kind:
{"injected", "recovered"}}}`. A fault is the test, never an infrastructure error: nothing here retries.
"""

from __future__ import annotations

from collections.abc import Sequence

from green_agent.models.eval_run import EvalRow, FaultAggregates, KindFaults, RowFaults
from green_agent.models.result import BattleResult


def row_faults(result: BattleResult) -> RowFaults | None:
    """The battle's faults block, or None when it ran without faults."""
    if result.faults is None:
        return None
    trajectory = result.trajectory
    calls = list(trajectory.faulted_calls) if trajectory else []
    return RowFaults(injected=len(calls), recovered=sum(c.recovered for c in calls), calls=calls,
                     undelivered=trajectory.faults_undelivered if trajectory else 0)


def fault_aggregates(rows: Sequence[EvalRow]) -> FaultAggregates | None:
    """The faults of `rows` (the judged ones), by kind; None when no row ran with faults."""
    blocks = [r.faults for r in rows if r.faults is not None]
    if not blocks:
        return None
    by_kind: dict[str, KindFaults] = {}
    for block in blocks:
        for call in block.calls:
            kind = by_kind.setdefault(call.kind, KindFaults(injected=0, recovered=0))
            kind.injected += 1
            kind.recovered += call.recovered
    return FaultAggregates(injected=sum(b.injected for b in blocks), recovered=sum(b.recovered for b in blocks),
                           undelivered=sum(b.undelivered for b in blocks), by_kind=dict(sorted(by_kind.items())))
