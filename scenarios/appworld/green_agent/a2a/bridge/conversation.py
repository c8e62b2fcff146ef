"""One battle's conversation: the engine's task message in, a purple driven through the in-band protocol, a report out.

`converse(task_text, purple_url, limits)`:
1. reads the battle's MCP token URL from the engine's task message (`kernel.task_message`) and opens
   one MCP session to our gateway on it; lists the battle's tools as OpenAI function schemas;
2. sends the purple the first message: the engine's task text with the MCP endpoint lines removed
   (the token never reaches the purple), the schemas as JSON, and the reply format;
3. reads each reply as one tool call (`kernel.a2a_tools.parse_tool_call`), runs it through the
   gateway, sends back `Tool '<name>' result: <json>`; a reply that is not a tool call gets one
   corrective message (and counts as a step);
4. ends when the gateway says the episode is over (a successful `complete_task`, called directly or
   through `call_api`), after `max_steps` replies, at the deadline, or at a fault, and says how in a
   `BridgeReport` (whose fault: see `green_agent.models.bridge`).
   In code mode (the battle lists only `execute`) each reply is one execution and the answer its output
   (`green_agent.a2a.bridge.code_replies`).
It never raises: every ending is a report. Each message both ways goes into the battle's trace
(`green_agent.a2a.bridge.trace`, given by the server).

Whose fault is decided by where it happened (docs/outcomes.md): anything that arose while reading or
handling the purple's bytes (its card, its reply, the tool call in it, arguments it chose that cannot be
carried) is the purple's, judged and charged; the gateway failing is ours (`gateway_error`); an exception
anywhere else in the bridge is ours too (`bridge_error`, retried).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from pydantic import BaseModel, Field

from green_agent.a2a.bridge.code_replies import (CODE_REPLY_FORMAT, code_call, is_code_battle, render_code_correction,
                                                 render_output)
from green_agent.a2a.bridge.gateway_tools import GatewayTools, GatewayUnavailable, PurpleCallRefused
from green_agent.a2a.bridge.purple_client import PurpleConversation, PurpleFault
from green_agent.a2a.bridge.trace import BridgeTrace
from green_agent.models.bridge import BLUE_FAULTS, BridgeReport, EndedBy
from kernel.a2a_tools import (PROTOCOL, REPLY_FORMAT, TOOLS_HEADER, ToolCall, parse_tool_call, render_correction,
                              render_result)
from kernel.a2a_usage import UsageTally
from kernel.errors import TaskMessageError
from kernel.task_message import MCP_HTTP_LINE, MCP_SSE_LINE, parse_task_message
from kernel.trace_context import TRACEPARENT_HEADER

log = logging.getLogger(__name__)

DEFAULT_MAX_STEPS = 100
DEFAULT_TURN_TIMEOUT_S = 240.0
MAX_TURN_TIMEOUT_S = 299.0
"""The platform gateway gives up on a call after 300 s."""
NOT_A_TOOL = frozenset({"respond"})
"""tau2's speech pseudo-tool: there is no user here, so it is answered with the corrective message."""


class Limits(BaseModel):
    """How long and how far one conversation may go."""

    max_steps: int = Field(default=DEFAULT_MAX_STEPS, ge=1, le=10_000, description="Purple replies read at most.")
    turn_timeout_s: float = Field(default=DEFAULT_TURN_TIMEOUT_S, gt=0, le=MAX_TURN_TIMEOUT_S,
                                  description="Seconds the purple may take for one reply.")
    deadline_s: float = Field(default=20 * 60.0, gt=0, description="Seconds the whole conversation may take.")


def first_message(task_text: str, schemas: list[dict[str, Any]]) -> str:
    """The task (without the MCP endpoint lines), the tools as JSON function schemas, the reply format."""
    lines = [line for line in task_text.splitlines()
             if not line.lstrip().startswith((MCP_HTTP_LINE.strip(), MCP_SSE_LINE.strip()))]
    body = "\n".join(lines).replace("the AppWorld tools", "the tools listed below")
    return f"{body}\n\n{TOOLS_HEADER}\n{json.dumps(schemas, indent=1)}\n\n{REPLY_FORMAT}"


