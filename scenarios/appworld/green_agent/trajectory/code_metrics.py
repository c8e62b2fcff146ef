"""Code metrics of one battle: a pure function over the gateway's executions log (its copy in the run dir).

Definitions (`green_agent.models.trajectory.CodeMetrics`): an execution is one `execute` call that reached
the REPL; failed = its output was a traceback; timeouts, killed and sandbox faults (ours) come from the
record; API calls per execution = the calls its code made (each also a call record) / executions. Lines are read with the call
log reader's bounded line reader; a line that is not a valid `ExecutionRecord` of this battle is skipped.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from green_agent.models.trajectory import CodeMetrics
from kernel.call_log_reader import MAX_LINE_BYTES, bounded_lines
from kernel.execution_record import ExecutionRecord


def read_executions(path: Path, battle_id: str) -> list[ExecutionRecord]:
    """The valid records of `battle_id` in the executions log at `path` (none if it does not exist)."""
    if not path.is_file():
        return []
    records = []
    with open(path, "rb") as handle:
        for line in bounded_lines(handle, MAX_LINE_BYTES):
            if line is None or not line.strip():
                continue
            try:
                record = ExecutionRecord.model_validate_json(line)
            except (ValidationError, ValueError):
                continue
            if record.battle_id == battle_id:
                records.append(record)
    return records


def code_metrics(records: list[ExecutionRecord]) -> CodeMetrics:
    """The metrics of one battle's executions."""
    calls = sum(r.api_calls for r in records)
    faults = [r for r in records if r.fault]
    return CodeMetrics(
        sandbox_faults=len(faults),
        first_sandbox_fault=f"{faults[0].timestamp.isoformat()}: {faults[0].fault}" if faults else None,
        executions=len(records), failed_executions=sum(r.failed for r in records),
        timeouts=sum(r.timed_out for r in records), killed=sum(r.killed is not None for r in records),
        api_calls=calls, api_calls_per_execution=round(calls / len(records), 3) if records else None,
        max_api_calls_in_execution=max((r.api_calls for r in records), default=0),
        execution_s=round(sum(r.duration_ms for r in records) / 1000, 3),
        isolation=records[-1].isolation if records else None)


def sandbox_fault(metrics: CodeMetrics) -> str | None:
    """The battle's sandbox faults (ours), said as an infrastructure fault for the judge, or None."""
    if not metrics.sandbox_faults:
        return None
    return f"{metrics.sandbox_faults} execution(s) hit a fault of the code sandbox; first: {metrics.first_sandbox_fault}"
