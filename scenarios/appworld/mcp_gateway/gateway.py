"""The gateway's core, free of transport: list the scoped tools, handle one call, log it.

Outcomes of a call (each logged as exactly one `CallRecord`):
- the call does not belong to the running battle (no battle, a wrong or revoked token, the plain
  URL where the battle needs its token), or no longer does (its episode is over after complete_task or
  the deadline, its battle ended while it was queued, or too many of its calls are in flight): MCP
  isError result, nothing forwarded, logged with `refused` set and only the size of the arguments, at a
  bounded rate (`ScopeController.authorize`, `admits`; `RefusalLogLimit`); with the battle id of the battle
  it belongs to (the running one whose token it holds, or an ended one: a late call, `battle_ended`), else none;
- code mode: an `apis` call inside the execution that completed the task still goes upstream (AppWorld's
  step is the execution); an `execute` after it is refused (`ScopeController.complete_in_execution`);
- API answered 2xx: result `{"response": <api json>}`, success true; the values it holds under credential
  keys (a login's access token, the supervisor's passwords) are registered as the battle's secrets before
  anything is written (`kernel.scrubber`), so the call log and the trace never keep them, even printed bare;
- API answered non-2xx: result `{"response": {"message": ..., "is_error": true}}` as DATA
  (MCP isError false, as upstream), success false, `status_code` set;
- a request over the forwarder's bounds (`mcp_gateway.request_limits`: its request line, head or body): not
  forwarded, answered as AppWorld's 422 for a bad argument (data, as above), naming the limit;
- APIs server unreachable / timed out (or 5xx and then silent): MCP isError result naming the server
  URL, logged with `upstream_fault` (an infrastructure fault, not the caller's doing); a call the server
  dropped or could not serve while it still answers its health probe is the caller's: MCP isError result,
  no `upstream_fault` (who failed: `mcp_gateway.forwarding`);
- unknown tool, tool outside an enforced scope, invalid or oversized (> 100 kB) arguments: MCP isError
  result, not forwarded (out-of-scope and unknown tools are logged with in_scope false; oversized
  arguments are logged as their size only, so one call can never write a line the analyzer skips).
- under an advised scope a tool outside the scope is served as usual and logged with in_scope false;
- a reliability run (the battle has a fault spec): a call the plan faults is answered here with the fault and never
  forwarded (`mcp_gateway.faults`), logged with `fault` (its kind, position, what the agent received, whether it
  was silent); but for `lost_response`, forwarded first and its answer replaced by a timeout (`upstream_status`
  in the record), and for a call within a delivered 429's retry-after (tools mode), answered 429 again
  (`enforced`);
- a paraphrase arm (the battle has a wording): `supervisor__show_active_task` answers it as the instruction
  (`mcp_gateway.wording`), in tools and code mode;
- every call whose tool and arguments passed the checks carries `call_key`, its identity for "the same call
  repeated" (`mcp_gateway.call_keys`);
  `call_api(app_name, api_name, arguments)` is handled as a direct call of `<app>__<api>` with
  `arguments`, and logged under that tool name.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from jsonschema import Draft202012Validator

from kernel.api_names import tool_name
from kernel.call_record import CallRecord, InjectedFault
from mcp_gateway.call_api import CALL_API_DEFINITION, CALL_API_TOOL, unwrap
from mcp_gateway.code.session import ApiAnswer, ApiCall
from mcp_gateway.code_mode import (EXECUTE_DEFINITION, EXECUTE_TOOL, MAX_CODE_BYTES, NOT_CODE_TOOL, CodeRunner,
                                   execute_result)
from kernel.call_log import CallLogWriter
from kernel.logged_arguments import bounded_arguments
from kernel.mcp_results import EPISODE_OVER_META
from mcp_gateway.call_keys import CallKeys
from mcp_gateway.faults.answers import FaultAnswer, fault_answer, is_silent
from mcp_gateway.faults.battles import BattleFaults, answered
from mcp_gateway.faults.plan import PlannedFault
from mcp_gateway.forwarding import ApiForwarder, ApiReply, ArgumentError
from mcp_gateway.models import BattleState, OutputType, RefusalReason
from kernel.redaction import redact, redact_text, secret_values
from kernel.scrubber import register_battle_secrets
from mcp_gateway.refusal_log import RefusalLogLimit
from mcp_gateway.scope import COMPLETE_TASK_TOOL, MAX_IN_FLIGHT, ScopeController
from mcp_gateway.tools import ToolSpec
from mcp_gateway.trace_hooks import GatewayTrace, result_text
from mcp_gateway.wording import reworded

_MAX_SCHEMA_ERRORS = 5
MAX_ARGUMENTS_BYTES = 100_000
"""Largest JSON encoding of one call's arguments; AppWorld's APIs take short fields (a note is a few kB)."""
MAX_LOGGED_ERROR = 2000
"""Characters of an error message a call record keeps."""
MAX_TOOL_NAME = 200
"""Tool names are logged cut to this length (an unknown name can be anything the caller sent)."""
MAX_REFUSED_TOOL_NAME = 80
"""A refused call's tool name is logged cut to this length (anyone can send one)."""
REFUSAL_MESSAGES: dict[str, str] = {
    "no_battle": "No battle is running on this gateway: every call is refused until the Green starts one.",
    "wrong_token": "This MCP URL does not belong to the running battle (its battle has ended, or the token is "
                   "wrong). Use the MCP endpoint of your current task message.",
    "token_required": "This battle is served only at the MCP endpoint of its task message; the plain /mcp and "
                      "/sse routes are closed for it.",
    "episode_over": "This battle's episode is over (the task was completed, or its time ran out): no more calls "
                    "are taken.",
    "battle_ended": "This call's battle has ended (it came late, or waited for its turn past the end): it was not "
                    "forwarded.",
    "too_many_calls": f"Too many calls of this battle are in flight at once (at most {MAX_IN_FLIGHT}); wait for "
                      "answers before sending more.",
}


