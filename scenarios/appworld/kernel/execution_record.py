"""One line of the gateway's executions log: one `execute` of a code-mode battle (docs/code-mode.md).

The gateway appends one `ExecutionRecord` per execution to `executions_log_path(<call log>)`, beside the
call log (whose records stay the calls themselves, one per `apis` call); the Green copies a battle's
records into its run directory and derives the code metrics from them (`green_agent.trajectory.code_metrics`).
The code itself is never logged, only its size.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field


class ExecutionRecord(BaseModel):
    """One execution of a code-mode battle."""

    schema_version: Literal[1] = Field(default=1, description="Record format version.")
    timestamp: datetime = Field(description="When the execution started (UTC).")
    battle_id: str = Field(description="Its battle.")
    task_id: str | None = Field(default=None, description="Its task.")
    code_chars: int = Field(ge=0, description="Length of the code (the code itself is not logged).")
    api_calls: int = Field(ge=0, description="apis calls it made (each also in the call log).")
    failed: bool = Field(description="Its output was a traceback ('Execution failed.').")
    timed_out: bool = Field(description="It hit the execution time limit.")
    killed: str | None = Field(default=None, description=(
        "Why its sandbox was ended during it, for a limit its code is known to have hit (the agent's), if it was."))
    fault: str | None = Field(default=None, description=(
        "Why its sandbox failed on our side (not ready in time, or died with no sign of a limit), if it did: the "
        "battle is then not scored."))
    duration_ms: float = Field(ge=0, description="Its wall time.")
    isolation: str = Field(description="The isolation it ran under.")


def executions_log_path(call_log: Path) -> Path:
    """The executions log beside a call log (`calls.jsonl` -> `calls.executions.jsonl`)."""
    return call_log.with_name(call_log.stem + ".executions.jsonl")
