"""The bridge's side of our MCP gateway: one MCP session on the battle's token URL.

The bridge calls the gateway exactly as an MCP Blue does (the official `mcp` client over Streamable
HTTP, the battle's capability URL from the task message), so scope policy, refusals, redaction, the
call log and every trajectory metric are the MCP path's. A refused or failed call is a tool result
(data for the purple); only a transport failure (the gateway down, a call with no answer) raises
`GatewayUnavailable`, which is ours, never the purple's.
"""

from __future__ import annotations

from typing import Any

from mcp.client.client import Client

from kernel.a2a_tools import function_schema
from kernel.mcp_results import tool_result_payload

CALL_TIMEOUT_S = 120.0


class GatewayUnavailable(Exception):
    """The gateway could not be reached or did not answer (infrastructure)."""


class GatewayTools:
    """An open MCP session; `schemas()` lists the battle's tools, `call()` runs one."""

    def __init__(self, mcp_url: str, call_timeout_s: float = CALL_TIMEOUT_S) -> None:
        self.mcp_url, self.call_timeout_s = mcp_url, call_timeout_s
        self._cm: Client | None = None
        self._client: Any = None

    async def __aenter__(self) -> "GatewayTools":
        self._cm = Client(self.mcp_url, cache=None, read_timeout_seconds=self.call_timeout_s)
        try:
            self._client = await self._cm.__aenter__()
        except Exception as exc:  # noqa: BLE001 - anyio groups, OSError, timeouts: all the same to us
            raise GatewayUnavailable(f"cannot open an MCP session to the gateway: {_describe(exc)}") from None
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._cm is not None:
            try:
                await self._cm.__aexit__(None, None, None)
            except Exception:  # noqa: BLE001 - closing a dead session must not hide the outcome
                pass

    async def schemas(self) -> list[dict[str, Any]]:
        """The battle's tools (as the gateway lists them for this token) as OpenAI function schemas."""
        try:
            listed = await self._client.list_tools()
        except Exception as exc:  # noqa: BLE001
            raise GatewayUnavailable(f"the gateway's tools/list failed: {_describe(exc)}") from None
        return [function_schema(t.name, t.description or t.name, dict(t.input_schema or {"type": "object"}))
                for t in listed.tools]

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """One tools/call; the API's JSON (an error as `{"is_error": true, "message": ...}`)."""
        try:
            result = await self._client.call_tool(name, arguments)
        except Exception as exc:  # noqa: BLE001
            raise GatewayUnavailable(f"the gateway did not answer {name}: {_describe(exc)}") from None
        return tool_result_payload(result).get("response")


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return type(exc).__name__
