"""Card first: the listening socket and the agent card come before a2a-sdk is imported; then a2a-sdk serves.

`serve_card_first(host, port, card, build)`:
1. binds host:port and listens at once (a port in use is an `InfrastructureError` here, before any import);
2. runs uvicorn on that socket with `CardFirstApp`, which answers GET `CARD_PATHS` with `card` (the JSON
   of `green_agent.a2a.card.card_data`, the same card the real app serves) while `build()` runs in a
   thread: it imports a2a-sdk and returns the real ASGI app (a2a-sdk's `A2AStarletteApplication`);
3. once built, every request goes to the real app, the card included. A request other than the card that
   arrives before is held until the real app exists, never refused; if `build()` fails, held and later
   requests get 503 with the reason, the server stops, and `serve_card_first` raises `InfrastructureError`.

The real app's own lifespan is not run: a2a-sdk 0.3.6's Starlette app has no start-up or shutdown hooks.
Only the standard library and uvicorn are imported here (the point of the module).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from collections.abc import Callable
from typing import Any

import uvicorn

from green_agent.a2a.card import CARD_PATHS
from kernel.errors import InfrastructureError

log = logging.getLogger(__name__)

Asgi = Callable[..., Any]


class CardFirstApp:
    """ASGI app: the static card until `build()`'s app exists, then that app (see the module docstring)."""

    def __init__(self, card: dict[str, Any], build: Callable[[], Asgi]) -> None:
        self.card_body = json.dumps(card).encode()
        self.build = build
        self.real: Asgi | None = None
        self.error: str | None = None
        self.ready = asyncio.Event()
        self.on_failure: Callable[[], None] = lambda: None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif self.real is None and scope["type"] == "http" and scope["method"] == "GET" and scope["path"] in CARD_PATHS:
            await _respond(send, 200, self.card_body, b"application/json")
        else:
            await self.ready.wait()
            if self.real is None:
                if scope["type"] == "http":
                    await _respond(send, 503, f"the Green could not start: {self.error}".encode(), b"text/plain")
                return
            await self.real(scope, receive, send)

    async def _lifespan(self, receive: Any, send: Any) -> None:
        loop = asyncio.get_running_loop()
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                threading.Thread(target=self._build, args=(loop,), name="a2a-app-build", daemon=True).start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _build(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            app = self.build()
        except Exception as exc:  # noqa: BLE001 - reported to every waiting request, then the server stops
            log.exception("the A2A app could not be built")
            self.error = f"{type(exc).__name__}: {exc}"
            loop.call_soon_threadsafe(self._failed)
            return

        def hand_over() -> None:
            self.real = app
            self.ready.set()

        loop.call_soon_threadsafe(hand_over)

    def _failed(self) -> None:
        self.ready.set()
        self.on_failure()


async def _respond(send: Any, status: int, body: bytes, content_type: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (IPv6 when `host` has a colon); InfrastructureError if taken."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise InfrastructureError(f"cannot listen on {host}:{port} ({exc.strerror or exc}): is another server "
                                  "using the port? Choose another with --port") from None
    return sock


def serve_card_first(host: str, port: int, card: dict[str, Any], build: Callable[[], Asgi]) -> None:
    """Serve until interrupted (see the module docstring); InfrastructureError if the port or `build()` fails."""
    sock = bind(host, port)
    app = CardFirstApp(card, build)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    def stop() -> None:
        server.should_exit = True

    app.on_failure = stop
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises the SIGINT/SIGTERM it caught: a requested stop (as uvicorn.run)
        pass
    finally:
        sock.close()
    if app.error is not None:
        raise InfrastructureError(f"the A2A assessment server could not start: {app.error}")


def serve(host: str, port: int, card_url: str | None, settings: Any, heartbeat_s: float | None = None,
          slot_specs: list[Any] | None = None) -> None:
    """The Green's A2A server (`appworld-green serve`): card first, then `server.build_app`'s a2a-sdk app.

    The card's url is `card_url` or http://host:port/ (127.0.0.1 for a wildcard host); `slot_specs`: the
    world slots to use (None: the first free ones); `settings`: `kernel.settings.Settings`."""
    from green_agent.a2a.card import card_data

    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = card_url or f"http://{shown}:{port}/"

    def build() -> Asgi:
        from green_agent.a2a.server import HEARTBEAT_S, build_app

        return build_app(url, settings, HEARTBEAT_S if heartbeat_s is None else heartbeat_s, slot_specs=slot_specs)

    serve_card_first(host, port, card_data(url), build)
