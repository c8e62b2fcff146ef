"""Trajectory metrics the Green observes itself, from the MCP gateway's JSONL call log.

`analyze_log` reads the log once, keeps only the records of the requested battle and/or task
(`reader`), folds them into O(#tools + #APIs) state (`accumulator`), and scores API selection
against gold (`api_selection`) and pagination completeness (`pagination`). Every metric is
defined in `metrics` (and in docs/trajectory.md). A missing log gives zero-call metrics
with `log_found=False`; malformed lines are counted and skipped.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path

from kernel.call_record import CallRecord
from green_agent.models.trajectory import TrajectoryMetrics
from green_agent.trajectory.accumulator import TrajectoryAccumulator
from green_agent.trajectory.api_selection import score_selection
from kernel.call_log_reader import CallLogReader, ReadStats

__all__ = ["analyze_log", "analyze_records", "CallLogReader", "TrajectoryMetrics"]


def analyze_log(path: str | Path, battle_id: str | None = None, task_id: str | None = None,
                gold_apis: Collection[str] | None = None, scope: Collection[str] | None = None,
                paginated_apis: Collection[str] | None = None) -> TrajectoryMetrics:
    """Metrics of one battle/task from the call log at `path`, in one streaming pass.

    Args:
        path: The gateway's JSONL call log (a missing file means zero calls).
        battle_id: Only records of this battle (None: every battle, seed-shape records included).
        task_id: Only records of this task (None: every task).
        gold_apis: The task's gold required APIs (`app.api`); None leaves selection scores null.
        scope: The predicted scope given to Blue (`app.api`); None leaves scope_recall null.
        paginated_apis: APIs with a `page_index` parameter; None infers them from the arguments.

    Raises:
        BadInputError: `path` is a directory or cannot be read.
    """
    reader = CallLogReader(path, battle_id=battle_id, task_id=task_id)
    return analyze_records(reader, log_path=str(path), stats=reader.stats, battle_id=battle_id, task_id=task_id,
                           gold_apis=gold_apis, scope=scope, paginated_apis=paginated_apis)


def analyze_records(records: Iterable[CallRecord], *, log_path: str = "", stats: ReadStats | None = None,
                    battle_id: str | None = None, task_id: str | None = None,
                    gold_apis: Collection[str] | None = None, scope: Collection[str] | None = None,
                    paginated_apis: Collection[str] | None = None) -> TrajectoryMetrics:
    """Metrics of already-selected records (in call order); `stats` is read after iterating."""
    accumulator = TrajectoryAccumulator(paginated_apis)
    for record in records:
        accumulator.add(record)
    stats = stats if stats is not None else ReadStats(log_found=True)
    pagination = accumulator.pagination.report()
    selection = score_selection(accumulator.called_ok, gold_apis, scope)
    return TrajectoryMetrics(
        log_path=log_path, log_found=stats.log_found, battle_id=battle_id, task_id=task_id,
        lines_scanned=stats.lines_scanned, malformed_lines=stats.malformed_lines,
        **accumulator.summary(),
        pagination=pagination,
        pagination_complete_apis=sorted(a for a, r in pagination.items() if r.status == "complete"),
        pagination_incomplete_apis=sorted(a for a, r in pagination.items() if r.status == "incomplete"),
        **selection._asdict(),
    )

