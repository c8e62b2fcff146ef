"""Spans as OTLP/JSON: the protobuf JSON mapping of `ExportTraceServiceRequest`, as OpenTelemetry specifies it.

`request(spans, resource)` is one request (one resource, one scope); ids are lowercase hex (OTLP/JSON's rule,
not protobuf's base64), 64-bit integers and times are decimal strings, attribute values typed (`stringValue`,
`intValue`, `doubleValue`, `boolValue`). A file of them is JSON Lines, one request a line (the OpenTelemetry
Collector's `otlpjsonfile` receiver reads it). `spans_of(line)` reads such a line back into `Span`s (for `--send`
and the tests).
"""

from __future__ import annotations

import json
from typing import Any

from green_agent.trace.otel.spans import AttributeValue, Span, SpanEvent

SCOPE = "appworld-green"
SERVICE = "appworld-green"
_KINDS = {"internal": 1, "client": 3}
_STATUS = {"unset": 0, "ok": 1, "error": 2}


def _value(value: AttributeValue) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": value}


def _attributes(values: dict[str, AttributeValue]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in values.items()]


def _span(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": span.trace_id, "spanId": span.span_id, "name": span.name, "kind": _KINDS[span.kind],
        "startTimeUnixNano": str(span.start_ns), "endTimeUnixNano": str(span.end_ns),
        "attributes": _attributes(span.attributes),
        "events": [{"timeUnixNano": str(e.time_ns), "name": e.name, "attributes": _attributes(e.attributes)}
                   for e in span.events],
        "status": {"code": _STATUS[span.status], **({"message": span.status_message} if span.status_message else {})}}
    if span.parent_id:
        out["parentSpanId"] = span.parent_id
    return out


def resource_attributes(service: str = SERVICE) -> dict[str, AttributeValue]:
    """The resource every battle's spans share: the referee as a service."""
    return {"service.name": service}


def request(spans: list[Span], resource: dict[str, AttributeValue] | None = None) -> dict[str, Any]:
    """One `ExportTraceServiceRequest` holding `spans`."""
    return {"resourceSpans": [{
        "resource": {"attributes": _attributes(resource or resource_attributes())},
        "scopeSpans": [{"scope": {"name": SCOPE}, "spans": [_span(s) for s in spans]}]}]}


def _read_value(value: dict[str, Any]) -> AttributeValue:
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    return str(value.get("stringValue", ""))


def _read_attributes(items: list[dict[str, Any]]) -> dict[str, AttributeValue]:
    return {item["key"]: _read_value(item.get("value", {})) for item in items}


def spans_of(line: str) -> list[Span]:
    """The spans of one OTLP/JSON request (a line of an export)."""
    kinds, codes = {v: k for k, v in _KINDS.items()}, {v: k for k, v in _STATUS.items()}
    spans = []
    for resource in json.loads(line).get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for raw in scope.get("spans", []):
                status = raw.get("status", {})
                spans.append(Span(
                    name=raw["name"], trace_id=raw["traceId"], span_id=raw["spanId"],
                    parent_id=raw.get("parentSpanId") or None, kind=kinds.get(raw.get("kind", 1), "internal"),
                    start_ns=int(raw["startTimeUnixNano"]), end_ns=int(raw["endTimeUnixNano"]),
                    attributes=_read_attributes(raw.get("attributes", [])),
                    events=[SpanEvent(name=e["name"], time_ns=int(e["timeUnixNano"]),
                                      attributes=_read_attributes(e.get("attributes", [])))
                            for e in raw.get("events", [])],
                    status=codes.get(status.get("code", 0), "unset"), status_message=status.get("message")))
    return spans
