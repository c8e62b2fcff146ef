"""The advise policy's generic tool: `call_api(app_name, api_name, arguments)` calls any AppWorld API.

Under `advise` a battle's `tools/list` offers the scoped APIs, AppWorld's own api_docs tools and this
one tool. An agent that found an API outside the scope (with `api_docs__show_api_descriptions` and
`api_docs__show_api_doc`) calls it through `call_api`; the gateway forwards it exactly as a direct
call of `<app>__<api>` and logs it under that name with `in_scope: false`.

Why a generic tool and not an MCP `notifications/tools/list_changed`: the gateway serves stateless
Streamable HTTP (no session to push a notification on), and the SDKs our Blues run on
(openai-agents, OpenAI chat completions) fix the tool list per request or cache it per server, so a
changed list would not reach the model within the task; one more tool always does.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import mcp_types as types

from kernel.api_names import tool_name

CALL_API_TOOL = "call_api"
DOCS_TOOLS = ("api_docs__show_app_descriptions", "api_docs__show_api_descriptions", "api_docs__show_api_doc")
"""AppWorld's API-docs tools offered with every advised scope (app list, one app's APIs, one API's doc)."""

CALL_API_DEFINITION = types.Tool(
    name=CALL_API_TOOL,
    description=("Call any AppWorld API, also one not listed as a tool here. Look it up first with "
                 "api_docs__show_api_descriptions(app_name) and api_docs__show_api_doc(app_name, api_name), then pass "
                 "its arguments (e.g. access_token) as the `arguments` object."),
    input_schema={
        "type": "object",
        "properties": {
            "app_name": {"type": "string", "description": "AppWorld app, e.g. gmail."},
            "api_name": {"type": "string", "description": "API of that app, e.g. show_thread."},
            "arguments": {"type": "object", "description": "The API's arguments by name.", "default": {}},
        },
        "required": ["app_name", "api_name"],
    },
)


class ApiCall(NamedTuple):
    """The API a `call_api` invocation names, as a tool name, and its arguments."""

    tool_name: str
    arguments: dict[str, Any]


def unwrap(arguments: dict[str, Any]) -> ApiCall | str:
    """`call_api`'s arguments -> the target tool and its arguments, or a message saying what is wrong."""
    app, api, inner = arguments.get("app_name"), arguments.get("api_name"), arguments.get("arguments") or {}
    if not isinstance(app, str) or not isinstance(api, str) or not app or not api:
        return "call_api needs app_name and api_name (strings), e.g. app_name='gmail', api_name='show_thread'."
    if not isinstance(inner, dict):
        return "call_api's `arguments` must be an object mapping argument names to values."
    return ApiCall(tool_name(f"{app}.{api}"), dict(inner))
