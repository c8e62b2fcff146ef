"""Our `Span` models as `opentelemetry-sdk` `ReadableSpan`s, with their own ids and times, for the SDK's exporter.

Imported only by `live`, and only when an OTLP endpoint is set: the one place, with `live`, that imports
`opentelemetry`. The spans keep the ids and times the battle's records gave them (no clock of ours is read),
so what is sent live is what `export --format otlp` writes.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from green_agent.trace.otel.otlp_json import SCOPE, resource_attributes
from green_agent.trace.otel.spans import Span

_KINDS = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}
_STATUS = {"unset": StatusCode.UNSET, "ok": StatusCode.OK, "error": StatusCode.ERROR}
_RESOURCE = Resource.create(resource_attributes())
_SCOPE = InstrumentationScope(SCOPE)


def _context(trace_id: str, span_id: str) -> SpanContext:
    return SpanContext(int(trace_id, 16), int(span_id, 16), is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))


def readable(span: Span) -> Any:
    """`span` as a finished SDK span."""
    status = _STATUS[span.status]
    return ReadableSpan(
        name=span.name, context=_context(span.trace_id, span.span_id),
        parent=_context(span.trace_id, span.parent_id) if span.parent_id else None, resource=_RESOURCE,
        attributes=dict(span.attributes), kind=_KINDS[span.kind], instrumentation_scope=_SCOPE,
        events=[Event(e.name, dict(e.attributes), timestamp=e.time_ns) for e in span.events],
        status=Status(status, span.status_message if status is StatusCode.ERROR else None),
        start_time=span.start_ns, end_time=span.end_ns)
