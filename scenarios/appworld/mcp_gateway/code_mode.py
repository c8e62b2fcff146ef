"""The gateway's code mode: the `execute` tool of a code-mode battle and the battle's sandboxed REPL.

A battle set with `interaction: "code"` lists one tool, `execute` (`{"code": str}` -> the REPL's output
text, AppWorld's `/execute` strings). `CodeRunner` starts the battle's `CodeSession` when the battle is
set and kills it when the battle is cleared, replaced or its episode ends (a running execution is ended
then; its output says so). From the first code battle on (from the gateway's start in a code run:
`GatewayConfig.code_spares_at_start`), `SPARES` spare REPLs are kept spawned: fresh sandboxes that have run no
code, importing IPython and AppWorld's helpers (about 1.5 CPU-seconds each) and building their REPL and frozen
clock at idle CPU priority, so they never slow a running battle; the battle that claims one only gives it its
clock. Spares are topped up in the background, off the battle's start; no process ever serves two battles
(see docs/code-mode.md, "Start-up"). Each `apis.<app>.<api>(**kw)` of the code is handed to the gateway's relay,
which runs it through the same per-battle path as a tool call of that battle (`Gateway.code_call`): the
sandbox never sees a token. One execution runs at a time per battle; one `ExecutionRecord` per
execution is appended to the executions log beside the call log (`executions_log_path`).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path

import mcp_types as types

from kernel.call_log import append_line
from kernel.execution_record import ExecutionRecord, executions_log_path
from kernel.settings import DEFAULT_CODE_SPARES, SandboxChoice
from mcp_gateway.code.sandbox import Isolation, SandboxLimits, default_python, require_isolation
from mcp_gateway.code.session import ChildFault, CodeSession, ExecutionOutcome, Relay
from mcp_gateway.models import BattleState
from mcp_gateway.tools import ToolSpec
from mcp_gateway.trace_hooks import GatewayTrace

logger = logging.getLogger(__name__)
EXECUTE_TOOL = "execute"
MAX_CODE_BYTES = 200_000
EXECUTE_DEFINITION = types.Tool(
    name=EXECUTE_TOOL,
    description=("Run Python code in this task's stateful Python REPL (variables persist between calls). Call "
                 "AppWorld APIs as apis.<app>.<api>(**kwargs): each returns the API's JSON and raises on an API error. "
                 "print() what you need to see. The output is what the code printed, 'Execution successful.', or "
                 "'Execution failed. Traceback: ...'. Finish with apis.supervisor.complete_task(answer=..., "
                 "status='success')."),
    input_schema={"type": "object", "properties": {"code": {"type": "string", "description": "Python code to run."}},
                  "required": ["code"]},
)
SPARES = DEFAULT_CODE_SPARES
"""Spare REPLs kept importing per gateway by default (the setting `code_spares`): two give back-to-back battles a
ready one (one is still importing when a quick battle ends)."""
NOT_CODE_TOOL = "This battle is in code mode: its only tool is `execute` ({\"code\": \"...\"})."


def api_map(specs: dict[str, ToolSpec]) -> dict[str, list[str]]:
    """`{app: [api, ...]}` of the gateway's tools: the REPL's `apis` (the scope policy applies when called)."""
    apps: dict[str, list[str]] = {}
    for spec in specs.values():
        apps.setdefault(spec.app_name, []).append(spec.api_name)
    return apps


class CodeRunner:
    """The sandboxed REPL of the running code-mode battle (at most one)."""

    def __init__(self, specs: dict[str, ToolSpec], call_log: Path, python: Path | None = None,
                 unsafe_in_process: bool = False, limits: SandboxLimits | None = None,
                 sandbox: SandboxChoice = "auto", spares: int = SPARES) -> None:
        self.apis = api_map(specs)
        self.python = python or default_python()
        self.unsafe_in_process, self.sandbox = unsafe_in_process, sandbox
        self.limits = limits or SandboxLimits()
        self.log_path = executions_log_path(call_log)
        self.trace = GatewayTrace(call_log)
        self._session: CodeSession | None = None
        self.spares = spares
        self._spares: deque[CodeSession] = deque()
        self._spares_lock = threading.Lock()
        self._topper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spare-top-up")
        """Spawns spares one after another, off the battle's start (the control call returns without waiting)."""
        self._shut = False
        self._battle_id: str | None = None
        self._one_at_a_time = threading.Lock()

    def isolation(self) -> Isolation:
        """The isolation code runs under here (raises SandboxUnavailable, saying what to install)."""
        return require_isolation(self.python, self.unsafe_in_process, self.sandbox)

    def start(self, battle: BattleState) -> str:
        """Start `battle`'s REPL (ending any other); returns the isolation's summary.

        The REPL is a fresh process that has run nothing: the oldest spare still alive (spawned when an earlier
        code battle or the gateway started, its REPL built meanwhile), else a new one. The spares are topped up in
        the background (`settle` waits for it); no process ever serves two battles."""
        self.stop()
        isolation = self.isolation()
        session = self._claim_spare(battle)
        if session is None:
            session = self._new_session(isolation, battle.task_datetime or "")
            session.start()
        self._session, self._battle_id = session, battle.battle_id
        try:
            self._topper.submit(self._top_up_logged, isolation)
        except RuntimeError:  # shut down under us: the gateway is stopping, no spare is wanted
            pass
        return isolation.summary()

    def top_up(self) -> None:
        """Spawn spares until there are `spares`, and return once they run: the gateway's start, where the run is
        known to be in code mode (`GatewayConfig.code_spares_at_start`). The first imports at normal priority: no
        battle runs on this gateway yet, and it is the REPL the first battle would otherwise start cold at battle
        time (at idle priority, on a busy machine, it would make no progress before that battle claims it).
        Raises SandboxUnavailable."""
        isolation = self.isolation()
        self._topper.submit(self._top_up, isolation, True).result()

    def settle(self) -> None:
        """Wait until every top-up asked for so far is done (tests; `shutdown`)."""
        self._topper.submit(lambda: None).result()

    def _top_up(self, isolation: Isolation, first_at_normal: bool = False) -> None:
        """Spawn spares (fresh sandboxes that import and build their REPL at idle priority, then wait for a battle's
        clock: `CodeSession.begin`) until there are `spares`; on the top-up thread only. `first_at_normal`: the
        first one spawned here imports at normal priority (`top_up`)."""
        idle = not first_at_normal
        while True:
            with self._spares_lock:
                if self._shut or len(self._spares) >= self.spares:
                    return
            spare = self._new_session(isolation, None)
            spare.start(idle=idle)
            idle = True
            with self._spares_lock:
                if not self._shut:
                    self._spares.append(spare)
                    continue
            spare.close()  # the gateway stopped while it spawned
            return

    def _top_up_logged(self, isolation: Isolation) -> None:
        try:
            self._top_up(isolation)
        except Exception as exc:  # noqa: BLE001 - no spare now: the next battle spawns its own REPL
            logger.error("could not spawn a spare REPL: %s", exc)

    def _claim_spare(self, battle: BattleState) -> CodeSession | None:
        """The oldest spare that takes `battle` (back at normal priority), or None; dead ones are discarded."""
        while True:
            with self._spares_lock:
                if not self._spares:
                    return None
                spare = self._spares.popleft()
            try:
                spare.begin(battle.task_datetime or "")
                return spare
            except ChildFault:
                spare.close()
        return None

    def _new_session(self, isolation: Isolation, task_datetime: str | None) -> CodeSession:
        return CodeSession(python=self.python, isolation=isolation, task_datetime=task_datetime, apis=self.apis,
                           relay=_no_relay, limits=self.limits)

    def shutdown(self) -> None:
        """Kill the running REPL and the spares (the gateway is stopping), after any spawn under way."""
        with self._spares_lock:
            self._shut = True
        self._topper.shutdown(wait=True)
        self.stop()
        with self._spares_lock:
            spares, self._spares = list(self._spares), deque()
        for spare in spares:
            spare.close()

    def stop(self) -> None:
        """Kill the REPL (its whole sandbox), if any. Idempotent."""
        session, self._session, self._battle_id = self._session, None, None
        if session is not None:
            session.close()

    def execute(self, battle: BattleState, code: str, relay: Relay,
                may_run: Callable[[], bool] = lambda: True) -> ExecutionOutcome | None:
        """Run `code` in `battle`'s REPL (blocking; one at a time); None if the battle has no REPL any more, or
        `may_run()` says no when its turn comes (another execution completed the task meanwhile)."""
        with self._one_at_a_time:
            session = self._session
            if session is None or self._battle_id != battle.battle_id or not may_run():
                return None
            session.relay = relay
            outcome = session.execute(code)
        # when the code began to run: after its REPL was ready (a REPL's start-up is not the execution's time)
        started = datetime.now(timezone.utc) - timedelta(milliseconds=outcome.duration_ms)
        self._log(battle, code, outcome, started, session.isolation.summary())
        return outcome

    def _log(self, battle: BattleState, code: str, outcome: ExecutionOutcome, started: datetime,
             isolation: str) -> None:
        record = ExecutionRecord(timestamp=started, battle_id=battle.battle_id, task_id=battle.task_id,
                                 code_chars=len(code), api_calls=outcome.api_calls, failed=outcome.failed,
                                 timed_out=outcome.timed_out, killed=outcome.killed, fault=outcome.fault,
                                 duration_ms=outcome.duration_ms,
                                 isolation=isolation)
        try:
            append_line(self.log_path, record.model_dump_json().encode() + b"\n")
        except OSError as exc:
            logger.error("could not append to the executions log %s: %s", self.log_path, exc)
        self.trace.execution(battle.battle_id, started, code, outcome.output, failed=outcome.failed,
                             timed_out=outcome.timed_out, killed=outcome.killed, api_calls=outcome.api_calls,
                             duration_ms=outcome.duration_ms)


def _no_relay(call: object) -> object:
    raise RuntimeError("no relay set for this execution")


def execute_result(output: str, task_completed: bool = False) -> types.CallToolResult:
    """The `execute` tool's answer: the REPL's output as text, and structured with `task_completed` (the battle's
    `complete_task` succeeded, so its episode is over: the in-band bridge ends the conversation on it)."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=output)],
                                structured_content={"output": output, "task_completed": task_completed},
                                is_error=False)
