"""One uvicorn app: MCP over Streamable HTTP (`/mcp`, stateless) and SSE (`/sse` + `/messages/`),
and the Green's plain-HTTP control endpoints:

- `GET /health` -> HealthReply
- `PUT /control/battle` (BattleScope) -> BattleState; `DELETE /control/battle` -> {"cleared": ...}
- `GET /control/completion?battle_id=B&wait=S` -> CompletionReply (long-poll, S <= 60)

Both MCP transports share one lowlevel `Server` whose handlers call the transport-free `Gateway`.
Every route's request body is bounded (`mcp_gateway.body_limit`): oversized bodies get 413.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import Receive, Scope, Send

from green_agent.errors import GatewayError
from green_agent.processes import port_is_free
from green_agent.world_data import WorldData
from mcp_gateway.body_limit import BodyLimitMiddleware
from mcp_gateway.call_log import CallLogWriter
from mcp_gateway.forwarding import ApiForwarder
from mcp_gateway.gateway import Gateway
from mcp_gateway.models import MAX_COMPLETION_WAIT_S, BattleScope, GatewayConfig, HealthReply
from mcp_gateway.scope import COMPLETE_TASK_TOOL
from mcp_gateway.tools import build_tool_specs

logger = logging.getLogger(__name__)
SERVER_NAME = "AppWorld MCP gateway"
MESSAGES_PATH = "/messages/"


def build_gateway(config: GatewayConfig) -> Gateway:
    """Read the docs of `config.appworld_root` and assemble the gateway (no sockets yet)."""
    specs = build_tool_specs(WorldData(config.appworld_root), config.app_names)
    forwarder = ApiForwarder(config.remote_apis_url, connect_timeout_s=config.connect_timeout_s,
                             read_timeout_s=config.read_timeout_s)
    return Gateway(specs, forwarder, CallLogWriter(config.log_path), output_type=config.output_type)


def build_mcp_server(gateway: Gateway) -> Server[Any]:
    """The lowlevel MCP server; `get_tool_input_schema` spares a full tools/list per modern call."""

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=gateway.list_tools())

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await gateway.call_tool(params.name, params.arguments)

    return Server(SERVER_NAME, version="1", on_list_tools=on_list_tools, on_call_tool=on_call_tool,
                  get_tool_input_schema=gateway.input_schema)


def build_app(gateway: Gateway, host: str = "127.0.0.1") -> Starlette:
    """The ASGI app serving both MCP transports and the control endpoints."""
    server = build_mcp_server(gateway)
    security = _security_settings(host)
    manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True,
                                           security_settings=security)
    sse = SseServerTransport(MESSAGES_PATH, security_settings=security)

    async def sse_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with sse.connect_sse(scope, receive, send) as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        except ValueError as exc:  # the transport already answered (e.g. 421 on a foreign Host header)
            if str(exc) != "Request validation failed":
                raise
            logger.warning("SSE connection refused by transport security")

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield
        gateway.forwarder.close()

    routes = [
        Route("/mcp", endpoint=StreamableHTTPASGIApp(manager)),
        Route("/sse", endpoint=_AsgiEndpoint(sse_endpoint), methods=["GET"]),
        Mount(MESSAGES_PATH, app=sse.handle_post_message),
        *control_routes(gateway),
    ]
    return Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(BodyLimitMiddleware)])


def control_routes(gateway: Gateway) -> list[Route]:
    """The Green's HTTP endpoints (JSON in, JSON out)."""

    async def health(_: Request) -> Response:
        return _json(HealthReply(tools=len(gateway.specs), battle=gateway.scope.battle))

    async def put_battle(request: Request) -> Response:
        try:
            body = BattleScope.model_validate_json(await request.body())
        except ValidationError as exc:
            # exc.json() serialises any input (bytes of a non-UTF-8 body too); the input itself is not echoed
            detail = json.loads(exc.json(include_url=False, include_input=False))
            return JSONResponse({"error": "invalid battle body", "detail": detail}, 422)
        state = gateway.scope.set_battle(body)
        if state.scope is not None and COMPLETE_TASK_TOOL not in state.scope:
            logger.warning("battle %s: scope lacks %s, so Blue cannot finish the task", state.battle_id,
                           COMPLETE_TASK_TOOL)
        logger.info("battle %s (task %s) set; scope %s", state.battle_id, state.task_id,
                    "all" if state.scope is None else len(state.scope))
        return _json(state)

    async def delete_battle(_: Request) -> Response:
        previous = gateway.scope.clear_battle()
        return JSONResponse({"cleared": previous.battle_id if previous else None})

    async def completion(request: Request) -> Response:
        battle_id = request.query_params.get("battle_id", "")
        try:
            wait_s = min(max(float(request.query_params.get("wait", "0")), 0.0), MAX_COMPLETION_WAIT_S)
        except ValueError:
            return JSONResponse({"error": "wait must be a number of seconds"}, 422)
        if not battle_id:
            return JSONResponse({"error": "battle_id is required"}, 422)
        return _json(await gateway.scope.wait_completion(battle_id, wait_s))

    return [
        Route("/health", health, methods=["GET"]),
        Route("/control/battle", put_battle, methods=["PUT"]),
        Route("/control/battle", delete_battle, methods=["DELETE"]),
        Route("/control/completion", completion, methods=["GET"]),
    ]


def serve(config: GatewayConfig) -> None:
    """Run the gateway until interrupted. Raises GatewayError if the port is taken."""
    if config.port and not port_is_free(config.port, config.host):
        raise GatewayError(f"port {config.port} on {config.host} is already in use; pick another --port")
    gateway = build_gateway(config)
    logger.info("AppWorld MCP gateway: %d tools, APIs server %s, log %s, http://%s:%d/mcp and /sse",
                len(gateway.specs), config.remote_apis_url, config.log_path, config.host, config.port)
    uvicorn.run(build_app(gateway, config.host), host=config.host, port=config.port, log_level="warning",
                timeout_graceful_shutdown=3)


class _AsgiEndpoint:
    """Wrap an ASGI callable so Starlette's Route treats it as an app (no Response after SSE ends)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def _security_settings(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection on loopback, as the SDK does for its own apps."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def _json(model: Any) -> Response:
    return Response(model.model_dump_json(), media_type="application/json")
