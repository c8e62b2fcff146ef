"""The bridge's side of our MCP gateway: one MCP session on the battle's token URL.

The bridge calls the gateway exactly as an MCP Blue does (the official `mcp` client over Streamable
HTTP, the battle's capability URL from the task message), so scope policy, refusals, redaction, the
call log and every trajectory metric are the MCP path's. A refused or failed call is a tool result
(data for the purple). Who failed, when a call does not come back as a result:
- the gateway answered 413 (the purple's arguments are over its body limit) or the arguments cannot be
  sent as JSON at all: `PurpleCallRefused`, the purple's own fault (it chose those bytes);
- anything else (the gateway down, a call with no answer, a 5xx): `GatewayUnavailable`, ours.
Text crosses the bridge encodable both ways (`kernel.encodable`): a lone surrogate in a purple's arguments (its
code) or in an answer (an output the agent's sandbox wrote) becomes U+FFFD instead of a request no one can encode
(the MCP client hung on one for the whole battle) or an answer the purple's A2A message cannot carry.
The session's HTTP requests carry the battle's `traceparent` header when the engine sent one (W3C Trace Context).
Each `ToolOutcome` carries the gateway's own episode state (`kernel.mcp_results.episode_over`), so the
conversation ends when the gateway says the episode is over, however `complete_task` was called.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import anyio
import httpx
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from kernel.a2a_tools import function_schema
from kernel.encodable import encodable
from kernel.mcp_results import episode_over, tool_result_payload

CALL_TIMEOUT_S = 300.0
"""Longest wait for one gateway call: above a code-mode `execute`'s worst case on our side (a REPL replaced and
ready within 120 s, then AppWorld's 100 s timeout, 5 s of grace, reaping and writes within 20 s), so an execution
the agent's code stretched to its limit never surfaces as our gateway timing out (a retry)."""
CALL_GRACE_S = 10.0
"""A call the MCP client has not returned from this long after its own read timeout is ended here."""
PURPLE_CAUSED_STATUSES = frozenset({413})


class GatewayUnavailable(Exception):
    """The gateway could not be reached or did not answer (infrastructure)."""


class PurpleCallRefused(Exception):
    """The purple's tool call could not be carried to the gateway as it was (its arguments): the purple's fault."""


class ToolOutcome(NamedTuple):
    response: Any
    """The API's JSON, or an error as `{"is_error": true, "message": ...}`."""
    episode_over: bool
    """The gateway says the battle's episode is over after this call."""


class GatewayTools:
    """An open MCP session; `schemas()` lists the battle's tools, `call()` runs one."""

    def __init__(self, mcp_url: str, call_timeout_s: float = CALL_TIMEOUT_S,
                 headers: dict[str, str] | None = None) -> None:
        self.mcp_url, self.call_timeout_s, self.headers = mcp_url, call_timeout_s, headers or {}
        self._cm: Client | None = None
        self._client: Any = None
        self._http: Any = None

    async def __aenter__(self) -> "GatewayTools":
        server: Any = self.mcp_url
        if self.headers:  # the MCP client's own HTTP client and timeouts, with our headers on every request
            self._http = create_mcp_http_client(headers=self.headers)
            server = streamable_http_client(self.mcp_url, http_client=self._http)
        self._cm = Client(server, cache=None, read_timeout_seconds=self.call_timeout_s)
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
        if self._http is not None:
            try:
                await self._http.aclose()
            except Exception:  # noqa: BLE001 - the same
                pass

    async def schemas(self) -> list[dict[str, Any]]:
        """The battle's tools (as the gateway lists them for this token) as OpenAI function schemas."""
        try:
            listed = await self._client.list_tools()
        except Exception as exc:  # noqa: BLE001
            raise GatewayUnavailable(f"the gateway's tools/list failed: {_describe(exc)}") from None
        return [function_schema(t.name, t.description or t.name, dict(t.input_schema or {"type": "object"}))
                for t in listed.tools]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """One tools/call (see the module docstring for what it raises)."""
        arguments = encodable(arguments)
        try:
            json.dumps(arguments, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise PurpleCallRefused(f"the arguments of {name} cannot be sent as JSON ({type(exc).__name__})") from None
        try:
            with anyio.fail_after(self.call_timeout_s + CALL_GRACE_S):  # whatever the MCP client waits on
                result = await self._client.call_tool(name, arguments)
        except Exception as exc:  # noqa: BLE001
            status = _status(exc)
            if status in PURPLE_CAUSED_STATUSES:
                raise PurpleCallRefused(f"the gateway refused the call of {name} as too large (HTTP {status})") from None
            raise GatewayUnavailable(f"the gateway did not answer {name}: {_describe(exc)}") from None
        return ToolOutcome(encodable(tool_result_payload(result).get("response")), episode_over(result))


def _innermost(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _status(exc: BaseException) -> int | None:
    """The HTTP status behind an MCP client failure, if the gateway answered one."""
    seen: BaseException | None = _innermost(exc)
    while seen is not None:
        if isinstance(seen, httpx.HTTPStatusError):
            return seen.response.status_code
        seen = seen.__cause__ or seen.__context__
    return None


def _describe(exc: BaseException) -> str:
    return type(_innermost(exc)).__name__
