"""The A2A server shared by the purples: one `Player` per A2A context, one reply message per turn.

A purple is a `make_player(first_message) -> Player` factory; `Player.turn(text)` returns the reply
text (a tool call in the protocol's form). The server keeps a bounded map context id -> player
(the oldest is dropped, `close()`d, past `MAX_CONTEXTS`) and answers every message with an agent
Message in the same context. A player's exception is answered as an A2A `failed` task (the Green
charges that to the purple: it had the task). A player with a `last_usage` attribute (the `llm` one)
has it sent as the reply's metadata (`kernel.a2a_usage`: what that reply cost).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentSkill
from a2a.utils import new_agent_text_message, new_task

from kernel.a2a_tools import PROTOCOL

log = logging.getLogger(__name__)
MAX_CONTEXTS = 64
VERSION = "0.1.0"


class Player(Protocol):
    """One conversation's agent."""

    async def turn(self, text: str) -> str: ...

    def close(self) -> None: ...


PlayerFactory = Callable[[str], Player]


class PurpleExecutor(AgentExecutor):
    def __init__(self, make_player: PlayerFactory) -> None:
        self.make_player = make_player
        self.players: OrderedDict[str, Player] = OrderedDict()
        self.locks: dict[str, asyncio.Lock] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        context_id = context.context_id or "default"
        text = context.get_user_input()
        lock = self.locks.setdefault(context_id, asyncio.Lock())
        async with lock:
            try:
                player = self.players.get(context_id)
                if player is None:
                    player = self._new(context_id, text)
                reply = await player.turn(text)
            except Exception as exc:  # noqa: BLE001 - answered as a failed task
                log.exception("purple player failed")
                task = new_task(context.message)
                await event_queue.enqueue_event(task)
                await TaskUpdater(event_queue, task.id, task.context_id).failed(
                    new_agent_text_message(f"error: {type(exc).__name__}", task.context_id, task.id))
                return
        message = new_agent_text_message(reply, context_id)
        message.metadata = getattr(player, "last_usage", None)  # kernel.a2a_usage: what this reply cost, if known
        await event_queue.enqueue_event(message)

    def _new(self, context_id: str, text: str) -> Player:
        player = self.make_player(text)
        self.players[context_id] = player
        while len(self.players) > MAX_CONTEXTS:
            old_id, old = self.players.popitem(last=False)
            self.locks.pop(old_id, None)
            old.close()
        return player

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def purple_card(name: str, description: str, url: str, skill_id: str) -> AgentCard:
    return AgentCard(name=name, description=description, url=url, version=VERSION,
                     capabilities=AgentCapabilities(streaming=True), default_input_modes=["text"],
                     default_output_modes=["text"],
                     skills=[AgentSkill(id=skill_id, name=name, description=f"{description} ({PROTOCOL})",
                                        tags=["appworld", "purple"])])


def build_app(card: AgentCard, make_player: PlayerFactory):  # noqa: ANN201 - a Starlette app
    handler = DefaultRequestHandler(agent_executor=PurpleExecutor(make_player), task_store=InMemoryTaskStore())
    return A2AStarletteApplication(agent_card=card, http_handler=handler).build()


def serve(card: AgentCard, make_player: PlayerFactory, host: str, port: int) -> None:
    uvicorn.run(build_app(card, make_player), host=host, port=port, log_level="warning")
