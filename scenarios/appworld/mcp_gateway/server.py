"""The gateway's two listeners, served by one process on one event loop.

Blue-facing (`--host`:`--port`), what the agent under test may reach:
- `/b/<token>/mcp` (Streamable HTTP, stateless) and `/b/<token>/sse` + `/b/<token>/messages/` (SSE):
  the running battle's capability URL (its task message names it);
- `/mcp`, `/sse` + `/messages/`: the launch URL, served only to a battle that allows it;
- `GET /health` -> HealthReply (up; nothing about the battle).
Every call is checked when it is handled (`Gateway.call_tool`), against the token of the HTTP request
that carried it, so an SSE session opened in one battle cannot act in the next.

Control (127.0.0.1, an ephemeral port written into the slot's credentials file), the Green only;
every request needs `Authorization: Bearer <control secret>` (the secret is read from the
credentials file, never from argv), bodies are capped (`mcp_gateway.body_limit`):
- `GET /control/health` -> ControlHealthReply
- `PUT /control/battle` (BattleScope) -> BattleState; `DELETE /control/battle` -> ClearedReply (after its
  calls in flight settled). The battle's token and the secrets the Green sent with it are registered with the
  scrubber (`kernel.scrubber`), never kept in the battle's state or echoed
- `POST /control/battle/end?battle_id=B` -> EpisodeEndedReply: the episode is over (later calls refused),
  answered once its calls in flight have been answered and logged
- `GET /control/completion?battle_id=B&wait=S` -> CompletionReply (long-poll, S <= 60)

Both MCP transports share one lowlevel `Server` whose handlers call the transport-free `Gateway`.
Every route's request body is bounded (`mcp_gateway.body_limit`): oversized bodies get 413.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
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

from kernel.errors import GatewayError
from kernel.ports import port_is_free
from kernel.scrubber import register_battle_secrets
from kernel.slot_credentials import SlotCredentials, port_of, require_credentials, save_credentials
from kernel.world_data import WorldData
from mcp_gateway.body_limit import BodyLimitMiddleware
from mcp_gateway.code.session import GRACE_S
from kernel.call_log import CallLogWriter
from mcp_gateway.forwarding import ApiForwarder
from mcp_gateway.code.sandbox import SandboxUnavailable
from mcp_gateway.code_mode import CodeRunner
from mcp_gateway.gateway import Gateway
from mcp_gateway.models import (COMPLETING_WAIT_S, MAX_COMPLETION_WAIT_S, BattleScope, ClearedReply, ControlHealthReply,
                                GatewayConfig, HealthReply)
from mcp_gateway.scope import COMPLETE_TASK_TOOL
from mcp_gateway.tools import build_tool_specs

logger = logging.getLogger(__name__)
SERVER_NAME = "AppWorld MCP gateway"
MESSAGES_PATH = "/messages/"
TOKEN_PREFIX = "/b/{token}"


def build_gateway(config: GatewayConfig, credentials: SlotCredentials | None = None) -> Gateway:
    """Read the docs of `config.appworld_root` and assemble the gateway (no sockets yet)."""
    specs = build_tool_specs(WorldData(config.appworld_root), config.app_names)
    forwarder = ApiForwarder(config.remote_apis_url, connect_timeout_s=config.connect_timeout_s,
                             read_timeout_s=config.read_timeout_s,
                             guard_headers=credentials.guard_headers() if credentials else None)
    code = CodeRunner(specs, config.log_path, config.appworld_python, config.unsafe_code_in_process,
                      sandbox=config.code_sandbox, spares=config.code_spares)
    return Gateway(specs, forwarder, CallLogWriter(config.log_path), output_type=config.output_type, code=code)


def build_mcp_server(gateway: Gateway) -> Server[Any]:
    """The lowlevel MCP server; `get_tool_input_schema` spares a full tools/list per modern call."""

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=gateway.list_tools(_token_of(ctx)))

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await gateway.call_tool(params.name, params.arguments, _token_of(ctx))

    return Server(SERVER_NAME, version="1", on_list_tools=on_list_tools, on_call_tool=on_call_tool,
                  get_tool_input_schema=gateway.input_schema)


def _token_of(ctx: Any) -> str | None:
    """The token of the HTTP request that carried this MCP message (None: the plain launch URL)."""
    request = getattr(ctx, "request", None)
    path_params = getattr(request, "path_params", None) or {}
    token = path_params.get("token")
    return token if isinstance(token, str) else None


def build_app(gateway: Gateway, host: str = "127.0.0.1", spares_at_start: bool = False) -> Starlette:
    """The Blue-facing ASGI app: both MCP transports, at the token URL and the launch URL, and `/health`.
    `spares_at_start`: spawn the code runner's spare REPLs before serving (a code-mode run)."""
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
        if spares_at_start and gateway.code is not None:
            await anyio.to_thread.run_sync(_ready_spares, gateway.code)
        async with manager.run():
            yield
        gateway.forwarder.close()
        if gateway.code is not None:
            await anyio.to_thread.run_sync(gateway.code.shutdown)

    async def health(_: Request) -> Response:
        return _json(HealthReply())

    mcp_routes = [
        Route("/mcp", endpoint=StreamableHTTPASGIApp(manager)),
        Route("/sse", endpoint=_AsgiEndpoint(sse_endpoint), methods=["GET"]),
        Mount(MESSAGES_PATH, app=sse.handle_post_message),
    ]
    routes = [
        *mcp_routes,
        Mount(TOKEN_PREFIX, app=_TokenGate(gateway, Starlette(routes=mcp_routes))),
        Route("/health", health, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(BodyLimitMiddleware)])


