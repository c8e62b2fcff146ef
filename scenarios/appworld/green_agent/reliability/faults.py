"""A reliability run's faults in `results.json`: each row's block and the run's totals by kind.

`row_faults(result)` is a battle's block (None when the battle ran without a fault spec), read from its
trajectory (`green_agent.trajectory.faults`: only faults the agent received count; recovered means the same call
redone); `fault_aggregates(rows)` sums the judged rows' blocks (None when no row has one): injected, recovered,
undelivered and the 429s answered again within their retry-after, by kind and by loud or silent (what the agent
received). A fault is the test, never an infrastructure error: nothing here retries.
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
                     undelivered=trajectory.faults_undelivered if trajectory else 0,
                     retry_after_ignored=trajectory.faults_retry_after_ignored if trajectory else 0,
                     retries_after_fault=trajectory.retries_after_fault if trajectory else 0)


def fault_aggregates(rows: Sequence[EvalRow]) -> FaultAggregates | None:
    """The faults of `rows` (the judged ones), by kind and by loud or silent; None when no row ran with faults."""
    blocks = [r.faults for r in rows if r.faults is not None]
    if not blocks:
        return None
    by_kind: dict[str, KindFaults] = {}
    heard = {True: KindFaults(injected=0, recovered=0), False: KindFaults(injected=0, recovered=0)}
    for block in blocks:
        for call in block.calls:
            for totals in (by_kind.setdefault(call.kind, KindFaults(injected=0, recovered=0)), heard[call.silent]):
                totals.injected += 1
                totals.recovered += call.recovered
                totals.silent += call.silent
    return FaultAggregates(injected=sum(b.injected for b in blocks), recovered=sum(b.recovered for b in blocks),
                           undelivered=sum(b.undelivered for b in blocks),
                           retry_after_ignored=sum(b.retry_after_ignored for b in blocks),
                           by_kind=dict(sorted(by_kind.items())), loud=heard[False], silent=heard[True])
