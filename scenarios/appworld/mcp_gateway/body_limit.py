"""Request body limits for every route of the gateway: oversized bodies get 413 before they are read whole.

Contract (a pure ASGI middleware, so it covers the MCP transports as well as the control routes):
- Each HTTP request has a byte limit: `MCP_BODY_LIMIT` under `/mcp` and `/messages/` (MCP JSON-RPC,
  whose tool arguments the gateway itself bounds and answers as a tool error), `CONTROL_BODY_LIMIT`
  on every other path (`/control/*`, `/health`, `/sse`).
- A declared `Content-Length` above the limit is answered 413 at once, without reading the body.
- A body without a length (chunked) is counted while the app reads it; once it passes the limit the
  app's read fails and the client gets 413 (if the app has not started its response yet).
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MCP_BODY_LIMIT = 8 * 1024 * 1024
CONTROL_BODY_LIMIT = 1024 * 1024
MCP_PREFIXES = ("/mcp", "/messages/")


class BodyTooLarge(Exception):
    """The request body passed its limit while being read."""


def limit_for(path: str) -> int:
    """The body limit of a request path (see the module docstring); a battle's token URL
    (`/b/<token>/mcp`, `/b/<token>/messages/`) counts as the MCP route under it."""
    if path.startswith("/b/"):
        path = "/" + path.split("/", 3)[-1] if path.count("/") >= 3 else path
    return MCP_BODY_LIMIT if path.startswith(MCP_PREFIXES) else CONTROL_BODY_LIMIT


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _send_413(send: Send, limit: int) -> None:
    body = json.dumps({"error": "request body too large", "limit_bytes": limit}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class BodyLimitMiddleware:
    """Wraps the gateway app; see the module docstring."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = limit_for(scope.get("path", ""))
        declared = _declared_length(scope)
        if declared is not None and declared > limit:
            await _send_413(send, limit)
            return
        received, started = 0, False

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge()
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except BodyTooLarge:
            if not started:
                await _send_413(send, limit)
