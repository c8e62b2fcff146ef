"""One MCP session to the AppWorld gateway (Streamable HTTP), callable from sync and async code.

The session lives on its own event loop in a daemon thread, so a reference solution running as
plain synchronous Python (`apis.app.api(...)`) and an async agent tool can both use it, and the
whole run shares one connection instead of opening one per call.

Tool results are returned as the gateway's JSON payload (`kernel.mcp_results.tool_result_payload`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any

from mcp.client.client import Client

from blue_agent.errors import GatewayCallError
from kernel.mcp_results import tool_result_payload

DEFAULT_CALL_TIMEOUT_S = 120.0
DEFAULT_CONNECT_TIMEOUT_S = 30.0


class GatewaySession:
    """A live MCP client session to one gateway endpoint. Use as a context manager.

    Args:
        mcp_url: the gateway's Streamable HTTP endpoint, e.g. `http://127.0.0.1:10000/mcp`.
        call_timeout_s: limit for one tool call.
        connect_timeout_s: limit for connecting and the MCP handshake.
    """

    def __init__(self, mcp_url: str, call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
                 connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S) -> None:
        self.mcp_url = mcp_url
        self.call_timeout_s = call_timeout_s
        self.connect_timeout_s = connect_timeout_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Client | None = None
        self._closing: asyncio.Event | None = None
        self._thread: threading.Thread | None = None

    def open(self) -> "GatewaySession":
        """Connect (blocking); raises GatewayCallError if the gateway does not answer."""
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(ready),), name="gateway-session", daemon=True)
        self._thread.start()
        try:
            ready.result(timeout=self.connect_timeout_s)
        except concurrent.futures.TimeoutError:
            self.close()
            raise GatewayCallError(f"MCP gateway at {self.mcp_url} did not complete the handshake within "
                                   f"{self.connect_timeout_s:.0f} s; is `appworld-green mcp` running?") from None
        except Exception as exc:
            self.close()
            raise GatewayCallError(f"cannot connect to the MCP gateway at {self.mcp_url}: {_describe(exc)}; "
                                   "is `appworld-green mcp` running there?") from exc
        return self

    async def _main(self, ready: concurrent.futures.Future[None]) -> None:
        self._loop = asyncio.get_running_loop()
        self._closing = asyncio.Event()
        try:
            async with Client(self.mcp_url, cache=None, read_timeout_seconds=self.call_timeout_s) as client:
                self._client = client
                ready.set_result(None)
                await self._closing.wait()
        except BaseException as exc:  # noqa: BLE001 - handed to the opener, or dropped at close
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
        finally:
            self._client = None

    def close(self) -> None:
        """End the session and its thread. Safe to call twice."""
        if self._loop is not None and self._closing is not None and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self._closing.set)
            except RuntimeError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> "GatewaySession":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _submit(self, coro: Any) -> concurrent.futures.Future[Any]:
        if self._client is None or self._loop is None:
            coro.close()
            raise GatewayCallError(f"the MCP session to {self.mcp_url} is not open (closed or never connected)")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def call_tool(self, tool_name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call one gateway tool from sync code; return its JSON payload."""
        future = self._submit(self._call(tool_name, arguments or {}))
        try:
            return future.result(timeout=self.call_timeout_s + 5)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise GatewayCallError(f"{tool_name} got no answer from {self.mcp_url} within {self.call_timeout_s:.0f} s") from None

    async def acall_tool(self, tool_name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call one gateway tool from async code running on any other event loop."""
        future = self._submit(self._call(tool_name, arguments or {}))
        return await asyncio.wait_for(asyncio.wrap_future(future), timeout=self.call_timeout_s + 5)

    def list_tool_names(self) -> list[str]:
        """Names of the tools the gateway lists right now (the battle's scope)."""
        return self._submit(self._list()).result(timeout=self.call_timeout_s)

    async def _call(self, tool_name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        assert self._client is not None
        try:
            result = await self._client.call_tool(tool_name, arguments)
        except Exception as exc:
            raise GatewayCallError(f"MCP call {tool_name} to {self.mcp_url} failed: {_describe(exc)}") from exc
        return tool_result_payload(result)

    async def _list(self) -> list[str]:
        assert self._client is not None
        result = await self._client.list_tools()
        return [tool.name for tool in result.tools]


def _describe(exc: BaseException) -> str:
    """A one-line reason, unwrapping anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
