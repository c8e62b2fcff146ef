"""The span and event models both exports build: plain pydantic, nothing of OpenTelemetry imported.

A `Span` carries what OTLP needs (ids in lowercase hex, times in Unix nanoseconds, flat attributes of
strings, numbers and booleans, events, a status); `otlp_json` writes it as OTLP/JSON and `sdk_spans` hands it
to `opentelemetry-sdk`'s exporter. Every string attribute is bounded (`MAX_ATTRIBUTE_CHARS`).
"""

from __future__ import annotations

from typing import Literal, Union

from pydantic import BaseModel, Field

AttributeValue = Union[bool, int, float, str]
MAX_ATTRIBUTE_CHARS = 20_000
"""A string attribute is cut here (the trace's own cap on a text), with the cut said at its end."""


class SpanEvent(BaseModel):
    """A point in time on a span (here: `gen_ai.evaluation.result`, one per score)."""

    name: str = Field(description="The event's name.")
    time_ns: int = Field(ge=0, description="When it happened, Unix nanoseconds.")
    attributes: dict[str, AttributeValue] = Field(default_factory=dict, description="Its attributes.")


class Span(BaseModel):
    """One span of a battle's trace."""

    name: str = Field(description="The span's name (GenAI: `<operation> <subject>`, A2A: the method).")
    trace_id: str = Field(pattern=r"^[0-9a-f]{32}$", description="The battle's trace id.")
    span_id: str = Field(pattern=r"^[0-9a-f]{16}$", description="This span's id.")
    parent_id: str | None = Field(default=None, description="The parent span's id; None for the battle's root.")
    kind: Literal["internal", "client"] = Field(default="internal", description="OTLP span kind.")
    start_ns: int = Field(ge=0, description="Start, Unix nanoseconds.")
    end_ns: int = Field(ge=0, description="End, Unix nanoseconds (never before the start).")
    attributes: dict[str, AttributeValue] = Field(default_factory=dict, description="Its attributes.")
    events: list[SpanEvent] = Field(default_factory=list, description="Its events, in time order.")
    status: Literal["unset", "ok", "error"] = Field(default="unset", description="OTLP status code.")
    status_message: str | None = Field(default=None, description="Why it is an error, when it is one.")


def bounded_text(text: str, limit: int = MAX_ATTRIBUTE_CHARS) -> str:
    """`text`, cut at `limit` characters with the cut said (as the trace cuts its own texts)."""
    return text if len(text) <= limit else f"{text[:limit]}[... cut: {len(text)} characters in all]"


KEYWORD_DOT = "__"
"""What stands for `.` in an attribute given as a keyword (`gen_ai__tool__name`): a spelling of this module's
callers, not AppWorld's `app__api` tool names (those convert only in `kernel.api_names`)."""


def attributes(**values: AttributeValue | None) -> dict[str, AttributeValue]:
    """Attributes from keyword pairs (`KEYWORD_DOT` stands for `.` in a key); None values are left out, strings
    bounded."""
    out: dict[str, AttributeValue] = {}
    for key, value in values.items():
        if value is None:
            continue
        out[key.replace(KEYWORD_DOT, ".")] = bounded_text(value) if isinstance(value, str) else value
    return out
