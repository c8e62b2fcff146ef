"""One line of a battle's trace (`trace.jsonl`): the battle's story, written by whichever part sees each event.

The trace is one record type for every reader (the battle page, `appworld-green trace`, the Inspect export,
the run report). Who writes what (docs/trace.md):
- the Green: the task message it sent (`task_message`), the world's start (`world_start`, private: the change
  log's length per app, not shown), the Blue's A2A reply (`agent_reply`), the end (`end`), the verdict
  (`verdict`, each AppWorld test as its requirement in plain words and whether it passed, never its internals)
  and what the agent changed in the world (`world_changes`, rows per app and table);
- the gateway: each tool call, or each `apis` call of code mode (`tool_call`, linked to the call log by
  `seq`), with the arguments and the exact result returned; each execution (`execution`: the code and the
  exact output the agent saw, duration, timeout, kill);
- the in-band bridge: each message the purple sent (`agent_message`) and each we sent back (`green_message`).
Every record is bounded and redacted by `kernel.trace_log` before it is written; `cut` marks where a trace
reached its size cap.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from kernel.paraphrase_set import ParaphraseChoice

TRACE_SCHEMA_VERSION = 1
TRACE_FILE = "trace.jsonl"

TraceKind = Literal["task_message", "world_start", "agent_message", "green_message", "tool_call", "execution",
                    "agent_reply", "end", "verdict", "world_changes", "cut"]
TraceSource = Literal["green", "gateway", "bridge"]


class VerdictTest(BaseModel):
    """One AppWorld test of the verdict, in plain words."""

    requirement: str = Field(description="What the test checks (its description, never its code or expected values).")
    passed: bool = Field(description="The test passed.")


class TableChange(BaseModel):
    """Rows the agent changed in one table of one app's database (from AppWorld's change log)."""

    app: str = Field(description="The app (its database).")
    table: str = Field(description="The table.")
    added: int = Field(default=0, ge=0, description="Rows inserted.")
    changed: int = Field(default=0, ge=0, description="UPDATE statements run (each may change several rows).")
    removed: int = Field(default=0, ge=0, description="DELETE statements run (each may remove several rows).")


class TraceRecord(BaseModel):
    """One event of a battle (the fields a kind does not use stay None)."""

    schema_version: Literal[1] = Field(default=TRACE_SCHEMA_VERSION, description="Record format version.")
    at: datetime = Field(description="When the event happened (UTC); readers order by it.")
    battle_id: str = Field(description="The battle.")
    kind: TraceKind = Field(description="What happened (see the module docstring).")
    source: TraceSource = Field(description="The part that saw it.")
    text: str | None = Field(default=None, description=(
        "The message text (task message, agent or Green message, the Blue's reply), or an execution's code."))
    tool: str | None = Field(default=None, description="tool_call: the tool, `<app>__<api>`.")
    arguments: dict[str, Any] | None = Field(default=None, description=(
        "tool_call: its arguments, credentials redacted; task_message: the tools it named."))
    result: str | None = Field(default=None, description=(
        "tool_call: the exact result text returned to the agent; execution: the exact output it saw."))
    ok: bool | None = Field(default=None, description=(
        "tool_call: the API answered 2xx in scope; execution: no traceback."))
    status_code: int | None = Field(default=None, description="tool_call: the APIs server's HTTP status.")
    seq: int | None = Field(default=None, description=(
        "tool_call: the call log record's `seq` (numbers every call of its gateway process: for debugging; views "
        "number a battle's calls 1, 2, ... instead)."))
    error: str | None = Field(default=None, description="tool_call: the error (an API error, or why it was refused).")
    in_scope: bool | None = Field(default=None, description="tool_call: False if outside the battle's scope.")
    call_key: str | None = Field(default=None, description=(
        "tool_call: the call's identity (`kernel.call_record.CallRecord.call_key`): a redo of a faulted call has the "
        "same key, so a reader marks the fault recovered."))
    fault: str | None = Field(default=None, description=(
        "tool_call: the kind of fault the gateway injected instead of forwarding it (a reliability run), not an "
        "error of the agent's."))
    duration_ms: float | None = Field(default=None, ge=0, description="tool_call, execution: wall time.")
    timed_out: bool | None = Field(default=None, description="execution: it hit its time limit.")
    killed: str | None = Field(default=None, description="execution: why its sandbox was ended during it.")
    api_calls: int | None = Field(default=None, ge=0, description="execution: its apis calls (each a tool_call).")
    usage: dict[str, float] | None = Field(default=None, description="agent_message: token usage the agent reported.")
    cost_usd: float | None = Field(default=None, description="agent_message, end: cost reported, when known.")
    ended_by: str | None = Field(default=None, description="end: how the battle ended (completed, deadline, ...).")
    winner: str | None = Field(default=None, description="verdict: blue_agent | green_agent | None (a draw).")
    outcome: str | None = Field(default=None, description="verdict: the graded outcome.")
    tests: list[VerdictTest] | None = Field(default=None, description="verdict: each AppWorld test.")
    changes: list[TableChange] | None = Field(default=None, description="world_changes: per app and table.")
    counts: dict[str, int] | None = Field(default=None, description="world_start: change-log lines per app.")
    note: str | None = Field(default=None, description="A plain-words note (the end's reason, where a trace was cut).")
    paraphrase: ParaphraseChoice | None = Field(default=None, description=(
        "task_message: the paraphrase of the task its text carries instead of the instruction (a paraphrase arm)."))
