"""Step 4: the text message that hands the task to Blue.

Plain text (never a JSON object: AgentBeats would take one with agent_name/battle_id keys for its
own battle_info). The machine-readable lines Blues parse (task id, the gateway's two endpoints) are
the format of `kernel.task_message`; they are followed by the instruction, the supervisor, the task's date and time, the scoped tools as
`app__api` names, and how to finish (`supervisor__complete_task`, with `answer=` for questions).
Under the `advise` policy the message also names the API-docs tools and `call_api`, with which any
AppWorld API outside the scope can be looked up and called; under `enforce` only the scope is offered.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from green_agent.appworld_client import TaskInfo
from kernel.task_message import machine_lines
from kernel.api_names import tool_name

DOCS_TOOLS = ("api_docs__show_app_descriptions", "api_docs__show_api_descriptions", "api_docs__show_api_doc")
"""What the gateway lists beside an advised scope (the same names as `mcp_gateway.call_api`)."""
CALL_API_TOOL = "call_api"


class TaskMessage(BaseModel):
    """Step 4 output."""

    text: str = Field(description="The message sent to Blue.")
    tool_names: list[str] = Field(description="Scoped tools as `app__api` names, in scope order.")
    mcp_url: str | None = Field(description="Streamable HTTP endpoint of the gateway.")
    sse_url: str | None = Field(description="SSE endpoint of the gateway.")


def build_task_message(task: TaskInfo, scope_apis: list[str] | None, gateway_url: str | None,
                       policy: str = "advise") -> TaskMessage:
    """Step 4: assemble Blue's task message.

    Args:
        task: `/initialize` output.
        scope_apis: scoped APIs as `app.api`, or None when every tool is exposed.
        gateway_url: base URL of the MCP gateway (None only in tests that bypass it).
        policy: `advise` (the scope is guidance; other APIs stay reachable) or `enforce`.
    """
    tools = [tool_name(a) for a in scope_apis] if scope_apis is not None else []
    mcp_url = f"{gateway_url.rstrip('/')}/mcp" if gateway_url else None
    sse_url = f"{gateway_url.rstrip('/')}/sse" if gateway_url else None
    lines = [
        "You are being evaluated on an AppWorld task. Act on the supervisor's behalf using the AppWorld tools.",
        "",
        *machine_lines(task.task_id, mcp_url, sse_url),
        "",
        *task_lines(task),
        "",
    ]
    lines += _tool_lines(tools, scope_apis is None, policy)
    lines += [
        "",
        "How to work: get account passwords with supervisor__show_account_passwords, log in to each app with its "
        "login tool, pass the access_token to later calls, and keep paging (page_index) until a page comes back "
        "short or empty.",
        "How to finish: call supervisor__complete_task exactly once when done. If the task asks a question, pass the "
        "answer as answer=<value>; otherwise call it with no answer. Use status=\"fail\" only if you cannot do the task.",
    ]
    return TaskMessage(text="\n".join(lines), tool_names=tools, mcp_url=mcp_url, sse_url=sse_url)


def task_lines(task: TaskInfo, clock_note: str = "") -> list[str]:
    """The instruction, the supervisor and the task's date and time (both interaction modes)."""
    sup = task.supervisor
    return ["Task instruction:", task.instruction, "",
            f"Supervisor: {sup.first_name} {sup.last_name}".rstrip(), f"Supervisor email: {sup.email}",
            f"Supervisor phone: {sup.phone_number}", f"Current date and time: {task.datetime}{clock_note}"]


def _tool_lines(tools: list[str], unscoped: bool, policy: str) -> list[str]:
    if unscoped:
        return ["Tools: every AppWorld tool the MCP endpoint lists."]
    if policy == "enforce":
        return [f"Tools you may use ({len(tools)}): " + ", ".join(tools)]
    return [
        f"Tools suggested for this task ({len(tools)}): " + ", ".join(tools),
        "If you need an AppWorld API that is not listed, look it up with " + ", ".join(DOCS_TOOLS)
        + f", then call it with {CALL_API_TOOL}(app_name, api_name, arguments).",
    ]
