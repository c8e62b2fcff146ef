"""JSON from an untrusted peer, parsed only within a depth limit.

Python's `json` (and a2a-sdk's pydantic models on top of it) recurse once per nesting level: a reply
holding `[[[[...]]]]` 20,000 deep raises `RecursionError` deep inside whichever library parses it
first. `json_depth(data)` measures the nesting of a JSON text without parsing it (brackets outside
strings, in one pass over the brackets alone), so a caller can refuse it before anything recurses;
`loads_bounded(text)` is `json.loads` behind that check.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_JSON_DEPTH = 100
"""Nesting levels a peer's JSON may have: an A2A reply with a tool call needs about a dozen."""

_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


class JsonTooDeep(ValueError):
    """The JSON nests deeper than allowed; it was not parsed."""


def json_depth(data: bytes | str) -> int:
    """The deepest nesting of arrays and objects in `data` (0 for a scalar); strings are not counted.

    Linear in the size of `data`; it does not validate the JSON (a parser does that afterwards)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    skeleton = _STRINGS.sub(b"", raw).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for byte in skeleton:
        if byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(0, depth - 1)
    return deepest


def check_depth(data: bytes | str, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise JsonTooDeep if `data` nests deeper than `max_depth`."""
    depth = json_depth(data)
    if depth > max_depth:
        raise JsonTooDeep(f"the JSON nests {depth} levels deep (at most {max_depth} are read)")


def loads_bounded(text: bytes | str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`json.loads(text)` if it nests at most `max_depth` levels; else JsonTooDeep (a ValueError)."""
    check_depth(text, max_depth)
    return json.loads(text)
