"""The scripting logic of the fake Responses API (see `fake_openai` for the contract).

Pure functions over one request body: find the script, count the turns taken since the last
user message, fill placeholders, and build the next output item.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any

SCRIPT_MARKER = re.compile(r"<<FAKE_SCRIPT>>(.*?)<<END>>", re.S)
REGISTRATION_HINT = "extracting relevant parts of task descriptions"
_FIELD_PLACEHOLDER = re.compile(r"\{last_output\.([A-Za-z0-9_]+)\}")


def items_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's `input` as a list of items (a bare string is one user message)."""
    raw = body.get("input")
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}]
    return [item for item in raw or [] if isinstance(item, dict)]


def text_of(content: Any) -> str:
    """Message content as text (a string, or parts carrying `text`)."""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def find_script(instructions: str, scripts: dict[str, Any]) -> dict[str, Any] | None:
    """The script for these instructions: inline markers first, then the first matching substring."""
    match = SCRIPT_MARKER.search(instructions)
    if match:
        return normalise_script(json.loads(match.group(1)))
    for needle, script in scripts.items():
        if needle in instructions:
            return normalise_script(script)
    return None


def normalise_script(script: Any) -> dict[str, Any]:
    """`[steps]` or `{"steps": [...], "final": text}` -> the dict form."""
    if isinstance(script, list):
        return {"steps": script, "final": None}
    return {"steps": list(script.get("steps", [])), "final": script.get("final")}


def battle_context(items: list[dict[str, Any]]) -> dict[str, Any]:
    """Placeholders from the AgentBeats battle_start JSON found in a user message."""
    ctx: dict[str, Any] = {"battle_id": "", "opp_url": "", "backend_url": "", "task_config": ""}
    for item in items:
        if item.get("role") != "user":
            continue
        try:
            data = json.loads(text_of(item.get("content")))
        except (TypeError, ValueError):
            continue
        if isinstance(data, dict) and data.get("type") == "battle_start":
            green = data.get("green_battle_context") or {}
            opponents = data.get("opponent_infos") or []
            ctx.update(battle_id=data.get("battle_id", ""), backend_url=green.get("backend_url", ""),
                       task_config=green.get("task_config", ""),
                       opp_url=opponents[0].get("agent_url", "") if opponents else "")
    return ctx


def decode_output(output: Any, depth: int = 0) -> Any:
    """A tool output with JSON strings decoded recursively (MCP wraps JSON text in `text` parts)."""
    if depth > 4:
        return output
    if isinstance(output, str):
        try:
            return decode_output(json.loads(output), depth + 1)
        except ValueError:
            return output
    if isinstance(output, dict):
        return {k: decode_output(v, depth + 1) for k, v in output.items()}
    if isinstance(output, list):
        return [decode_output(v, depth + 1) for v in output]
    return output


def find_field(data: Any, key: str) -> Any:
    """The first value stored under `key` anywhere in `data` (depth-first), else None."""
    if isinstance(data, dict):
        if key in data:
            return data[key]
        data = list(data.values())
    if isinstance(data, list):
        for value in data:
            found = find_field(value, key)
            if found is not None:
                return found
    return None


def fill(value: Any, ctx: dict[str, Any], last_output: Any) -> Any:
    """Replace `{name}` and `{last_output.key}` placeholders in strings, recursively."""
    if isinstance(value, dict):
        return {k: fill(v, ctx, last_output) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, ctx, last_output) for v in value]
    if not isinstance(value, str):
        return value
    whole = _FIELD_PLACEHOLDER.fullmatch(value)
    if whole:  # a lone placeholder keeps the field's JSON type (e.g. an integer id)
        return find_field(decode_output(last_output), whole.group(1))
    value = _FIELD_PLACEHOLDER.sub(lambda m: str(find_field(decode_output(last_output), m.group(1))), value)
    for key, val in ctx.items():
        value = value.replace("{" + key + "}", str(val))
    return value


def example_for_schema(schema: dict[str, Any]) -> Any:
    """A minimal instance of a JSON schema (strings are "1", as the backend's parser expects)."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object" or "properties" in schema:
        return {name: example_for_schema(sub) for name, sub in (schema.get("properties") or {}).items()}
    return {"array": [], "integer": 1, "number": 1, "boolean": True, "null": None}.get(kind, "1")


def message_item(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg_" + uuid.uuid4().hex[:12], "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def function_call_item(name: str, args: Any) -> dict[str, Any]:
    return {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:12], "call_id": "call_" + uuid.uuid4().hex[:12],
            "name": name, "arguments": json.dumps(args), "status": "completed"}


def response_object(body: dict[str, Any], output: list[dict[str, Any]], input_tokens: int,
                    output_tokens: int) -> dict[str, Any]:
    return {
        "id": "resp_" + uuid.uuid4().hex[:12], "object": "response", "created_at": int(time.time()),
        "model": body.get("model", "fake"), "status": "completed", "output": output, "parallel_tool_calls": True,
        "tool_choice": body.get("tool_choice", "auto"), "tools": [], "text": {"format": {"type": "text"}},
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                  "total_tokens": input_tokens + output_tokens, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }


def next_output(body: dict[str, Any], scripts: dict[str, Any]) -> dict[str, Any]:
    """The output item answering one Responses request (see `fake_openai` for the rules)."""
    items = items_of(body)
    instructions = body.get("instructions") or ""
    offered = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    last_user = max((i for i, it in enumerate(items) if it.get("role") == "user"), default=-1)
    user_text = text_of(items[last_user].get("content")) if last_user >= 0 else ""
    if REGISTRATION_HINT in instructions:
        words = user_text.split()
        return message_item(words[-1] if words else "x")
    after = items[last_user + 1:]
    calls = sum(1 for it in after if it.get("type") == "function_call")
    outputs = [it.get("output") for it in after if it.get("type") == "function_call_output"]
    last_output = outputs[-1] if outputs else ""
    ctx = {**battle_context(items), "last_output": str(last_output)[:300]}
    script = find_script(instructions, scripts) or {"steps": [], "final": None}
    if calls < len(script["steps"]):
        step = script["steps"][calls]
        if step.get("tool") not in offered:
            return message_item(f"FAKE: tool {step.get('tool')} not offered; tools={offered}")
        return function_call_item(step["tool"], fill(step.get("args", {}), ctx, last_output))
    text_format = ((body.get("text") or {}).get("format") or {})
    if text_format.get("type") == "json_schema":
        schema = text_format.get("schema")
        return message_item(json.dumps(example_for_schema(schema) if schema else {"response": "1"}))
    if script["final"] is not None:
        return message_item(str(fill(script["final"], ctx, last_output)))
    return message_item(f"FAKE-LLM done. tools_offered={offered}. outputs={[str(o)[:200] for o in outputs]}. "
                        f"user={user_text[:200]}")
