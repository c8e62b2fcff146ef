"""The gateway's part of the battle trace: each call and each execution, as the agent saw it.

`GatewayTrace(call_log)` appends to the trace log beside the call log (`kernel.trace_log.trace_log_path`),
shared by every battle of the gateway like the call log; the Green gathers a battle's records into its
battle folder at archive time (`green_agent.trace.gather`). One `tool_call` record per call record that
names a battle (same `seq`), with the arguments and the exact result text returned; one `execution` record
per execution of code mode, with the code and the exact output. Refusals that name no battle (a wrong
token, no battle running) are not traced: nothing ties them to a battle.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from kernel.call_record import CallRecord
from kernel.trace_log import trace_log_path, writer_for
from kernel.trace_record import TraceRecord


def result_text(payload: dict[str, Any], is_error: bool) -> str:
    """The text the gateway returns for a call's payload (as `Gateway._result` renders it)."""
    if is_error:
        return str(payload["response"]["message"])
    return json.dumps(payload, ensure_ascii=False, default=str)


class GatewayTrace:
    """Appends the gateway's trace records (never raises)."""

    def __init__(self, call_log: Path) -> None:
        self.writer = writer_for(trace_log_path(Path(call_log)))

    def call(self, record: CallRecord, result: str | None) -> None:
        """One call record of a battle, with the result text the agent got."""
        if record.battle_id is None:
            return
        self.writer.append(TraceRecord(
            at=record.timestamp, battle_id=record.battle_id, kind="tool_call", source="gateway",
            tool=record.tool_name, arguments=record.arguments, result=result, ok=record.success,
            status_code=record.status_code, seq=record.seq, error=record.error, in_scope=record.in_scope,
            duration_ms=record.duration_ms, fault=record.fault.kind if record.fault else None,
            call_key=record.call_key))

    def execution(self, battle_id: str, started: datetime, code: str, output: str, *, failed: bool,
                  timed_out: bool, killed: str | None, api_calls: int, duration_ms: float) -> None:
        """One execution of code mode: its code and the exact output the agent saw."""
        self.writer.append(TraceRecord(
            at=started, battle_id=battle_id, kind="execution", source="gateway", text=code, result=output,
            ok=not failed, timed_out=timed_out, killed=killed, api_calls=api_calls, duration_ms=duration_ms))
