"""Step 4 in code mode: the task message of an agent that writes Python against `apis` in a REPL.

The machine-read lines are the tool mode's (`kernel.task_message`): the gateway's endpoints, where the
battle lists one tool, `execute`. The rest tells the model it works in a stateful Python REPL (AppWorld's
`/execute` semantics), lists the scoped APIs as `apis.<app>.<api>(<parameters>)` with their
descriptions (from the world's API docs; every API when the battle is unscoped is too long, so then it
points to `apis.api_docs`), and says how to finish: `apis.supervisor.complete_task(...)`.
"""

from __future__ import annotations

from typing import Any

from green_agent.appworld_client import TaskInfo
from green_agent.steps.task_message import TaskMessage, task_lines
from kernel.api_names import tool_name
from kernel.task_message import machine_lines
from kernel.world_data import ApiDoc

MAX_DESCRIPTION_CHARS = 160


def signature(doc: ApiDoc) -> str:
    """`apis.app.api(name: type, name: type = default)` from an API's doc."""
    params = []
    for param in doc.parameters:
        text = f"{param.get('name')}: {param.get('type') or 'any'}"
        if not param.get("required"):
            text += f" = {param.get('default')!r}"
        params.append(text)
    return f"apis.{doc.app_name}.{doc.api_name}({', '.join(params)})"


def api_lines(scope_apis: list[str] | None, docs: dict[str, dict[str, ApiDoc]] | None, policy: str) -> list[str]:
    if scope_apis is None:
        return ["APIs: every AppWorld API is on `apis`. Look them up with apis.api_docs.show_app_descriptions(), "
                "apis.api_docs.show_api_descriptions(app_name=...) and apis.api_docs.show_api_doc(app_name=..., "
                "api_name=...)."]
    lines = [f"APIs {'you may use' if policy == 'enforce' else 'suggested for this task'} ({len(scope_apis)}):"]
    for api in scope_apis:
        app, _, name = api.partition(".")
        doc = (docs or {}).get(app, {}).get(name)
        lines.append(f"- {signature(doc)}: {_short(doc.description)}" if doc else f"- apis.{app}.{name}(...)")
    if policy == "enforce":
        lines.append("Other APIs are refused: calling one raises an exception in your code.")
    else:
        lines.append("Other APIs are callable too; look them up with apis.api_docs.show_api_doc(app_name=..., "
                     "api_name=...).")
    return lines


def build_code_message(task: TaskInfo, scope_apis: list[str] | None, gateway_url: str | None, policy: str,
                       docs: dict[str, dict[str, ApiDoc]] | None) -> TaskMessage:
    """Step 4 (code mode): the message of a battle whose agent acts through the `execute` tool."""
    mcp_url = f"{gateway_url.rstrip('/')}/mcp" if gateway_url else None
    sse_url = f"{gateway_url.rstrip('/')}/sse" if gateway_url else None
    lines: list[Any] = [
        "You are being evaluated on an AppWorld task. You work in a stateful Python REPL: send Python code to the "
        "MCP tool `execute` ({\"code\": \"...\"}) and read its output; variables persist between executions.",
        "",
        *machine_lines(task.task_id, mcp_url, sse_url),
        "Interaction: code (one tool, execute)",
        "",
        *task_lines(task, " (datetime.now() in the REPL returns it)"),
        "",
        "Call AppWorld APIs as apis.<app>.<api>(**kwargs): each returns the API's JSON and raises an exception on "
        "an API error. print() what you need to see; the output is what your code printed, 'Execution "
        "successful.', or 'Execution failed. Traceback: ...'. There is no network, no file of the task and no "
        "`requester`; only `apis`.",
        *api_lines(scope_apis, docs, policy),
        "",
        "How to work: get account passwords with apis.supervisor.show_account_passwords(), log in to each app "
        "with apis.<app>.login(username=..., password=...), pass its access_token to later calls, and keep paging "
        "(page_index) until a page comes back short or empty.",
        "How to finish: call apis.supervisor.complete_task() exactly once when done. If the task asks a question, "
        "pass the answer: apis.supervisor.complete_task(answer=<value>). Use status=\"fail\" only if you cannot "
        "do the task.",
    ]
    tools = [tool_name(a) for a in scope_apis] if scope_apis is not None else []
    return TaskMessage(text="\n".join(lines), tool_names=tools, mcp_url=mcp_url, sse_url=sse_url)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_DESCRIPTION_CHARS else text[:MAX_DESCRIPTION_CHARS - 3] + "..."