class _Clock:
    """When a call started, and how long it has taken."""

    def __init__(self) -> None:
        self.at = datetime.now(timezone.utc)
        self._started = time.perf_counter()

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self._started) * 1000, 3)


class _BattleGate:
    """The forwarder's admission check for one call of one battle generation (`mcp_gateway.scope`)."""

    def __init__(self, scope: ScopeController, generation: int, closes_episode: bool, in_execution: bool,
                 next_seq: Callable[[], int]) -> None:
        self.scope, self.generation, self.closes_episode = scope, generation, closes_episode
        self.in_execution = in_execution
        self._next_seq = next_seq
        self.seq: int | None = None
        """The call's number, taken under the forwarder's lock: the order calls reached the world (`rejudge` replays
        in it), which the log's line order is not when an agent sends calls in parallel (they are logged after)."""

    def admit(self) -> str | None:
        return self.scope.admits(self.generation)

    def settled(self, reply: ApiReply) -> None:
        self.seq = self._next_seq()
        if not (self.closes_episode and reply.ok):
            return
        if self.in_execution:  # AppWorld's step is the execution: the episode ends when it does
            self.scope.complete_in_execution(self.generation)
        else:
            self.scope.close_episode(self.generation)


def arguments_size(arguments: dict[str, Any]) -> int:
    """Bytes of the arguments' JSON encoding (what is forwarded and logged)."""
    return len(json.dumps(arguments, ensure_ascii=False, default=str).encode("utf-8"))



class CallOutcome:
    """What one call produced: the MCP result and the facts the log keeps."""

    def __init__(self, payload: dict[str, Any], *, is_error: bool, success: bool, error: str | None = None,
                 status_code: int | None = None, in_scope: bool = True, result_items: int | None = None,
                 refused: RefusalReason | None = None, upstream_fault: str | None = None, body: Any = None,
                 fault: InjectedFault | None = None, raw_text: str | None = None) -> None:
        self.payload = payload
        self.body = body
        self.is_error = is_error
        self.success = success
        self.error = error
        self.status_code = status_code
        self.in_scope = in_scope
        self.result_items = result_items
        self.refused = refused
        self.upstream_fault = upstream_fault
        self.seq: int | None = None
        """The number the forwarder gave the call when it reached the world (`_BattleGate.seq`); None if it did not."""
        self.fault = fault
        self.raw_text = raw_text
        """A faulted call's answer that is not JSON (`malformed`): sent as is."""
        self.call_key: str | None = None
        """The call's identity (`CallKeys`): set once its tool and arguments were checked."""


