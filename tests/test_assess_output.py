"""What `appworld-green assess` prints: each state in words when an update has no message, TGC with its interval.

The Green here is a stand-in A2A agent (a2a-sdk's own server, in-process) whose executor emits what our
Green's does at the protocol level: `submitted` with no message, a `working` status with text, the
results artifact (a DataPart with `tgc`, `score`, `max_score`, `intervals`), then `completed` with no
message. The client side is the real `send_request` and the CLI's score line.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest
import requests
import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, DataPart, Part, TaskState
from a2a.utils import new_agent_text_message, new_task

from green_agent.a2a.local_runner import AgentEntry, Scenario, send_request
from green_agent.commands.a2a import assess_score_line
from kernel.ports import free_port

RESULT = {"tgc": 66.7, "score": 2, "max_score": 3, "incomplete": False,
          "intervals": {"confidence_level": 0.95, "tgc_ci": [20.8, 93.9], "tgc_ci_method": "Wilson"}}


class StandInGreen(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = new_task(context.message)  # type: ignore[arg-type]
        await event_queue.enqueue_event(task)  # submitted, no message
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.update_status(TaskState.working, new_agent_text_message("assessment started: 3 task(s)",
                                                                              task.context_id, task.id))
        await updater.add_artifact([Part(root=DataPart(data=RESULT))], name="results")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


@pytest.fixture()
def green() -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    card = AgentCard(name="stand-in Green", description="test", url=url + "/", version="0",
                     capabilities=AgentCapabilities(streaming=True), default_input_modes=["text"],
                     default_output_modes=["text"], skills=[])
    handler = DefaultRequestHandler(agent_executor=StandInGreen(), task_store=InMemoryTaskStore())
    server = uvicorn.Server(uvicorn.Config(A2AStarletteApplication(agent_card=card, http_handler=handler).build(),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while True:
        try:
            requests.get(f"{url}/.well-known/agent-card.json", timeout=1)
            break
        except requests.RequestException:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_assess_prints_each_state_in_words_and_tgc_with_its_interval(green: str, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = Scenario(green_agent=AgentEntry(endpoint=green), participants=[AgentEntry(endpoint="http://x", role="agent")])
    state, results = asyncio.run(send_request(scenario, assess_score_line))
    lines = capsys.readouterr().out.splitlines()
    assert state == "completed" and results == [RESULT]
    states = [line for line in lines if line.startswith("[") and not line.startswith("[artifact]")]
    assert all(len(line.split("] ", 1)) == 2 and line.split("] ", 1)[1].strip() for line in states), lines  # no empty
    assert "[working] assessment started: 3 task(s)" in states
    assert "[completed] the assessment finished; its results are the task's artifacts" in states
    assert lines[-1] == "TGC 66.7 [95% CI 20.8-93.9] (2/3 tasks passed)"  # as eval's summary prints an interval
