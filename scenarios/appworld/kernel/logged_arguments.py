"""What a call record keeps of a call's arguments: at most `MAX_LOGGED_ARGUMENTS_BYTES` of them.

Arguments are the agent's bytes (a forged call can carry 99 kB of them, thousands of times), so a record
keeps them whole only while their JSON fits the budget. `bounded_arguments(arguments)` keeps top-level
values in order while they fit, and replaces each one that does not with a short marker giving its size
and a SHA-256 prefix (`"[omitted: 99012 bytes, sha256 3f2a...]"`), so a reader still sees which argument
was large and can tell two apart; the record's `arguments_bytes` then holds the size of the whole.
Redaction happens before (the caller passes redacted arguments).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, NamedTuple

MAX_LOGGED_ARGUMENTS_BYTES = 4096
"""Bytes of arguments one call record keeps (AppWorld's arguments are short: ids, names, a note)."""


MARKER_BYTES = 64
"""Room kept for one marker (`omitted`) or the closing note."""
REST_KEY = "[omitted]"


class LoggedArguments(NamedTuple):
    arguments: dict[str, Any]
    """What the record keeps."""
    total_bytes: int | None
    """Size of the whole arguments' JSON when some of it was left out, else None."""


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "replace"))


def omitted(value: Any) -> str:
    """The marker that stands for a value left out of the log."""
    data = json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "replace")
    return f"[omitted: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}]"


def bounded_arguments(arguments: dict[str, Any], limit: int = MAX_LOGGED_ARGUMENTS_BYTES) -> LoggedArguments:
    """`arguments` as a record keeps them (module docstring)."""
    total = _size(arguments)
    if total <= limit:
        return LoggedArguments(arguments, None)
    kept: dict[str, Any] = {}
    budget = limit
    for key, value in arguments.items():
        name = str(key)[:100]
        cost = len(name) + 8
        if budget < cost + MARKER_BYTES:  # no room left even for a marker: say how many were left out
            kept[REST_KEY] = f"[{len(arguments) - len(kept)} more arguments omitted]"
            break
        size = _size(value)
        kept[name] = value if size + cost <= budget - MARKER_BYTES else omitted(value)
        budget -= cost + (size if kept[name] is value else MARKER_BYTES)
    return LoggedArguments(kept, total)
