"""One line of the MCP gateway's call log (`AGENTBEATS_MCP_LOG_PATH`, JSONL).

The gateway writes one `CallRecord` per tool call; the trajectory analyzer reads them back.
It is a superset of the seed's record shape (`timestamp, tool_name, arguments, result, success,
error, duration_ms`), so the seed's analysis still reads it. `result` is never written: responses
can hold personal data, so the log keeps only the count of returned items.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from kernel.fault_spec import FaultKind

CALL_RECORD_SCHEMA_VERSION = 1


class InjectedFault(BaseModel):
    """A fault the gateway injected on purpose (a reliability run): the call was answered by it, never forwarded."""

    kind: FaultKind = Field(description="The fault's kind (`kernel.fault_spec`).")
    position: int = Field(ge=1, description="The call's position among its battle's faultable calls (from 1).")
    delivered: str | None = Field(default=None, description=(
        "What the agent received: the tool's result text, or the message of the exception its code raised (a 200: "
        "the text it got). None: the fault never reached the agent (its battle ended while it waited), not counted."))
    silent: bool = Field(default=False, description=(
        "The agent was not told: the answer arrived as a success (an `empty` page; a `malformed` answer in tools "
        "mode). Loud otherwise (an error, or an exception in its code)."))
    enforced: bool = Field(default=False, description=(
        "Not a planned fault: a call of the same API within a 429's retry-after, answered 429 again (tools mode); "
        "`position` is the planned 429's."))
    upstream_status: int | None = Field(default=None, description=(
        "`lost_response`: the call WAS forwarded and changed the world; the status AppWorld answered (the agent got "
        "a 504). None for every other kind (never forwarded)."))


class CallRecord(BaseModel):
    """A single tool call observed by the gateway."""

    schema_version: Literal[1] = Field(default=CALL_RECORD_SCHEMA_VERSION, description="Record format version.")
    timestamp: datetime = Field(description="When the call started, ISO 8601 UTC.")
    battle_id: str | None = Field(default=None, description="Battle the call belongs to (None: no scope set).")
    task_id: str | None = Field(default=None, description="AppWorld task id active on the slot.")
    tool_name: str = Field(description="MCP tool name, `<app>__<api>`.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Call arguments, credentials redacted.")
    success: bool = Field(description="True iff the API answered 2xx and the call was in scope.")
    error: str | None = Field(default=None, description="Error message (API error body or gateway refusal).")
    status_code: int | None = Field(default=None, description="HTTP status of the APIs server; None if not forwarded.")
    duration_ms: float = Field(ge=0, description="Wall time of the call inside the gateway.")
    in_scope: bool = Field(default=True, description="False if the tool was outside the battle's scope (refused).")
    result_items: int | None = Field(default=None, description="Length of the response if it was a list, else None.")
    seq: int = Field(default=0, ge=0, description="Per-gateway-process call counter, for ordering ties.")
    refused: str | None = Field(default=None, description=(
        "Why the call was refused before it reached the APIs server (no_battle, wrong_token, token_required, "
        "episode_over, battle_ended, too_many_calls): it is not attributed to any battle, so battle_id is None, "
        "and its arguments are not kept (only their size)."))
    arguments_bytes: int | None = Field(default=None, ge=0, description=(
        "Size of the arguments' JSON encoding, where they were not kept (refused or oversized calls)."))
    suppressed_refusals: int | None = Field(default=None, ge=0, description=(
        "Refused calls before this one that were counted but not logged (refusal records are rate-limited)."))
    upstream_fault: str | None = Field(default=None, description=(
        "An infrastructure fault of the APIs server that reached the caller (unreachable, timed out, or a 5xx "
        "while the server was not answering); None for answers, including API errors caused by the arguments."))
    call_key: str | None = Field(default=None, description=(
        "The call's identity: a keyed hash (HMAC under a key the gateway never writes) of its API and the arguments "
        "it forwards, secrets compared by value, so a repeat of the same call has the same key and the key says "
        "nothing of the values. None for a call refused before its arguments were checked."))
    fault: InjectedFault | None = Field(default=None, description=(
        "Set when the gateway answered the call with a planned fault instead of forwarding it (a reliability run): "
        "neither ours nor the agent's, never retried; `status_code` is the injected status."))
