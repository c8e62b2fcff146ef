"""Code metrics over execution records (`green_agent.trajectory.code_metrics`): definitions and a hostile log."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from green_agent.trajectory.code_metrics import code_metrics, read_executions
from kernel.execution_record import ExecutionRecord, executions_log_path


def record(battle: str, calls: int, *, failed: bool = False, timed_out: bool = False,
           killed: str | None = None) -> ExecutionRecord:
    return ExecutionRecord(timestamp=datetime.now(timezone.utc), battle_id=battle, code_chars=10, api_calls=calls,
                           failed=failed, timed_out=timed_out, killed=killed, duration_ms=500, isolation="bwrap")


def test_metrics_count_executions_failures_timeouts_and_calls() -> None:
    metrics = code_metrics([record("b", 3), record("b", 0, failed=True, timed_out=True),
                            record("b", 5, failed=True, killed="memory")])
    assert (metrics.executions, metrics.failed_executions, metrics.timeouts, metrics.killed) == (3, 2, 1, 1)
    assert (metrics.api_calls, metrics.api_calls_per_execution, metrics.max_api_calls_in_execution) == (8, 2.667, 5)
    assert metrics.execution_s == 1.5 and metrics.isolation == "bwrap"
    assert code_metrics([]).api_calls_per_execution is None


def test_the_reader_keeps_only_valid_records_of_the_battle(tmp_path: Path) -> None:
    path = executions_log_path(tmp_path / "calls.jsonl")
    assert path.name == "calls.executions.jsonl"
    lines = [record("b", 1).model_dump_json(), record("other", 9).model_dump_json(), "not json",
             '{"battle_id": "b"}', "x" * (2 << 20), record("b", 2).model_dump_json()]
    path.write_text("\n".join(lines) + "\n")
    assert [r.api_calls for r in read_executions(path, "b")] == [1, 2]
    assert read_executions(tmp_path / "missing.jsonl", "b") == []