def build_control_app(gateway: Gateway, control_secret: str) -> Any:
    """The Green's control listener (an ASGI app): `control_routes` behind the bearer secret and body cap."""
    return _BearerGate(Starlette(routes=control_routes(gateway), middleware=[Middleware(BodyLimitMiddleware)]),
                       control_secret)


def control_routes(gateway: Gateway) -> list[Route]:
    """The Green's HTTP endpoints (JSON in, JSON out)."""

    async def health(_: Request) -> Response:
        return _json(ControlHealthReply(tools=len(gateway.specs), battle=gateway.scope.battle))

    async def put_battle(request: Request) -> Response:
        try:
            body = BattleScope.model_validate_json(await request.body())
        except ValidationError as exc:
            # exc.json() serialises any input (bytes of a non-UTF-8 body too); the input itself is not echoed
            detail = json.loads(exc.json(include_url=False, include_input=False))
            return JSONResponse({"error": "invalid battle body", "detail": detail}, 422)
        if body.interaction == "code" and (gateway.code is None or not body.task_datetime):
            return JSONResponse({"error": "a code-mode battle needs task_datetime and a gateway that runs code"}, 422)
        register_battle_secrets(body.battle_id, [*body.secrets, body.token])  # never in a record, log or reply
        await _stop_code(gateway)
        state = gateway.scope.set_battle(body)
        if body.interaction == "code":
            assert gateway.code is not None
            try:
                state.isolation = await anyio.to_thread.run_sync(gateway.code.start, state)
            except SandboxUnavailable as exc:
                gateway.scope.clear_battle()
                return JSONResponse({"error": str(exc)}, 503)
        if state.scope is not None and COMPLETE_TASK_TOOL not in state.scope:
            logger.warning("battle %s: scope lacks %s, so Blue cannot finish the task", state.battle_id,
                           COMPLETE_TASK_TOOL)
        logger.info("battle %s (task %s) set; scope %s", state.battle_id, state.task_id,
                    "all" if state.scope is None else len(state.scope))
        return _json(state)

    async def delete_battle(_: Request) -> Response:
        generation = gateway.scope.generation
        await _stop_code(gateway)
        previous = gateway.scope.clear_battle()
        await gateway.scope.drain(generation)  # its queued calls are refused, its forwarded ones logged
        return _json(ClearedReply(cleared=previous.battle_id if previous else None, battle=previous))

    async def end_episode(request: Request) -> Response:
        battle_id = request.query_params.get("battle_id", "")
        if not battle_id:
            return JSONResponse({"error": "battle_id is required"}, 422)
        if gateway.scope.battle is not None and gateway.scope.battle.battle_id == battle_id:
            if request.query_params.get("completed") == "1":  # AppWorld's step: the completing execution ends
                await gateway.scope.wait_executions(gateway.scope.generation, _completing_wait_s(gateway))
            await _stop_code(gateway)  # a running execution ends now, so its call settles before the drain
        return _json(await gateway.scope.end_episode(battle_id))

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
        Route("/control/health", health, methods=["GET"]),
        Route("/control/battle", put_battle, methods=["PUT"]),
        Route("/control/battle", delete_battle, methods=["DELETE"]),
        Route("/control/battle/end", end_episode, methods=["POST"]),
        Route("/control/completion", completion, methods=["GET"]),
    ]


