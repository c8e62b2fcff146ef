"""The one naming rule between AppWorld's API names and MCP tool names: `app.api` <-> `app__api`.

AppWorld, the predictors and the gold sets name an API `app.api`; the gateway serves it as the MCP tool
`app__api` (MCP tool names cannot hold a dot for every client). Everyone converts with this pair.
"""

from __future__ import annotations

TOOL_SEPARATOR = "__"
"""Between the app and the API in a tool name."""


def tool_name(api: str) -> str:
    """`app.api` -> `app__api`, at the first dot; a name without a dot is returned unchanged."""
    app, dot, rest = api.partition(".")
    return f"{app}{TOOL_SEPARATOR}{rest}" if dot else api


def api_name(tool: str) -> str:
    """`app__api` -> `app.api`, at the first `__`; a name without `__` (already dotted) is returned unchanged."""
    app, sep, api = tool.partition(TOOL_SEPARATOR)
    return f"{app}.{api}" if sep and app and api else tool
