"""The purples in code mode (`appworld-a2a-code/1`): a battle whose only tool is `execute` gets Python.

`is_code_task(first_message)` reads the tool list of the first message. The reference purple sends the
task's reference solution as one fenced python block (then, if the Green answers instead of ending the
conversation, the solution failed: it gives the task up); the no-op purple sends only
`apis.supervisor.complete_task()`.
"""

from __future__ import annotations

from blue_agent.code_mode import EXECUTE_TOOL
from blue_agent.replay_policy import ReplayPolicy, solution_code_for
from kernel.a2a_tools import tools_of

GIVE_UP = 'apis.supervisor.complete_task(status="fail")'


def is_code_task(first_message: str) -> bool:
    """True if the first message offers exactly the tool `execute`."""
    tools = tools_of(first_message) or []
    return [t.get("function", {}).get("name") for t in tools if isinstance(t, dict)] == [EXECUTE_TOOL]


def fenced(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```"


class CodeReferencePlayer:
    """Sends the solution as code; any later turn means it did not complete: give the task up."""

    def __init__(self, source: str, policy: ReplayPolicy = "plain") -> None:
        self.source, self.turns, self.policy = source, 0, policy

    async def turn(self, text: str) -> str:
        self.turns += 1
        if self.turns > 1:
            return fenced(GIVE_UP)
        return fenced(solution_code_for(self.source, self.policy))

    def close(self) -> None:
        pass


class CodeNoopPlayer:
    async def turn(self, text: str) -> str:
        return fenced("apis.supervisor.complete_task()")

    def close(self) -> None:
        pass
