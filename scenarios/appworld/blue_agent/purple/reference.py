"""The reference purple: replays the task's reference solution through the in-band tools (must win).

It reads the task id from the first message, loads the solution from the world's ground truth
(`WorldData.solution_source`, like the reference Blue) and runs it in a thread with an `apis` whose
calls are in-band tool calls: each call becomes this purple's reply, and the thread waits for the
next message (the tool's result). Its trajectory is therefore the reference Blue's, call for call.
A call of `supervisor__complete_task` is answered locally (the Green sends no result after it). Its `policy`
(`blue_agent.replay_policy`) is the Blue's of the same name: `plain`, `retry` (the `reference-retry` purple: a
passing fault is retried after its retry-after) or `careful` (the `reference-careful` purple: a write that got no
answer is repeated only if reading the state shows it did not happen); in code mode, by a wrapped `apis` in front
of the solution.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from typing import Any

from blue_agent.purple.code_mode import CodeReferencePlayer, is_code_task
from blue_agent.replay_policy import ReplayPolicy, replay_tools
from kernel.a2a_tools import COMPLETE_TASK_TOOL, ToolCall, parse_result, render_call, task_id_of
from kernel.errors import TaskMessageError
from kernel.world_data import WorldData

NAME = "AppWorld reference purple"
DESCRIPTION = "Replays the task's reference solution through the in-band AppWorld tools."
RETRY_NAME = "AppWorld reference-retry purple"
RETRY_DESCRIPTION = ("Replays the task's reference solution through the in-band AppWorld tools, retrying calls that "
                     "failed with a passing fault (429, 503, 504).")
CAREFUL_NAME = "AppWorld reference-careful purple"
CAREFUL_DESCRIPTION = ("Replays the task's reference solution through the in-band AppWorld tools, retrying passing "
                       "failures and repeating a write that got no answer only if reading the state shows it did not "
                       "happen.")
RESULT_TIMEOUT_S = 600.0
_DONE = object()


class ReferencePlayer:
    """One replay; `turn` hands the last result to the solution thread and returns its next call."""

    def __init__(self, source: str, think_s: float = 0.0, policy: ReplayPolicy = "plain") -> None:
        self.policy = policy
        self.calls: queue.Queue[Any] = queue.Queue()
        self.results: queue.Queue[Any] = queue.Queue()
        self.think_s = think_s
        self.started = False
        self.thread = threading.Thread(target=self._replay, args=(source,), name="reference-purple", daemon=True)

    def _replay(self, source: str) -> None:
        try:
            replay_tools(source, self._call, self.policy)
        except Exception as exc:  # noqa: BLE001 - the replay ends; the purple gives up the task
            self.calls.put(ToolCall(name=COMPLETE_TASK_TOOL, arguments={"status": "fail"}))
            self.calls.put(_DONE)
            return
        self.calls.put(_DONE)

    def _call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.think_s:
            time.sleep(self.think_s)
        self.calls.put(ToolCall(name=name, arguments=arguments))
        if name == COMPLETE_TASK_TOOL:
            return {"response": {"message": "Marked the active task complete."}}
        return {"response": self.results.get(timeout=RESULT_TIMEOUT_S)}

    async def turn(self, text: str) -> str:
        if not self.started:
            self.started = True
            self.thread.start()
        else:
            result = parse_result(text)
            self.results.put(result[1] if result else {"is_error": True, "message": "no tool result"})
        call = await asyncio.to_thread(self.calls.get, True, RESULT_TIMEOUT_S)
        if call is _DONE:
            call = ToolCall(name=COMPLETE_TASK_TOOL, arguments={"status": "fail"})
        return render_call(call)

    def close(self) -> None:
        self.results.put({"is_error": True, "message": "conversation closed"})


def player_factory(world: WorldData, think_s: float = 0.0,  # noqa: ANN201 - a PlayerFactory
                   policy: ReplayPolicy = "plain"):
    def make_player(first_message: str) -> ReferencePlayer | CodeReferencePlayer:
        task_id = task_id_of(first_message)
        if task_id is None:
            raise TaskMessageError("the first message names no `AppWorld task id: <id>` line")
        if is_code_task(first_message):
            return CodeReferencePlayer(world.solution_source(task_id), policy)
        return ReferencePlayer(world.solution_source(task_id), think_s, policy)

    return make_player
