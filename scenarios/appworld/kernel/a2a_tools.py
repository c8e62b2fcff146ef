"""The in-band tool protocol `appworld-a2a-tools/1`: AppWorld's tools carried inside an A2A conversation.

Both sides use this one module: the Green's bridge (`green_agent.a2a.bridge`) and the purples we
ship (`blue_agent.purple`). The rules (docs/a2a.md says them for people):

- Green -> purple, first message: the task (instruction, supervisor, date, how to finish), a JSON
  list of OpenAI function schemas (`function_schema`), then `REPLY_FORMAT`.
- purple -> Green, every reply: ONE tool call `{"name": "<tool>", "arguments": {...}}` as text
  (bare, inside `<json>...</json>`, or in a json code fence) or as a DataPart (`parse_tool_call`).
  `arguments` may also be a JSON string (OpenAI's `function.arguments`).
- Green -> purple, after a call: `Tool '<name>' result: <json>` (`render_result`); errors are data
  in the same shape (`{"is_error": true, "message": ...}`); a reply that is not a tool call gets
  `render_correction`.

Everything the purple says is untrusted data: `parse_tool_call` reads at most `MAX_REPLY_CHARS`,
parses JSON only within `kernel.bounded_json`'s depth limit, accepts only a tool name matching `TOOL_NAME` and an
object of arguments, and never evaluates anything.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

from kernel.bounded_json import JsonTooDeep, loads_bounded

PROTOCOL = "appworld-a2a-tools/1"
MAX_REPLY_CHARS = 100_000
"""Longer replies are refused unread (a tool call is far shorter)."""
MAX_RESULT_CHARS = 200_000
"""A tool result longer than this is cut, and the message says so."""
TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}")
COMPLETE_TASK_TOOL = "supervisor__complete_task"

TOOLS_HEADER = "Here is the list of tools you can use, as OpenAI function schemas (one tool call per message):"
"""The line after which the first message holds the JSON list of schemas (then a blank line and the reply format)."""
_TASK_ID = re.compile(r"^[ \t]*AppWorld task id:[ \t]*([A-Za-z0-9_\-]{1,64})[ \t]*$", re.MULTILINE)

_JSON_TAG = re.compile(r"<json>\s*(.*?)\s*</json>", re.DOTALL | re.IGNORECASE)
_JSON_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL | re.IGNORECASE)

REPLY_FORMAT = f"""Protocol: {PROTOCOL}.
Reply with exactly ONE tool call per message, as JSON with the keys "name" (the tool) and "arguments" (an object),
for example:
<json>
{{"name": "supervisor__show_account_passwords", "arguments": {{}}}}
</json>
The next message will be the tool's result, as `Tool '<name>' result: <json>`. Call one tool at a time.
There is no user to talk to: to finish, call {COMPLETE_TASK_TOOL} (with "answer" when the task asks a question)."""


class ToolCall(BaseModel):
    """One tool call read from a purple's reply."""

    name: str = Field(description="Tool name (matches TOOL_NAME).")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The call's arguments.")


def function_schema(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI function schema of one tool (`{"type": "function", "function": {...}}`)."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def parse_tool_call(text: str, data: list[Any] | None = None) -> ToolCall | str:
    """A reply (its text and any DataPart payloads) -> the tool call, or one sentence saying what is wrong."""
    for item in data or []:
        call = _as_call(item)
        if isinstance(call, ToolCall):
            return call
    if len(text) > MAX_REPLY_CHARS:
        return f"the reply is too long ({len(text)} characters; a tool call needs far fewer)"
    candidates = [m.group(1) for m in _JSON_TAG.finditer(text)] + [m.group(1) for m in _JSON_FENCE.finditer(text)]
    candidates.append(text.strip())
    problem = "the reply holds no JSON object with \"name\" and \"arguments\""
    for candidate in candidates:
        try:
            value = loads_bounded(candidate)
        except JsonTooDeep as exc:
            problem = str(exc)
            continue
        except ValueError:
            continue
        call = _as_call(value)
        if isinstance(call, ToolCall):
            return call
        problem = call
    return problem


def _as_call(value: Any) -> ToolCall | str:
    if not isinstance(value, dict) or "name" not in value:
        return "the reply holds no JSON object with \"name\" and \"arguments\""
    name, arguments = value.get("name"), value.get("arguments", {})
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        return "\"name\" must be one of the listed tool names"
    if isinstance(arguments, str):
        try:
            arguments = loads_bounded(arguments) if arguments.strip() else {}
        except ValueError:
            return "\"arguments\" is a string that is not JSON"
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return "\"arguments\" must be a JSON object"
    return ToolCall(name=name, arguments=arguments)


def tools_of(first_message: str) -> list[dict[str, Any]] | None:
    """The purple's side: the function schemas of the first message (None if it has none)."""
    start = first_message.find(TOOLS_HEADER)
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(first_message[start + len(TOOLS_HEADER):].lstrip())
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def task_id_of(first_message: str) -> str | None:
    """The purple's side: the `AppWorld task id: <id>` line of the first message."""
    match = _TASK_ID.search(first_message)
    return match.group(1) if match else None


def render_call(call: ToolCall) -> str:
    """A purple's reply carrying `call` (the form the shipped purples send)."""
    return "<json>\n" + json.dumps({"name": call.name, "arguments": call.arguments}) + "\n</json>"


def render_result(name: str, response: Any) -> str:
    """`Tool '<name>' result: <json>`, the JSON cut at MAX_RESULT_CHARS (saying so)."""
    body = json.dumps(response, ensure_ascii=False, default=str)
    if len(body) > MAX_RESULT_CHARS:
        body = body[:MAX_RESULT_CHARS] + f" ... [cut: {len(body)} characters, first {MAX_RESULT_CHARS} shown]"
    return f"Tool '{name}' result: {body}"


def render_correction(problem: str) -> str:
    """The one corrective message for a reply that is not a tool call."""
    return (f"Your last message was not a tool call ({problem}). Reply with one JSON object "
            f"{{\"name\": ..., \"arguments\": {{...}}}} naming one of the listed tools; "
            f"call {COMPLETE_TASK_TOOL} to finish.")


_RESULT = re.compile(r"^Tool '([A-Za-z][A-Za-z0-9_]{0,127})' result: (.*)$", re.DOTALL)


def parse_result(text: str) -> tuple[str, Any] | None:
    """The purple's side: `Tool '<name>' result: <json>` -> (name, response); None if not a result."""
    match = _RESULT.match(text.strip())
    if not match:
        return None
    try:
        return match.group(1), json.loads(match.group(2))
    except ValueError:
        return match.group(1), match.group(2)
