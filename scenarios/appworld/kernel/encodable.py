"""Text from an untrusted peer made sendable: no lone surrogate survives into a string we encode.

JSON may spell a lone UTF-16 surrogate (`"\\ud800"`) and Python's `json` decodes it into a `str` that
cannot be encoded as UTF-8: whoever encodes it next (pydantic, an MCP or A2A client, our log writer) fails,
far from the bytes that caused it. `encodable(value)` walks decoded JSON (dicts, lists, strings; keys too)
and replaces each lone surrogate with U+FFFD, leaving valid pairs and every other value as they are; the
result always encodes as UTF-8. Callers use it where bytes of the agent (its sandbox, a purple) are decoded.
"""

from __future__ import annotations

import re
from typing import Any

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def encodable_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (a pair decoded by `json` is already one character)."""
    return _LONE_SURROGATE.sub(REPLACEMENT, text) if _LONE_SURROGATE.search(text) else text


def encodable(value: Any) -> Any:
    """Decoded JSON with every string (dict keys included) made encodable; other values returned as they are."""
    if isinstance(value, str):
        return encodable_text(value)
    if isinstance(value, dict):
        return {encodable_text(k) if isinstance(k, str) else k: encodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encodable(v) for v in value]
    return value
