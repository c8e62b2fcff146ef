"""The Green->Blue task message format: the one A2A text a Blue receives per battle.

The Green's message (composed by `green_agent.steps.task_message`) is prose with a few fixed lines,
written by `machine_lines` and read back by `parse_task_message` (the contract between Green and Blue):

    AppWorld task id: <task_id>
    MCP endpoint (Streamable HTTP): <url>/mcp
    MCP endpoint (SSE): <url>/sse

Only these lines are machine-read; everything else is for the model. The task id is checked with
the Green's own rules (`kernel.task_ids`) before it is used to build any path, and the
endpoints must be plain http(s) URLs.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from kernel import task_ids
from kernel.errors import BadInputError, TaskMessageError

MAX_MESSAGE_CHARS = 200_000
TASK_ID_LINE = "AppWorld task id: "
MCP_HTTP_LINE = "MCP endpoint (Streamable HTTP): "
MCP_SSE_LINE = "MCP endpoint (SSE): "

_TASK_LINE = re.compile(r"^[ \t]*AppWorld task id:[ \t]*(\S*)[ \t]*$", re.MULTILINE)
_MCP_LINE = re.compile(r"^[ \t]*MCP endpoint \(Streamable HTTP\):[ \t]*(\S*)[ \t]*$", re.MULTILINE)
_SSE_LINE = re.compile(r"^[ \t]*MCP endpoint \(SSE\):[ \t]*(\S*)[ \t]*$", re.MULTILINE)
_BATTLE_INFO_KEYS = frozenset({"agent_name", "agent_id", "battle_id", "backend_url"})


def machine_lines(task_id: str, mcp_url: str | None, sse_url: str | None) -> list[str]:
    """The lines a Blue reads: the task id and the gateway's two endpoints ('unavailable' when there is none)."""
    return [f"{TASK_ID_LINE}{task_id}", f"{MCP_HTTP_LINE}{mcp_url or 'unavailable'}",
            f"{MCP_SSE_LINE}{sse_url or 'unavailable'}"]


class BlueTask(BaseModel):
    """What a Blue needs from the Green's message to start working."""

    task_id: str = Field(description="AppWorld task id, validated (`<scenario>_<n>`).")
    mcp_url: str = Field(description="The gateway's Streamable HTTP endpoint (ends in /mcp).")
    sse_url: str | None = Field(default=None, description="The gateway's SSE endpoint, if the message gave one.")


def validate_task_id(task_id: str) -> str:
    """Return `task_id` if well-formed (kernel.task_ids rules), else raise TaskMessageError."""
    try:
        return task_ids.validate_task_id(task_id)
    except BadInputError as exc:
        raise TaskMessageError(str(exc)) from None


def validate_http_url(url: str, what: str) -> str:
    """Return `url` (trailing slash removed) if it is an absolute http(s) URL with a host."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise TaskMessageError(f"invalid {what} {url[:80]!r}: expected an http(s) URL such as http://127.0.0.1:10000/mcp")
    return url.rstrip("/")


def is_battle_info(text: str) -> bool:
    """True for the AgentBeats backend's battle_info JSON (sent before a battle; not a task)."""
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and _BATTLE_INFO_KEYS <= data.keys()


def parse_task_message(text: str) -> BlueTask:
    """Extract the task id and MCP endpoints from the Green's message.

    Raises:
        TaskMessageError: a required line is missing, repeated with different values, or malformed.
    """
    if len(text) > MAX_MESSAGE_CHARS:
        raise TaskMessageError(f"task message too long ({len(text)} chars, limit {MAX_MESSAGE_CHARS})")
    task_id = validate_task_id(_single(_TASK_LINE, text, "AppWorld task id: <task_id>"))
    mcp_url = validate_http_url(_single(_MCP_LINE, text, "MCP endpoint (Streamable HTTP): <url>/mcp"), "MCP endpoint")
    sse_values = set(_SSE_LINE.findall(text))
    sse_url = validate_http_url(sse_values.pop(), "SSE endpoint") if len(sse_values) == 1 else None
    return BlueTask(task_id=task_id, mcp_url=mcp_url, sse_url=sse_url)


def _single(pattern: re.Pattern[str], text: str, line: str) -> str:
    values = set(pattern.findall(text))
    if not values or values == {""}:
        raise TaskMessageError(f"the task message has no line `{line}`; the Green must send it")
    if len(values) > 1:
        raise TaskMessageError(f"the task message has conflicting lines `{line}`: {sorted(values)[:3]}")
    return values.pop()
