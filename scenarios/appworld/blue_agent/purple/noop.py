"""The no-op purple: answers the task with `supervisor__complete_task` at once (must lose)."""

from __future__ import annotations

from blue_agent.purple.code_mode import CodeNoopPlayer, is_code_task
from kernel.a2a_tools import COMPLETE_TASK_TOOL, ToolCall, render_call

NAME = "AppWorld no-op purple"
DESCRIPTION = "Ends every task at once with supervisor__complete_task, doing nothing."


class NoopPlayer:
    async def turn(self, text: str) -> str:
        return render_call(ToolCall(name=COMPLETE_TASK_TOOL, arguments={"status": "success"}))

    def close(self) -> None:
        pass


def make_player(first_message: str) -> NoopPlayer | CodeNoopPlayer:
    return CodeNoopPlayer() if is_code_task(first_message) else NoopPlayer()
