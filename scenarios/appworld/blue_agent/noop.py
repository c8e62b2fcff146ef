"""The no-op Blue: accepts the task and ends it at once without doing the work.

Its only tool call is `supervisor__complete_task` with status "success" and no answer, so the
battle completes immediately and AppWorld's evaluation fails it (a baseline for the judge).

Run: `python -m blue_agent.noop --port P [--host 127.0.0.1]`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from blue_agent.a2a_server import BlueHandler
from blue_agent.apis_shim import unwrap_response
from blue_agent.code_mode import execute, is_code_battle
from blue_agent.gateway_client import GatewaySession
from blue_agent.launch import run_blue
from kernel.task_message import parse_task_message
from kernel.settings import Settings

NAME = "No-op Blue"
DESCRIPTION = "Offline Blue Agent: ends every task at once with supervisor__complete_task, doing nothing."
COMPLETE_TOOL = "supervisor__complete_task"


def complete_without_work(mcp_url: str) -> None:
    """Call only `supervisor__complete_task(status="success")` on the gateway at `mcp_url` (blocking)."""
    with GatewaySession(mcp_url) as session:
        if is_code_battle(session):
            execute(session, "apis.supervisor.complete_task()")
            return
        unwrap_response(COMPLETE_TOOL, session.call_tool(COMPLETE_TOOL, {"status": "success"}))


def make_handler(settings: Settings) -> BlueHandler:
    """The no-op Blue's message handler (settings unused: it reads no world data)."""

    async def handle(text: str) -> str:
        task = parse_task_message(text)
        await asyncio.to_thread(complete_without_work, task.mcp_url)
        return f"Ended task {task.task_id} without doing it (no-op Blue)."

    return handle


def main(argv: Sequence[str] | None = None) -> int:
    return run_blue(NAME, DESCRIPTION, "noop", make_handler, argv)


if __name__ == "__main__":
    raise SystemExit(main())
