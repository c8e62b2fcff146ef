"""AppWorld's `apis` object, rebuilt over the gateway's MCP tools.

A reference solution is `def solution(apis, requester): ...` and calls
`apis.<app>.<api>(**kwargs)`. Here each such call becomes the MCP tool call `<app>__<api>`, and
the result is unwrapped the way AppWorld's requester does with `raise_on_failure=True`: the API's
JSON is returned, an API error raises `AppWorldApiError` with the API's message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from blue_agent.errors import AppWorldApiError, GatewayCallError, ReferenceSolutionError
from kernel.api_names import tool_name

ToolCaller = Callable[[str, dict[str, Any]], dict[str, Any]]
"""`(tool_name, arguments) -> {"response": ...}`, e.g. `GatewaySession.call_tool`."""


def unwrap_response(tool_name: str, payload: dict[str, Any]) -> Any:
    """Return the API JSON inside a gateway payload; raise AppWorldApiError for `is_error` results."""
    if not isinstance(payload, dict) or "response" not in payload:
        raise GatewayCallError(f"{tool_name}: the gateway answered without a `response` field: {str(payload)[:200]}")
    response = payload["response"]
    if isinstance(response, dict) and response.get("is_error") is True:
        raise AppWorldApiError(tool_name, str(response.get("message", "API call failed")))
    return response


class _Api:
    def __init__(self, call: ToolCaller, app_name: str, api_name: str) -> None:
        self._call = call
        self._tool_name = tool_name(f"{app_name}.{api_name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if args:
            raise TypeError(f"apis call {self._tool_name} takes keyword arguments only, as in AppWorld")
        return unwrap_response(self._tool_name, self._call(self._tool_name, kwargs))

    def __repr__(self) -> str:
        return f"<AppWorld API {self._tool_name} over MCP>"


class _App:
    def __init__(self, call: ToolCaller, app_name: str) -> None:
        self._call = call
        self._app_name = app_name

    def __getattr__(self, api_name: str) -> _Api:
        if api_name.startswith("_"):
            raise AttributeError(api_name)
        return _Api(self._call, self._app_name, api_name)


class McpApis:
    """`apis` for reference solutions: `apis.spotify.login(...)` calls MCP tool `spotify__login`."""

    def __init__(self, call: ToolCaller) -> None:
        self._call = call

    def __getattr__(self, app_name: str) -> _App:
        if app_name.startswith("_"):
            raise AttributeError(app_name)
        return _App(self._call, app_name)


class UnavailableRequester:
    """Stands in for AppWorld's `requester`: raw HTTP is not offered over MCP, so any use fails loudly."""

    def __getattr__(self, name: str) -> Any:
        raise NotImplementedError(f"requester.{name} is not available to a Blue that works through MCP; use apis.<app>.<api>()")


def run_solution(source: str, call: ToolCaller, wrap: Callable[[McpApis], Any] | None = None) -> None:
    """Execute a reference solution's source and call its `solution(apis, requester)`.

    The source is the world's own ground truth (trusted, read from APPWORLD_ROOT), not agent input. `wrap`: what
    the solution gets instead of the `apis` over `call` (a policy around it, `blue_agent.replay_policy`).
    """
    namespace: dict[str, Any] = {"__name__": "appworld_reference_solution"}
    exec(compile(source, "<reference solution>", "exec"), namespace)  # noqa: S102 - trusted world data
    solution = namespace.get("solution")
    if not callable(solution):
        raise ReferenceSolutionError("the reference solution defines no `solution(apis, requester)` function")
    apis = McpApis(call)
    solution(wrap(apis) if wrap is not None else apis, UnavailableRequester())
