"""The one decoder of the gateway's MCP tool results, for the Blues and the tests' MCP client.

A result is returned as the gateway's JSON payload, `{"response": <api json>}` (structured content,
else the text parsed as JSON). An MCP-level failure (unknown tool, refused call, schema violation)
becomes `{"response": {"message": .., "is_error": true}}`, the shape upstream AppWorld's MCP client gives it.

The gateway also marks a result whose call leaves its battle's episode over (a successful `complete_task`, however
it was called, or the Green ended the episode) with `_meta: {EPISODE_OVER_META: true}`; `episode_over(result)`
reads it, so a client (the in-band bridge) ends with the gateway's own episode state.
"""

from __future__ import annotations

import json
from typing import Any


def tool_result_payload(result: Any) -> dict[str, Any]:
    """Turn an MCP `CallToolResult` into the gateway's JSON payload (see module docstring)."""
    text = "".join(getattr(part, "text", "") or "" for part in (getattr(result, "content", None) or []))
    structured = getattr(result, "structured_content", None)
    if getattr(result, "is_error", False):
        return {"response": {"message": text or _structured_message(structured) or "MCP tool call failed",
                             "is_error": True}}
    if structured is None and text:
        try:
            structured = json.loads(text)
        except ValueError:
            return {"response": text}
    if isinstance(structured, dict) and set(structured) == {"result"} and isinstance(structured["result"], dict):
        structured = structured["result"]  # a server that wraps non-object returns
    if isinstance(structured, dict) and "response" in structured:
        return structured
    return {"response": structured}


EPISODE_OVER_META = "appworld/episode_over"


def episode_over(result: Any) -> bool:
    """True if the gateway marked this `CallToolResult`: the battle's episode is over, no more calls will be served."""
    meta = getattr(result, "meta", None)
    return isinstance(meta, dict) and meta.get(EPISODE_OVER_META) is True


def _structured_message(structured: Any) -> str | None:
    response = structured.get("response") if isinstance(structured, dict) else None
    message = response.get("message") if isinstance(response, dict) else None
    return message if isinstance(message, str) and message else None
