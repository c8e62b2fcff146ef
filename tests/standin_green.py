"""A stand-in Green for `appworld-green assess`: an A2A agent (a2a-sdk's own server) that answers like ours.

Contract it stands for: what our Green's executor emits at the protocol level for one assessment: `submitted` with
no message, a `working` status with text, the results artifact (a DataPart with `tgc`, `score`, `max_score`,
`intervals`), then `completed` with no message. Run as a script (`python standin_green.py --port P --mark M`) it is
also a process `assess` starts from a scenario's `cmd`: it prints `M` to its log and, as our Green writes its run
folder under `RUNS_DIR`, writes `RUNS_DIR/M.txt`, so a test sees where each started agent wrote.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, DataPart, Part, TaskState
from a2a.utils import new_agent_text_message, new_task

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


def app(url: str):  # noqa: ANN201
    """The stand-in's ASGI app, its card naming `url`."""
    card = AgentCard(name="stand-in Green", description="test", url=url + "/", version="0",
                     capabilities=AgentCapabilities(streaming=True), default_input_modes=["text"],
                     default_output_modes=["text"], skills=[])
    handler = DefaultRequestHandler(agent_executor=StandInGreen(), task_store=InMemoryTaskStore())
    return A2AStarletteApplication(agent_card=card, http_handler=handler).build()


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--mark", required=True)
    args = parser.parse_args()
    runs = Path(os.environ["RUNS_DIR"])
    runs.mkdir(parents=True, exist_ok=True)
    (runs / f"{args.mark}.txt").write_text(args.mark)
    print(f"stand-in Green {args.mark}", flush=True)
    uvicorn.run(app(f"http://127.0.0.1:{args.port}"), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
