"""Step 6, wait, over a scripted env server and Blue reply (no HTTP).

`ScriptedWorld` stands for the part of the env server's contract the wait uses: `task_completed(task_id)`
answers False until the Blue has called `supervisor.complete_task`, then True (AppWorld 0.1.3's
`/task_completed`). `ScriptedReply` stands for the dispatch handle's view of the Blue's A2A answer.
The gateway's push path is exercised end to end in `test_battle_e2e.py` and `bench/bench_completion.py`.
"""

from __future__ import annotations

import time

import pytest

from green_agent.steps.dispatch import BlueReply, DispatchResult, AgentCardInfo
from green_agent.steps.wait import wait_for_completion
from kernel.errors import BlueUnreachableError


class ScriptedWorld:
    def __init__(self, completes_after_s: float | None) -> None:
        self.started = time.monotonic()
        self.completes_after_s = completes_after_s
        self.asked = 0

    def task_completed(self, task_id: str) -> bool:
        self.asked += 1
        return self.completes_after_s is not None and time.monotonic() - self.started >= self.completes_after_s


class ScriptedReply:
    def __init__(self, reply: BlueReply) -> None:
        self.result = DispatchResult(blue_url="http://127.0.0.1:1", agent=AgentCardInfo(name="b"), message_id="m")
        self._reply = reply
        self.sent_at = time.monotonic()

    def reply(self) -> BlueReply:
        return self._reply


def test_a_completion_is_seen_within_the_poll_period_and_timed() -> None:
    world = ScriptedWorld(completes_after_s=0.3)
    result = wait_for_completion(world, "t_1", "b", deadline_s=10, fallback_poll_s=0.05)  # type: ignore[arg-type]
    assert (result.completed, result.ended_by, result.detected_via) == (True, "completed", "task_completed")
    assert 0.3 <= result.waited_s < 2.0 and world.asked > 2


def test_the_deadline_ends_the_wait_without_a_completion() -> None:
    result = wait_for_completion(ScriptedWorld(None), "t_1", "b", deadline_s=0.4,  # type: ignore[arg-type]
                                 fallback_poll_s=0.05)
    assert (result.completed, result.ended_by) == (False, "deadline") and result.waited_s >= 0.4


def test_a_blue_that_replied_without_completing_ends_the_wait_after_the_grace() -> None:
    handle = ScriptedReply(BlueReply(state="replied", at=time.monotonic()))
    result = wait_for_completion(ScriptedWorld(None), "t_1", "b", deadline_s=30, handle=handle,  # type: ignore[arg-type]
                                 fallback_poll_s=0.05, reply_grace_s=0.3)
    assert (result.completed, result.ended_by, result.blue_reply) == (False, "blue_replied", "replied")
    assert result.waited_s < 5


def test_an_error_after_the_task_was_delivered_is_the_blues_own_fault_and_ends_the_wait() -> None:
    handle = ScriptedReply(BlueReply(state="error", at=time.monotonic(), error="HTTP 500: boom", fault="http_error"))
    result = wait_for_completion(ScriptedWorld(None), "t_1", "b", deadline_s=30, handle=handle,  # type: ignore[arg-type]
                                 fallback_poll_s=0.05)
    assert (result.completed, result.ended_by) == (False, "blue_error") and result.waited_s < 5
    assert result.blue_fault is not None and result.blue_fault.kind == "http_error"
    assert result.blue_fault.message == "HTTP 500: boom"


def test_a_task_message_that_never_reached_the_blue_is_infrastructure_not_a_loss() -> None:
    handle = ScriptedReply(BlueReply(state="error", at=time.monotonic(), error="ConnectionError: refused",
                                     delivered=False))
    with pytest.raises(BlueUnreachableError, match="could not be reached with the task message.*refused"):
        wait_for_completion(ScriptedWorld(None), "t_1", "b", deadline_s=30, handle=handle,  # type: ignore[arg-type]
                            fallback_poll_s=0.05)


def test_an_a2a_error_after_the_task_was_completed_still_counts_the_completion() -> None:
    handle = ScriptedReply(BlueReply(state="error", at=time.monotonic(), error="connection reset"))
    result = wait_for_completion(ScriptedWorld(0.0), "t_1", "b", deadline_s=30, handle=handle,  # type: ignore[arg-type]
                                 fallback_poll_s=0.05)
    assert result.completed and result.blue_reply == "error"