def _completing_wait_s(gateway: Gateway) -> float:
    """How long the execution that completed the task may still run: its own timeout and grace, within a cap."""
    timeout = gateway.code.limits.timeout_s if gateway.code is not None else None
    return min(COMPLETING_WAIT_S, (timeout + GRACE_S + 5.0) if timeout else COMPLETING_WAIT_S)


def _ready_spares(code: CodeRunner) -> None:
    """Spawn the spares now (they import at idle priority while the slot starts); where code cannot run here
    the first code battle is refused as before, so this only logs."""
    try:
        code.top_up()
    except SandboxUnavailable as exc:
        logger.warning("no spare REPLs at start: %s", exc)


async def _stop_code(gateway: Gateway) -> None:
    """Kill the running code-mode battle's REPL, if any (off the event loop: it waits for its processes)."""
    if gateway.code is not None:
        await anyio.to_thread.run_sync(gateway.code.stop)


def serve(config: GatewayConfig) -> None:
    """Run both listeners until interrupted. Raises GatewayError if the port is taken or the slot has no
    credentials (the Green creates them before it starts the gateway)."""
    if config.port and not port_is_free(config.port, config.host):
        raise GatewayError(f"port {config.port} on {config.host} is already in use; pick another --port")
    try:
        credentials = require_credentials(config.remote_apis_url)
    except Exception as exc:  # noqa: BLE001 - an InfrastructureError naming the file
        raise GatewayError(str(exc)) from None
    gateway = build_gateway(config, credentials)
    with _control_socket() as control_socket:
        credentials.control_port = control_socket.getsockname()[1]
        save_credentials(port_of(config.remote_apis_url), credentials)
        logger.info("AppWorld MCP gateway: %d tools, APIs server %s, log %s, http://%s:%d/mcp and /sse; control "
                    "on 127.0.0.1:%d", len(gateway.specs), config.remote_apis_url, config.log_path, config.host,
                    config.port, credentials.control_port)
        blue = uvicorn.Server(uvicorn.Config(build_app(gateway, config.host, config.code_spares_at_start),
                                             host=config.host, port=config.port,
                                             log_level="warning", timeout_graceful_shutdown=3))
        control = _ControlServer(uvicorn.Config(
            build_control_app(gateway, credentials.control_secret.get_secret_value()), log_level="warning",
            timeout_graceful_shutdown=1, lifespan="off"))
        asyncio.run(_serve_both(blue, control, control_socket))


async def _serve_both(blue: uvicorn.Server, control: uvicorn.Server, control_socket: socket.socket) -> None:
    """Serve until the Blue-facing server stops (it handles SIGINT/SIGTERM), then stop the control one."""
    control_task = asyncio.create_task(control.serve(sockets=[control_socket]))
    try:
        await blue.serve()
    finally:
        control.should_exit = True
        await control_task


class _ControlServer(uvicorn.Server):
    """The control listener leaves signals to the Blue-facing server, which stops both."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.contextmanager
def _control_socket() -> Iterator[socket.socket]:
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say so, and without it every
    # long-poll answer waited ~40 ms for a delayed ACK (Nagle) before its body left
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.bind(("127.0.0.1", 0))
        sock.set_inheritable(True)
        yield sock
    finally:
        sock.close()


class _TokenGate:
    """The token URL's door: opening an SSE session with a token that is not the running battle's gets a
    404. Messages and Streamable HTTP requests pass on, so each call is refused, answered and logged by
    the per-call check in `Gateway` (an ended battle's Blue gets a clear error, not a silent timeout)."""

    def __init__(self, gateway: Gateway, app: Any) -> None:
        self.gateway, self.app = gateway, app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = str((scope.get("path_params") or {}).get("token", ""))
        opens_session = scope["type"] == "http" and scope.get("method") == "GET" and scope.get("path", "").endswith("/sse")
        if opens_session and self.gateway.scope.authorize(token) is not None:
            await JSONResponse({"error": "unknown or ended battle"}, 404)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class _BearerGate:
    """Control listener guard: a request without the slot's control secret gets 401 (bodies are bounded by
    `BodyLimitMiddleware` inside)."""

    def __init__(self, app: Any, secret: str) -> None:
        self.app, self.expected = app, f"Bearer {secret}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if not hmac.compare_digest(headers.get(b"authorization", b""), self.expected):
                await JSONResponse({"error": "control routes need the slot's control secret"}, 401)(scope, receive, send)
                return
        await self.app(scope, receive, send)


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