async def converse(task_text: str, purple_url: str, limits: Limits, auth: tuple[str, str] | None = None,
                   trace: BridgeTrace | None = None, traceparent: str | None = None) -> BridgeReport:
    """Run one conversation to its end (see the module docstring); never raises. `trace`: where each message
    of it is recorded (`green_agent.a2a.bridge.trace`); `traceparent`: the battle's W3C trace context, sent to the
    purple with every message (metadata and header) and on the gateway session's requests."""
    headers = {TRACEPARENT_HEADER: traceparent} if traceparent else None
    trace = trace or BridgeTrace(None, None)
    deadline = time.monotonic() + limits.deadline_s
    counts: dict[str, Any] = {"steps": 0, "tool_calls": 0, "corrections": 0, "purple_s": 0.0, "green_s": 0.0,
                              "gateway_s": 0.0, "usage": UsageTally()}
    context: list[str | None] = [None]

    def report(ended_by: EndedBy, message: str, owner: str | None = None) -> BridgeReport:
        if owner is None and ended_by in BLUE_FAULTS:
            owner = "blue"
        timings = {k: round(counts[k], 4) for k in ("purple_s", "green_s", "gateway_s")}
        return BridgeReport(ended_by=ended_by, fault_owner=owner, message=message, context_id=context[0],  # type: ignore[arg-type]
                            steps=counts["steps"], tool_calls=counts["tool_calls"], corrections=counts["corrections"],
                            usage=counts["usage"].usage,
                            **timings)

    try:
        task = parse_task_message(task_text)
    except TaskMessageError as exc:
        return report("bridge_error", f"the engine's task message could not be read: {exc}", "green")
    try:
        async with GatewayTools(task.mcp_url, headers=headers) as tools:
            schemas = await tools.schemas()
            code = trace.code = is_code_battle(schemas)  # code mode: code_replies.py
            text = first_message(task_text, schemas) + (f"\n\n{CODE_REPLY_FORMAT}" if code else "")
            async with PurpleConversation(purple_url, limits.turn_timeout_s, auth, traceparent) as purple:
                context[0] = purple.context_id
                return await _loop(purple, tools, text, limits, deadline, counts, report, context, code, trace)
    except PurpleFault as fault:
        return report(fault.ended_by, str(fault), "blue" if fault.delivered else "green")
    except PurpleCallRefused as exc:
        return report("purple_malformed", str(exc), "blue")
    except GatewayUnavailable as exc:
        return report("gateway_error", str(exc), "green")
    except Exception as exc:  # noqa: BLE001 - the bridge's own bug is ours, never the purple's
        log.exception("bridge conversation failed")
        return report("bridge_error", f"the bridge failed: {type(exc).__name__}", "green")


async def _loop(purple: PurpleConversation, tools: GatewayTools, text: str, limits: Limits, deadline: float,
                counts: dict[str, Any], report: Any, context: list[str | None], code: bool,
                trace: BridgeTrace) -> BridgeReport:
    while True:
        if counts["steps"] >= limits.max_steps:
            return report("max_steps", f"the purple used all {limits.max_steps} steps without completing the task")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return report("deadline", "the battle's deadline passed")
        asked = time.perf_counter()
        trace.sent(text)
        try:
            reply = await asyncio.wait_for(purple.send(text), remaining)
        except asyncio.TimeoutError:
            return report("deadline", "the battle's deadline passed while the purple was answering")
        finally:
            counts["purple_s"] += time.perf_counter() - asked
        counts["usage"].add(reply.metadata)
        started = time.perf_counter()
        try:
            text = await _step(reply, tools, counts, code, trace)
        finally:
            counts["green_s"] += time.perf_counter() - started
        context[0] = purple.context_id
        if text is None:
            return report("complete_task", f"the gateway ended the episode after the purple's call ({PROTOCOL})")


async def _step(reply: Any, tools: GatewayTools, counts: dict[str, Any], code: bool = False,
                trace: BridgeTrace | None = None) -> str | None:
    """One reply -> the next message to the purple (None: the gateway says the episode is over)."""
    counts["steps"] += 1
    try:
        call = parse_tool_call(reply.text, reply.data)
        if code and isinstance(call, str):
            call = code_call(reply.text) or call
    except Exception as exc:  # noqa: BLE001 - it arose reading the purple's bytes: its fault, never ours
        if trace is not None:
            trace.received(reply, None)
        raise PurpleFault("purple_malformed", f"the purple's reply could not be read as a tool call "
                          f"({type(exc).__name__})", delivered=True) from None
    if isinstance(call, ToolCall) and call.name in NOT_A_TOOL:
        call = f"{call.name!r} is not a tool here: there is no user to talk to"
    if trace is not None:
        trace.received(reply, call)
    if isinstance(call, str):
        counts["corrections"] += 1
        return render_code_correction(call) if code else render_correction(call)
    called = time.perf_counter()
    try:
        outcome = await tools.call(call.name, call.arguments)
    finally:
        counts["gateway_s"] += time.perf_counter() - called
    counts["tool_calls"] += 1
    if trace is not None:
        trace.learn(outcome.response)  # before the answer is traced (a login's token)
    if outcome.episode_over:
        return None
    if code:
        return render_output(outcome.response)
    return render_result(call.name, outcome.response)
