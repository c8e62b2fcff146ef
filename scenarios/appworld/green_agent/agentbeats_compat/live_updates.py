"""D15: the backend's `/ws/battles` broadcasts reach the page (patched when `backend.app` is imported).

What upstream does (agentbeats 1.2.6, `backend/routes/websockets.py`): at import it stores
`MAIN_EVENT_LOOP = asyncio.get_event_loop()`, and `broadcast_battle(s)_update` hands each send to that
loop with `asyncio.run_coroutine_threadsafe`. The module is imported before uvicorn's serving loop
exists (uvicorn >= 0.30 imports `"backend.app:app"` in `run()` before `asyncio.run`, and our wrapper
imports `app` itself), so `get_event_loop()` creates a fresh loop that never runs: every send queued on
it is lost. The only message a client ever gets is the `battles_update` the handler awaits itself on
connect. Besides, the battle processor calls `asyncio.create_task(broadcast...)` just before its
`asyncio.run(process_battle)` returns, where the task is cancelled before it starts.

The patch: the app's lifespan records the serving loop; the two broadcasts become plain functions that
serialize the battle at call time and schedule one send on the serving loop under a FIFO lock (so
clients get the updates in the order they were made), and return an already finished coroutine, so
upstream's `asyncio.run(...)` / `create_task(...)` around them still work and a cancelled task loses
nothing. A client whose send fails is dropped as upstream does.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import ModuleType
from typing import Any

TARGET_MODULE = "backend.app"
_PATCHED_MARK = "_appworld_green_live_updates"
logger = logging.getLogger("websockets")


class _ServingLoop:
    """The loop uvicorn serves on, and the lock that keeps broadcasts in order on it."""

    loop: asyncio.AbstractEventLoop | None = None
    lock: asyncio.Lock | None = None


async def _nothing() -> None:
    return None


def _broadcaster(ws_module: ModuleType, build: Callable[[], str | None]) -> Callable[[], Any]:
    def broadcast() -> Any:
        loop = _ServingLoop.loop
        try:
            message = build()
        except Exception as exc:  # upstream logs and carries on (the database may be mid-write)
            logger.error("[battles_ws] broadcast not built: %s", exc)
            return _nothing()
        if message is None or loop is None or loop.is_closed():
            return _nothing()
        asyncio.run_coroutine_threadsafe(_send_all(ws_module, message), loop)
        return _nothing()

    return broadcast


async def _send_all(ws_module: ModuleType, message: str) -> None:
    assert _ServingLoop.lock is not None
    async with _ServingLoop.lock:
        for ws in list(ws_module.battles_ws_clients):
            try:
                await ws.send_text(message)
            except Exception as exc:
                logger.warning("[battles_ws] dropping a client whose send failed: %s", exc)
                ws_module.battles_ws_clients.discard(ws)


def patch_backend_app(module: ModuleType) -> None:
    """Record the serving loop at lifespan start and replace the two broadcasts (idempotent)."""
    if getattr(module, _PATCHED_MARK, False):
        return
    import backend.routes.websockets as ws_module

    manager = ws_module.WebSocketManager
    db = ws_module.db

    def battles_message() -> str:
        return json.dumps({"type": "battles_update", "battles": db.list("battles")})

    def broadcast_battles_update() -> Any:
        return _broadcaster(ws_module, battles_message)()

    def broadcast_battle_update(battle: dict[str, Any] | None) -> Any:
        snapshot = None if battle is None else json.dumps({"type": "battle_update", "battle": battle})
        return _broadcaster(ws_module, lambda: snapshot)()

    manager.broadcast_battles_update = staticmethod(broadcast_battles_update)
    manager.broadcast_battle_update = staticmethod(broadcast_battle_update)
    original_lifespan = module.app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        _ServingLoop.loop = asyncio.get_running_loop()
        _ServingLoop.lock = asyncio.Lock()
        ws_module.MAIN_EVENT_LOOP = _ServingLoop.loop  # anything else of upstream's that uses it
        async with original_lifespan(app) as state:
            yield state

    module.app.router.lifespan_context = lifespan
    setattr(module, _PATCHED_MARK, True)
