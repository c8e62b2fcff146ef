"""The instruction-bound purple: the `instruction-bound` Blue behind the in-band bridge (`appworld-a2a-tools/1`).

It never reads the task id line of the first message: it matches the instruction's words against the world's
original instructions (`blue_agent.instruction_match`) and, when the match is clear, plays as the reference
purple does with that task's solution (tools or code mode); otherwise it gives the task up at once
(`complete_task(status="fail")`).
"""

from __future__ import annotations

from blue_agent.instruction_match import InstructionIndex, instruction_of
from blue_agent.purple.code_mode import GIVE_UP, CodeReferencePlayer, fenced, is_code_task
from blue_agent.purple.reference import ReferencePlayer
from kernel.a2a_tools import COMPLETE_TASK_TOOL, ToolCall, render_call
from kernel.world_data import WorldData

NAME = "AppWorld instruction-bound purple"
DESCRIPTION = ("Identifies its task by the instruction's words alone and replays that task's reference solution "
               "through the in-band AppWorld tools; gives up when no task matches clearly.")


class GiveUpPlayer:
    """Ends the task as failed at its first turn."""

    def __init__(self, code: bool) -> None:
        self.code = code

    async def turn(self, text: str) -> str:
        if self.code:
            return fenced(GIVE_UP)
        return render_call(ToolCall(name=COMPLETE_TASK_TOOL, arguments={"status": "fail"}))

    def close(self) -> None:
        pass


def player_factory(world: WorldData, think_s: float = 0.0):  # noqa: ANN201 - a PlayerFactory
    index = InstructionIndex(world)

    def make_player(first_message: str) -> ReferencePlayer | CodeReferencePlayer | GiveUpPlayer:
        code = is_code_task(first_message)
        match = index.match(instruction_of(first_message) or "")
        if match.task_id is None:
            return GiveUpPlayer(code)
        source = world.solution_source(match.task_id)
        return CodeReferencePlayer(source) if code else ReferencePlayer(source, think_s)

    return make_player
