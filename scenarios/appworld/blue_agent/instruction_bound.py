"""The instruction-bound Blue: a brittle agent that knows its task only by the words it was asked in.

It never reads the task id of the Green's message. It takes the instruction from the message
(`blue_agent.instruction_match.instruction_of`), finds the world's task whose original instruction has the most
words in common with it, and, only when that match is clear (`MIN_SCORE`, `MIN_MARGIN`), replays that task's
reference solution as the `reference` Blue does (both modes). Otherwise it gives up: it ends the task with
`complete_task(status="fail")` without acting. It passes on the original wording and on rewordings that keep
most words, and loses under the strengths that move the facts into other words: the stand-in that shows a
paraphrase arm discriminates, beside `reference`, which ignores the wording (docs/paraphrases.md).

Run: `python -m blue_agent.instruction_bound --port P [--host 127.0.0.1]`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from blue_agent.a2a_server import BlueHandler
from blue_agent.code_mode import execute, is_code_battle
from blue_agent.gateway_client import GatewaySession
from blue_agent.instruction_match import InstructionIndex, TaskMatch, instruction_of
from blue_agent.launch import run_blue
from blue_agent.reference import replay_solution
from kernel.settings import Settings
from kernel.task_message import parse_task_message
from kernel.world_data import WorldData

NAME = "Instruction-bound Blue"
DESCRIPTION = ("Offline Blue Agent: identifies its task by the instruction's words alone and replays that task's "
               "reference solution through the AppWorld MCP gateway; gives up when no task matches clearly.")
COMPLETE_TOOL = "supervisor__complete_task"
logger = logging.getLogger(__name__)


def give_up(mcp_url: str) -> None:
    """End the battle's task as failed without acting (blocking)."""
    with GatewaySession(mcp_url) as session:
        if is_code_battle(session):
            execute(session, 'apis.supervisor.complete_task(status="fail")')
        else:
            session.call_tool(COMPLETE_TOOL, {"status": "fail"})


def match_words(match: TaskMatch) -> str:
    return (f"best {match.best} {match.score:.2f}, runner-up {match.runner_up} {match.runner_up_score:.2f}"
            if match.best else "no task in the world")


def make_handler(settings: Settings) -> BlueHandler:
    """The instruction-bound Blue's message handler (solutions and instructions from `settings.appworld_root`)."""
    world = WorldData(settings.appworld_root)
    index = InstructionIndex(world)

    async def handle(text: str) -> str:
        mcp_url = parse_task_message(text).mcp_url  # the endpoint only: the task id line is not read
        wording = instruction_of(text) or ""
        match = await asyncio.to_thread(index.match, wording)
        logger.info("instruction match: %s (%s)", match.task_id or "none clear", match_words(match))
        if match.task_id is None:
            await asyncio.to_thread(give_up, mcp_url)
            return f"No task matches the instruction clearly ({match_words(match)}); gave the task up."
        await asyncio.to_thread(replay_solution, world.solution_source(match.task_id), mcp_url,
                                settings.reference_blue_think_s)
        return f"Took the instruction for task {match.task_id} ({match_words(match)}); replayed its solution."

    return handle


def main(argv: Sequence[str] | None = None) -> int:
    return run_blue(NAME, DESCRIPTION, "instruction_bound", make_handler, argv)


if __name__ == "__main__":
    raise SystemExit(main())
