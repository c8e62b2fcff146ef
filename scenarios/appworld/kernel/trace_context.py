"""The battle's W3C trace context: a trace id and a root span id, and the `traceparent` header that carries them.

The one rule for it: the engine, the bridge and the OpenTelemetry exports (`green_agent.trace.otel`) use it.

`new_context()` is made when a battle starts (random, as W3C Trace Context asks), recorded in result.json
(`BattleResult.traceparent`) and sent to the agent with the task, so the live export, a later file export
and the agent's own spans agree on the ids. `derived_context(battle_id)` gives a battle recorded without one
the same ids on every export (a hash of its id). `span_id(context, key)` names every other span of the battle
the same way on every export. `parse_traceparent(text)` reads a header strictly: anything else is None
(a `traceparent` a purple sends back is data, never ours to adopt).
"""

from __future__ import annotations

import hashlib
import re
import secrets

from pydantic import BaseModel, Field

_TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
TRACEPARENT_HEADER = "traceparent"
"""The W3C Trace Context header (and the A2A message's metadata key that carries the same value)."""


class TraceContext(BaseModel):
    """A battle's trace id and the span id of its root span (lowercase hex, W3C Trace Context)."""

    trace_id: str = Field(pattern=r"^[0-9a-f]{32}$", description="The battle's trace id, 32 hex digits.")
    root_span_id: str = Field(pattern=r"^[0-9a-f]{16}$", description="The battle's root span id, 16 hex digits.")

    @property
    def traceparent(self) -> str:
        """The `traceparent` header naming the root span, sampled."""
        return f"00-{self.trace_id}-{self.root_span_id}-01"


def _nonzero(hex_text: str) -> str:
    return hex_text if set(hex_text) != {"0"} else "1" + hex_text[1:]


def new_context() -> TraceContext:
    """A fresh, random context for a battle that starts now."""
    return TraceContext(trace_id=_nonzero(secrets.token_hex(16)), root_span_id=_nonzero(secrets.token_hex(8)))


def derived_context(battle_id: str) -> TraceContext:
    """The context of a battle recorded without one: the same ids from the same battle id, every time."""
    digest = hashlib.sha256(f"appworld-green/battle/{battle_id}".encode()).hexdigest()
    return TraceContext(trace_id=_nonzero(digest[:32]), root_span_id=_nonzero(digest[32:48]))


def span_id(context: TraceContext, key: str) -> str:
    """The id of the battle's span named `key` (e.g. `call-3`), the same on every export."""
    digest = hashlib.sha256(f"{context.trace_id}/{key}".encode()).hexdigest()
    return _nonzero(digest[:16])


def parse_traceparent(text: object) -> TraceContext | None:
    """The context a `traceparent` value names, or None for anything that is not one (version 00 only)."""
    if not isinstance(text, str) or len(text) != 55:
        return None
    match = _TRACEPARENT.fullmatch(text)
    if match is None or set(match.group(1)) == {"0"} or set(match.group(2)) == {"0"}:
        return None
    return TraceContext(trace_id=match.group(1), root_span_id=match.group(2))
