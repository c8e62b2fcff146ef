"""Test clients of a running gateway: `GatewayControl` (the Green's control listener) and
`GatewayClient` (MCP, as a Blue calls it).

MCP calls go over Streamable HTTP (`<base>/mcp`, or SSE `<base>/sse`) with the official `mcp`
client, where `<base>` is a battle's token URL (`GatewayControl.set_battle` returns it); control
calls are plain HTTP (httpx) with the slot's control secret. Use `GatewayClient` as an async context
manager to keep one MCP connection open for many calls; outside a `with`, each call opens its own.

    control = GatewayControl.for_slot(apis_url)
    state = await control.set_battle("b1", "task_1", None)
    async with GatewayClient(battle_url(gateway_url, state)) as gw:
        reply = await gw.call_tool("supervisor__show_profile", {})   # {"response": {...}}
"""

from __future__ import annotations

import time
from contextlib import AsyncExitStack
from typing import Any, Literal

import httpx
import mcp_types as types
from mcp.client import Client
from mcp.client.sse import sse_client

from kernel.errors import GatewayError
from kernel.slot_credentials import new_secret, require_credentials
from kernel.mcp_results import tool_result_payload
from kernel.settings import ScopePolicy
from mcp_gateway.models import MAX_COMPLETION_WAIT_S, BattleScope, BattleState, CompletionReply, ControlHealthReply

Transport = Literal["streamable_http", "sse"]
DEFAULT_TIMEOUT_S = 30.0


def battle_url(gateway_url: str, state: BattleState) -> str:
    """The Blue's MCP base URL for a battle set with a token."""
    return f"{gateway_url.rstrip('/')}/b/{state.token}"


class GatewayClient:
    """MCP calls to one gateway base URL (a battle's token URL, or the plain launch URL)."""

    def __init__(self, base_url: str, transport: Transport = "streamable_http",
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.base_url = base_url.rstrip("/")
        self.transport = transport
        self.timeout_s = timeout_s
        self._stack: AsyncExitStack | None = None
        self._mcp: Client | None = None

    async def __aenter__(self) -> "GatewayClient":
        stack = AsyncExitStack()
        try:
            self._mcp = await stack.enter_async_context(self._new_mcp_client())
        except Exception as exc:
            await stack.aclose()
            raise GatewayError(f"cannot connect to the MCP gateway at {self._mcp_url}: {exc!r}; "
                               f"is `appworld-green mcp` running there?") from exc
        self._stack = stack
        return self

    async def __aexit__(self, *exc: object) -> None:
        stack, self._stack, self._mcp = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    @property
    def _mcp_url(self) -> str:
        return f"{self.base_url}/sse" if self.transport == "sse" else f"{self.base_url}/mcp"

    def _new_mcp_client(self) -> Client:
        server: Any = (sse_client(self._mcp_url, timeout=self.timeout_s, sse_read_timeout=self.timeout_s * 10)
                       if self.transport == "sse" else self._mcp_url)
        # No response cache: the tool list changes with each battle's scope.
        return Client(server, read_timeout_seconds=self.timeout_s, cache=None)

    async def _run(self, action: Any) -> Any:
        if self._mcp is not None:
            return await action(self._mcp)
        async with GatewayClient(self.base_url, self.transport, self.timeout_s) as temporary:
            return await action(temporary._mcp)

    # MCP ---------------------------------------------------------------------------------------

    async def list_tools(self) -> list[types.Tool]:
        """Tools listed now (the active battle's scope, or all)."""

        async def action(client: Client) -> list[types.Tool]:
            tools: list[types.Tool] = []
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    return tools

        return await self._run(action)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call a tool; return `{"response": ...}` (API errors and refusals carry `is_error: true`)."""

        async def action(client: Client) -> types.CallToolResult:
            return await client.call_tool(name, arguments or {})

        return tool_result_payload(await self._run(action))



class GatewayControl:
    """The control listener of one gateway (the Green's side), with its bearer secret."""

    def __init__(self, control_url: str, secret: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.base_url = control_url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {secret}"}
        self.timeout_s = timeout_s

    @classmethod
    def for_slot(cls, apis_url: str) -> "GatewayControl":
        credentials = require_credentials(apis_url)
        assert credentials.control_url, "the gateway has not published its control listener"
        return cls(credentials.control_url, credentials.control_secret.get_secret_value())

    async def health(self) -> ControlHealthReply:
        return ControlHealthReply.model_validate(await self._http("GET", "/control/health"))

    async def set_battle(self, battle_id: str, task_id: str | None, scope: list[str] | None,
                         launch_url_allowed: bool = False, policy: ScopePolicy = "advise") -> BattleState:
        """Attribute the next calls to `battle_id`/`task_id` under a new token; scope tools to `scope` (None: all)
        under `policy`."""
        body = BattleScope(battle_id=battle_id, task_id=task_id, scope=scope, token=new_secret(),
                           launch_url_allowed=launch_url_allowed, policy=policy).model_dump()
        return BattleState.model_validate(await self._http("PUT", "/control/battle", json=body))

    async def clear_battle(self) -> str | None:
        """End the battle (its token is revoked); return its id."""
        return (await self._http("DELETE", "/control/battle")).get("cleared")

    async def wait_for_completion(self, battle_id: str, timeout_s: float) -> CompletionReply:
        """Long-poll until Blue called supervisor__complete_task in `battle_id`, or `timeout_s` passed."""
        deadline = time.monotonic() + max(timeout_s, 0.0)
        while True:
            wait_s = min(max(deadline - time.monotonic(), 0.0), MAX_COMPLETION_WAIT_S)
            reply = CompletionReply.model_validate(await self._http(
                "GET", "/control/completion", params={"battle_id": battle_id, "wait": f"{wait_s:.3f}"},
                timeout=wait_s + 10.0))
            if reply.completed or time.monotonic() >= deadline:
                return reply

    async def _http(self, method: str, path: str, timeout: float | None = None, **kwargs: Any) -> dict[str, Any]:
        url = self.base_url + path
        try:
            async with httpx.AsyncClient(timeout=timeout or self.timeout_s, trust_env=False) as http:
                response = await http.request(method, url, headers=self.headers, **kwargs)
        except httpx.HTTPError as exc:
            raise GatewayError(f"the MCP gateway's control listener at {self.base_url} is unreachable ({exc!r})") from exc
        if response.status_code != 200:
            raise GatewayError(f"the MCP gateway refused {method} {path}: HTTP {response.status_code} {response.text[:300]}")
        return response.json()