class Gateway:
    """Tools of one world slot, their scope, forwarding and the call log."""

    def __init__(self, specs: dict[str, ToolSpec], forwarder: ApiForwarder, log: CallLogWriter,
                 output_type: OutputType = "both", code: CodeRunner | None = None) -> None:
        self.specs = specs
        self.code = code
        self.forwarder = forwarder
        self.log = log
        self.trace = GatewayTrace(log.path)
        self.output_type = output_type
        self.scope = ScopeController(specs)
        self._refusal_log = RefusalLogLimit()
        self._tools = {name: types.Tool(name=name, description=s.description, input_schema=s.input_schema)
                       for name, s in specs.items()}
        self._validators: dict[str, Draft202012Validator] = {}
        self.faults = BattleFaults()
        self.call_keys = CallKeys()

    def list_tools(self, token: str | None = None) -> list[types.Tool]:
        """Tools visible now to a caller holding `token` (all, or the active battle's scope; see
        `ScopeController`), in doc order; none for a caller that does not belong to the running battle."""
        if self.scope.authorize(token) is not None:
            return []
        if self.is_code_battle:
            return [EXECUTE_DEFINITION]
        visible = self.scope.visible_tools()
        listed = [tool for name, tool in self._tools.items() if name in visible]
        return listed + [CALL_API_DEFINITION] if self.scope.offers_call_api else listed

    @property
    def is_code_battle(self) -> bool:
        """The running battle acts through `execute` (code mode)."""
        return self.scope.battle is not None and self.scope.battle.interaction == "code"

    def input_schema(self, name: str) -> dict[str, Any] | None:
        if name == EXECUTE_TOOL:
            return EXECUTE_DEFINITION.input_schema
        if name == CALL_API_TOOL:
            return CALL_API_DEFINITION.input_schema
        spec = self.specs.get(name)
        return spec.input_schema if spec else None

    async def call_tool(self, name: str, arguments: dict[str, Any] | None,
                        token: str | None = None) -> types.CallToolResult:
        """Handle one tools/call presented with `token` (None: the plain URL) and append its record to the log."""
        started = _Clock()
        arguments = dict(arguments or {})
        refusal = self.scope.authorize(token)
        admitted = self.scope.begin_call() if refusal is None else refusal
        if isinstance(admitted, str):
            owner = self._owner(token, admitted)
            if owner is not None and admitted == "wrong_token":
                admitted = "battle_ended"  # a late call of the battle whose token it holds: that battle's record
            return _marked(self._refused(name, arguments_size(arguments), admitted, started, owner),
                           admitted in ("episode_over", "battle_ended"))
        battle = self.scope.battle
        assert battle is not None  # authorized: the running battle
        try:
            if battle.interaction == "code":
                result = await self._execute(name, arguments, battle, admitted, started)
            else:
                result = await self._battle_call(name, arguments, battle.battle_id, battle.task_id, admitted, started)
        finally:
            await self.scope.end_call(admitted)
        return _marked(result, self.scope.episode_is_over(admitted))

    async def _battle_call(self, name: str, arguments: dict[str, Any], battle_id: str, task_id: str | None,
                           generation: int, started: "_Clock") -> types.CallToolResult:
        """A call of the running battle (`generation`): resolve, check, forward if still admitted, log."""
        if name == CALL_API_TOOL and self.scope.offers_call_api:
            target = unwrap(arguments)
            if isinstance(target, str):
                return self._log_refusal(name, arguments, target, started, battle_id, task_id)
            name, arguments = target
        size = arguments_size(arguments)
        if size > MAX_ARGUMENTS_BYTES:  # refused before validation, forwarding or logging the content
            outcome = _refusal(f"Arguments of {name} are too large ({size} bytes; the limit is {MAX_ARGUMENTS_BYTES}). "
                               "Send less data per call.")
            kept: dict[str, Any] = {"omitted": f"{size} bytes"}
        else:
            outcome = await self._outcome(name, arguments, battle_id, generation)
            kept = arguments
        if outcome.refused is not None:  # its battle or episode ended while it was queued
            return self._refused(name, size, outcome.refused, started, (battle_id, task_id), outcome.fault)
        self._log_call(name, kept, size if kept is not arguments else None, outcome, started, battle_id, task_id)
        return self._result(outcome)

    def _log_call(self, name: str, kept: dict[str, Any], omitted_size: int | None, outcome: CallOutcome,
                  started: "_Clock", battle_id: str, task_id: str | None) -> None:
        register_battle_secrets(battle_id, secret_values(outcome.body))  # AppWorld issued them: scrubbed from now on
        secrets = secret_values(kept)
        logged = bounded_arguments(redact(kept))  # at most MAX_LOGGED_ARGUMENTS_BYTES of them (issue 39)
        record = CallRecord(
            timestamp=started.at, battle_id=battle_id, task_id=task_id, tool_name=name[:MAX_TOOL_NAME],
            arguments=logged.arguments, success=outcome.success, error=_cut(redact_text(outcome.error, secrets)),
            status_code=outcome.status_code, duration_ms=started.elapsed_ms(), in_scope=outcome.in_scope,
            result_items=outcome.result_items, seq=outcome.seq if outcome.seq is not None else self.log.next_seq(),
            upstream_fault=outcome.upstream_fault,
            arguments_bytes=omitted_size if omitted_size is not None else logged.total_bytes, fault=outcome.fault,
            call_key=outcome.call_key,
        )
        self.log.append(record)
        self.trace.call(record, outcome.fault.delivered if outcome.fault else result_text(outcome.payload,
                                                                                          outcome.is_error))

    async def _execute(self, name: str, arguments: dict[str, Any], battle: BattleState, generation: int,
                       started: "_Clock") -> types.CallToolResult:
        """`execute` of a code-mode battle: run the code in its REPL, each `apis` call relayed by `code_call`."""
        code = arguments.get("code")
        if name != EXECUTE_TOOL or not isinstance(code, str) or set(arguments) - {"code"}:
            message = NOT_CODE_TOOL if name != EXECUTE_TOOL else 'execute takes {"code": "<python source>"} only.'
            return self._log_refusal(name, arguments, message, started, battle.battle_id, battle.task_id)
        if len(code.encode("utf-8", "replace")) > MAX_CODE_BYTES:
            return self._result(_refusal(f"The code is too large (the limit is {MAX_CODE_BYTES} bytes)."))
        assert self.code is not None

        def relay(call: ApiCall) -> ApiAnswer:
            return anyio.from_thread.run(self.code_call, call, battle.battle_id, battle.task_id, generation)

        def may_run() -> bool:  # under the REPL's lock: no execution starts once another completed the task
            return not self.scope.completing(generation)

        self.scope.begin_execution(generation)
        try:
            outcome = await anyio.to_thread.run_sync(self.code.execute, battle, code, relay, may_run)
        finally:
            await self.scope.end_execution(generation)  # the one that completed the task ends the episode here
        if outcome is None:
            return self._result(_refusal(REFUSAL_MESSAGES["episode_over"], in_scope=False))
        return execute_result(outcome.output, self.scope.completion(battle.battle_id).completed)

    async def code_call(self, call: ApiCall, battle_id: str, task_id: str | None, generation: int) -> ApiAnswer:
        """One `apis` call of a code-mode battle: the tool path's checks, forwarding and log; the answer raises
        inside the code unless it is a 200 (as AppWorld's requester does)."""
        started = _Clock()
        name = tool_name(f"{call.app}.{call.api}")
        size = arguments_size(call.arguments)
        if size > MAX_ARGUMENTS_BYTES:
            outcome = _refusal(f"Arguments of {name} are too large ({size} bytes; the limit is {MAX_ARGUMENTS_BYTES}).")
            kept: dict[str, Any] = {"omitted": f"{size} bytes"}
        else:
            outcome = await self._outcome(name, call.arguments, battle_id, generation, code=True)
            kept = call.arguments
        if outcome.refused is not None:
            self._refused(name, size, outcome.refused, started, (battle_id, task_id), outcome.fault)
            return ApiAnswer(error=REFUSAL_MESSAGES[outcome.refused])
        self._log_call(name, kept, size if kept is not call.arguments else None, outcome, started, battle_id, task_id)
        if outcome.status_code is None or outcome.upstream_fault is not None:
            return ApiAnswer(error=outcome.error or outcome.payload["response"]["message"])
        return ApiAnswer(status_code=outcome.status_code, body=outcome.body, text=outcome.raw_text)

    def _owner(self, token: str | None, reason: RefusalReason) -> tuple[str, str | None] | None:
        """The battle a refused call belongs to: the running one (its token matched: its episode is over, or too many
        of its calls are in flight), a recently ended one whose token it holds, or None (nobody's)."""
        battle = self.scope.battle
        if reason in ("episode_over", "too_many_calls") and battle is not None:
            return battle.battle_id, battle.task_id
        if reason == "wrong_token":
            return self.scope.ended_battle_of(token)
        return None

    def _refused(self, name: str, size: int, reason: RefusalReason, started: "_Clock",
                 owner: tuple[str, str | None] | None = None,
                 fault: InjectedFault | None = None) -> types.CallToolResult:
        """A call that does not (or no longer) belong to a running battle: counted, logged cheaply, refused.

        The record keeps the tool name (cut), the reason and the arguments' size, never the arguments, and
        refusal records are rate-limited (`RefusalLogLimit`), so nobody can inflate the log from outside. A call of
        a known battle (`owner`: the running one, or an ended one whose token it holds) carries its battle id, so
        it counts in that battle's calls; it is not counted among the running battle's foreign refusals."""
        if owner is None or (self.scope.battle is not None and owner[0] == self.scope.battle.battle_id):
            self.scope.count_refusal(reason)
        admitted, suppressed = self._refusal_log.take()
        if admitted:  # a refused `execute` is no API call: code mode counts executions in their own log
            battle_id, task_id = owner if owner is not None and name != EXECUTE_TOOL else (None, None)
            self.log.append(CallRecord(
                timestamp=started.at, battle_id=battle_id, task_id=task_id, tool_name=name[:MAX_REFUSED_TOOL_NAME],
                success=False, error=REFUSAL_MESSAGES[reason], duration_ms=started.elapsed_ms(), in_scope=False,
                seq=self.log.next_seq(), refused=reason, arguments_bytes=size, suppressed_refusals=suppressed or None,
                fault=fault))
        return self._result(_refusal(REFUSAL_MESSAGES[reason], in_scope=False))

    def _log_refusal(self, name: str, arguments: dict[str, Any], message: str, started: "_Clock",
                     battle_id: str | None, task_id: str | None) -> types.CallToolResult:
        """Log and return a refusal decided before any tool was resolved (a malformed `call_api`)."""
        outcome = _refusal(message, in_scope=False)
        size = arguments_size(arguments)
        kept = arguments if size <= MAX_ARGUMENTS_BYTES else {"omitted": f"{size} bytes"}
        record = CallRecord(
            timestamp=started.at, battle_id=battle_id, task_id=task_id, tool_name=name[:MAX_TOOL_NAME],
            arguments=bounded_arguments(redact(kept)).arguments,
            success=False, error=message, duration_ms=started.elapsed_ms(), in_scope=False, seq=self.log.next_seq())
        self.log.append(record)
        self.trace.call(record, message)
        return self._result(outcome)

    async def _outcome(self, name: str, arguments: dict[str, Any], battle_id: str, generation: int,
                       code: bool = False) -> CallOutcome:
        """Check, forward and answer one call. `code`: an `apis` call of code mode, whose arguments go to the APIs
        server as AppWorld's requester sends them (its own validation answers, as in AppWorld's REPL)."""
        spec = self.specs.get(name)
        if spec is None:
            return _refusal(f"Unknown tool {name[:80]!r}: this gateway has no such tool. "
                            "Use tools/list to see the tools.",
                            in_scope=False)
        if not self.scope.allows(name):
            return _refusal(f"Tool {name!r} is outside this battle's scope ({battle_id}); it cannot be called "
                            f"here. Use tools/list to see the tools in scope.", in_scope=False)
        in_scope = self.scope.in_scope(name)
        known = spec.input_schema["properties"]
        if code:
            cleaned = {k: v for k, v in arguments.items() if k in known}
        else:
            cleaned = {k: v for k, v in arguments.items() if k in known and (v is not None or k in spec.required)}
        problems = None if code else self._schema_problems(name, spec, cleaned)
        if problems:
            return _refusal(f"Invalid arguments for {name}: {problems}", in_scope=in_scope)
        outcome = await self._checked(spec, cleaned, battle_id, generation, in_scope, code)
        outcome.call_key = self.call_keys.of(name, cleaned)
        return outcome

    async def _checked(self, spec: ToolSpec, cleaned: dict[str, Any], battle_id: str, generation: int,
                       in_scope: bool, code: bool) -> CallOutcome:
        """A call whose tool and arguments passed the checks: faulted on purpose, or forwarded."""
        name = spec.name
        gate = _BattleGate(self.scope, generation, closes_episode=name == COMPLETE_TASK_TOOL, in_execution=code,
                           next_seq=self.log.next_seq)
        held = self.faults.held_back(self.scope.battle, generation, spec)
        if held is not None:  # within a 429's retry-after (tools mode): 429 again, no new draw
            return await self._faulted(held, spec, gate, in_scope, code, generation, enforced=True)
        planned = self.faults.next(self.scope.battle, generation, self.scope.generation, spec)
        if planned is not None and planned.kind == "lost_response":  # forwarded, then its answer lost
            return await self._lost(planned, spec, cleaned, gate, in_scope, code)
        if planned is not None:  # a fault on purpose (a reliability run): answered here, never forwarded
            return await self._faulted(planned, spec, gate, in_scope, code, generation)
        battle = self.scope.battle
        reply = await self._forward(spec, cleaned, gate, in_scope)
        if isinstance(reply, CallOutcome):
            return reply
        reply = reworded(name, reply, battle.instruction if battle is not None else None)  # a paraphrase arm
        if reply.ok and name == COMPLETE_TASK_TOOL:
            self.scope.mark_completed(battle_id, str(cleaned.get("status", "success")))
        return _answered(reply, in_scope, gate)

    async def _forward(self, spec: ToolSpec, cleaned: dict[str, Any], gate: _BattleGate,
                       in_scope: bool) -> ApiReply | CallOutcome:
        """The call forwarded when its turn comes: AppWorld's reply, or the refusal (bad arguments, or its battle
        or episode ended while it was queued)."""
        try:
            reply = await anyio.to_thread.run_sync(self.forwarder.forward, spec, cleaned, gate)
        except ArgumentError as exc:
            return _refusal(f"Invalid arguments for {spec.name}: {exc}", in_scope=in_scope)
        return _refused_outcome(reply) if reply.refused is not None else reply

    async def _faulted(self, planned: PlannedFault, spec: ToolSpec, gate: _BattleGate, in_scope: bool,
                       code: bool, generation: int, enforced: bool = False) -> CallOutcome:
        """The planned fault's answer (`mcp_gateway.faults`), marked with what the agent receives; refused instead if
        its battle or episode ended while it waited (a fault that never reached the agent: marked undelivered).
        `enforced`: a call within a delivered 429's retry-after, answered 429 again."""
        battle = self.scope.battle
        assert battle is not None
        answer = await answered(planned, spec, battle)
        refusal = gate.admit()
        if refusal is not None:
            outcome = _refusal(REFUSAL_MESSAGES[refusal], in_scope=False)  # type: ignore[index]
            outcome.refused = refusal  # type: ignore[assignment]
            outcome.fault = InjectedFault(kind=planned.kind, position=planned.position, enforced=enforced)
            return outcome
        if planned.kind == "rate_limit" and not enforced:
            self.faults.rate_limited(generation, spec, planned)
        return _fault_outcome(answer, InjectedFault(
            kind=planned.kind, position=planned.position, delivered=answer.code_message() if code else answer.tool_text(),
            silent=is_silent(planned.kind, code), enforced=enforced), in_scope)

    async def _lost(self, planned: PlannedFault, spec: ToolSpec, cleaned: dict[str, Any], gate: _BattleGate,
                    in_scope: bool, code: bool) -> CallOutcome:
        """A `lost_response` fault: the call is forwarded and changes the world, then the agent gets a timeout (504)
        instead of the answer, as from a real API that timed out after committing. A call the forwarder refused or
        that met a fault of ours is answered as usual (no fault on purpose)."""
        battle = self.scope.battle
        assert battle is not None and battle.faults is not None
        reply = await self._forward(spec, cleaned, gate, in_scope)
        if isinstance(reply, CallOutcome):
            return reply
        if reply.fault is not None or reply.status_code is None:
            return _answered(reply, in_scope, gate)
        await anyio.sleep(battle.faults.timeout_s)  # the client's wait before it gave up
        answer = fault_answer(planned.kind, spec, battle.faults.timeout_s)
        outcome = _fault_outcome(answer, InjectedFault(
            kind=planned.kind, position=planned.position, delivered=answer.code_message() if code else answer.tool_text(),
            upstream_status=reply.status_code), in_scope)
        outcome.seq = gate.seq  # it reached the world: its number under the forwarder's lock, as any forwarded call
        return outcome

    def _schema_problems(self, name: str, spec: ToolSpec, arguments: dict[str, Any]) -> str | None:
        validator = self._validators.get(name)
        if validator is None:
            validator = self._validators[name] = Draft202012Validator(spec.input_schema)
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))[:_MAX_SCHEMA_ERRORS]
        if not errors:
            return None
        return "; ".join(f"{'.'.join(str(p) for p in e.path) or 'arguments'}: {e.message}" for e in errors)

    def _result(self, outcome: CallOutcome) -> types.CallToolResult:
        if outcome.raw_text is not None:  # a `malformed` fault: its cut text is all the agent gets
            text = outcome.fault.delivered if outcome.fault and outcome.fault.delivered else outcome.raw_text
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=False)
        text = outcome.payload["response"]["message"] if outcome.is_error else json.dumps(
            outcome.payload, ensure_ascii=False)
        structured = None if self.output_type == "content_only" else outcome.payload
        content: list[Any] = [] if self.output_type == "structured_data_only" and not outcome.is_error else [
            types.TextContent(type="text", text=text)]
        return types.CallToolResult(content=content, structured_content=structured, is_error=outcome.is_error)


