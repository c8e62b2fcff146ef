"""The reference Blue: replays a task's reference solution through the gateway's MCP tools.

It reads the task id and the gateway endpoint from the Green's message, loads the solution from
the world's ground truth (`WorldData.solution_source`) and runs it with an `apis` object whose
calls are MCP tool calls, over one MCP session; in code mode (the gateway lists only `execute`) it
sends the solution as code to the battle's REPL instead. Its trajectory is therefore logged by the gateway
like any agent's. If the solution fails part-way, it ends the task with status "fail" so the
Green need not wait for its deadline. Its `policy` (`blue_agent.replay_policy`) says how it meets failures: `plain`
(this Blue), `retry` (the `reference-retry` Blue: a 429, 503 or 504 is retried after its retry-after) or `careful`
(the `reference-careful` Blue: a write that got no answer is repeated only if reading the state shows it did not
happen).

Run: `python -m blue_agent.reference --port P [--host 127.0.0.1]`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

from blue_agent.a2a_server import BlueHandler
from blue_agent.code_mode import FAILED_PREFIX, execute, is_code_battle
from blue_agent.errors import ReferenceSolutionError
from blue_agent.gateway_client import GatewaySession
from blue_agent.launch import run_blue
from blue_agent.replay_policy import ReplayPolicy, replay_tools, solution_code_for
from kernel.task_message import parse_task_message
from kernel.settings import Settings
from kernel.world_data import WorldData

NAME = "Reference Blue"
DESCRIPTION = "Offline Blue Agent: replays the task's reference solution through the AppWorld MCP gateway."
logger = logging.getLogger(__name__)


def replay_solution(source: str, mcp_url: str, think_s: float = 0.0, policy: ReplayPolicy = "plain") -> None:
    """Run `source`'s `solution(apis, requester)` against the gateway at `mcp_url` (blocking).

    `think_s` > 0 waits that long before each tool call (in code mode: before its one code reply), like an
    LLM agent waiting for its model (benchmarks use it to measure a model-bound Blue without a model).
    `policy`: how failed calls are met (module docstring)."""
    with GatewaySession(mcp_url) as session:
        if is_code_battle(session):
            if think_s:
                time.sleep(think_s)
            _replay_as_code(session, solution_code_for(source, policy))
            return

        def call_tool(name: str, arguments: dict[str, Any]) -> Any:
            if think_s:
                time.sleep(think_s)
            return session.call_tool(name, arguments)

        try:
            replay_tools(source, call_tool, policy)
        except Exception:
            _end_as_failed(session)
            raise


def _replay_as_code(session: GatewaySession, code: str) -> None:
    """Code mode: run the solution's `code` in the battle's REPL as one execution; a traceback ends the task as
    failed."""
    output = execute(session, code)
    if output.startswith(FAILED_PREFIX):
        execute(session, 'apis.supervisor.complete_task(status="fail")')
        raise ReferenceSolutionError(f"the reference solution failed in the REPL: {output[:500]}")


def _end_as_failed(session: GatewaySession) -> None:
    try:
        session.call_tool("supervisor__complete_task", {"status": "fail"})
    except Exception:  # noqa: BLE001 - best effort; the original error is what matters
        logger.warning("could not mark the task failed after the solution error", exc_info=True)


def make_handler(settings: Settings, policy: ReplayPolicy = "plain") -> BlueHandler:
    """The reference Blue's message handler, reading solutions from `settings.appworld_root` (`policy`: the
    reference-retry or reference-careful Blue's)."""
    world = WorldData(settings.appworld_root)

    async def handle(text: str) -> str:
        task = parse_task_message(text)
        source = world.solution_source(task.task_id)
        logger.info("replaying the reference solution of %s through the battle's gateway endpoint", task.task_id)
        await asyncio.to_thread(replay_solution, source, task.mcp_url, settings.reference_blue_think_s, policy)
        return f"Replayed the reference solution of task {task.task_id}; supervisor__complete_task was called."

    return handle


def main(argv: Sequence[str] | None = None) -> int:
    return run_blue(NAME, DESCRIPTION, "reference", make_handler, argv)


if __name__ == "__main__":
    raise SystemExit(main())
