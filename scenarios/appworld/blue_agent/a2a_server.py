"""A2A server wiring shared by the offline Blues (reference, noop).

A Blue is one async function `handle(text) -> reply`; this module turns it into an A2A
JSON-RPC server (a2a-sdk 0.3.6) that answers `message/send` and `message/stream`, and serves
its agent card at `/.well-known/agent.json` and `/.well-known/agent-card.json` with `url` set to
the server's real address (A2A clients post to `card.url`).

The AgentBeats backend greets every agent with a battle_info JSON before a battle; it is
acknowledged without running the Blue.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentSkill, Part, TaskState, TextPart
from a2a.utils import new_agent_text_message, new_task
from starlette.applications import Starlette

from kernel.task_message import is_battle_info
from kernel.errors import GreenError

BlueHandler = Callable[[str], Awaitable[str]]
"""The Blue itself: receives the Green's message text, returns a short reply."""

logger = logging.getLogger(__name__)
VERSION = "0.1.0"


def make_card(name: str, description: str, url: str, skill_id: str) -> AgentCard:
    """An agent card for an offline Blue served at `url`."""
    return AgentCard(
        name=name, description=description, url=url if url.endswith("/") else url + "/", version=VERSION,
        capabilities=AgentCapabilities(streaming=True), default_input_modes=["text"], default_output_modes=["text"],
        skills=[AgentSkill(id=skill_id, name=name, description=description, tags=["appworld", "blue_agent"])],
    )


class BlueExecutor(AgentExecutor):
    """Runs a BlueHandler for each incoming message and publishes its reply as the task's artifact."""

    def __init__(self, handler: BlueHandler) -> None:
        self.handler = handler

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.update_status(TaskState.working, new_agent_text_message("working", task.context_id, task.id))
        text = context.get_user_input()
        failed = False
        if is_battle_info(text):
            reply = "ready for the battle"
        else:
            try:
                reply = await self.handler(text)
            except GreenError as exc:
                failed, reply = True, f"error: {exc}"
            except Exception as exc:  # noqa: BLE001 - a Blue's own crash is reported to the caller, not raised
                logger.exception("blue handler crashed")
                failed, reply = True, f"error: {type(exc).__name__}: {exc}"
        await updater.add_artifact([Part(root=TextPart(text=reply))], name="response")
        if failed:
            await updater.failed(new_agent_text_message(reply, task.context_id, task.id))
        else:
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("cancel is not supported by the offline Blues")


def build_app(card: AgentCard, handler: BlueHandler) -> Starlette:
    """The Starlette app serving `card` and running `handler` per message."""
    request_handler = DefaultRequestHandler(agent_executor=BlueExecutor(handler), task_store=InMemoryTaskStore())
    return A2AStarletteApplication(agent_card=card, http_handler=request_handler).build()


def serve(card: AgentCard, handler: BlueHandler, host: str, port: int) -> None:
    """Run the Blue's A2A server until interrupted."""
    uvicorn.run(build_app(card, handler), host=host, port=port, log_level="warning")