def _cut(error: str | None) -> str | None:
    """An error message as a record keeps it (an API's message can echo the arguments)."""
    return error[:MAX_LOGGED_ERROR] if error else error


def _marked(result: types.CallToolResult, over: bool) -> types.CallToolResult:
    """`result`, marked when the call leaves (or found) its battle's episode over (`kernel.mcp_results.episode_over`)."""
    if over:
        result.meta = {**(result.meta or {}), EPISODE_OVER_META: True}
    return result


def _answered(reply: ApiReply, in_scope: bool, gate: _BattleGate) -> CallOutcome:
    """The outcome of a call that reached the world: AppWorld's reply, numbered as the forwarder took it."""
    outcome = _from_reply(reply)
    outcome.in_scope, outcome.seq = in_scope, gate.seq
    return outcome


def _fault_outcome(answer: FaultAnswer, fault: InjectedFault, in_scope: bool) -> CallOutcome:
    return CallOutcome(answer.tool_payload(), is_error=False, success=False, error=answer.message,
                       status_code=answer.status_code, in_scope=in_scope, body=answer.body, fault=fault,
                       raw_text=answer.text)


def _refused_outcome(reply: ApiReply) -> CallOutcome:
    """A call the forwarder's gate refused (its battle or episode ended while it was queued)."""
    outcome = _refusal(REFUSAL_MESSAGES[reply.refused], in_scope=False)  # type: ignore[index]
    outcome.refused = reply.refused  # type: ignore[assignment]
    return outcome


def _refusal(message: str, *, in_scope: bool = True) -> CallOutcome:
    return CallOutcome({"response": {"message": message, "is_error": True}}, is_error=True, success=False,
                       error=message, in_scope=in_scope)


def _from_reply(reply: ApiReply) -> CallOutcome:
    if reply.status_code is None or reply.fault is not None:
        return CallOutcome({"response": {"message": reply.agent_message, "is_error": True}}, is_error=True,
                           success=False, error=reply.error, status_code=reply.status_code,
                           upstream_fault=reply.fault)
    if not reply.ok:
        return CallOutcome({"response": {"message": reply.agent_message, "is_error": True}}, is_error=False,
                           success=False, error=reply.error, status_code=reply.status_code, body=reply.body)
    items = len(reply.body) if isinstance(reply.body, list) else None
    return CallOutcome({"response": reply.body}, is_error=False, success=True, status_code=reply.status_code,
                       result_items=items, body=reply.body)
