"""A battle's trace as OpenTelemetry GenAI spans: the file export, the live export, the W3C trace context.

- `spans`: the span and event models (plain pydantic, no OpenTelemetry import);
- `battle_spans`: a finished battle's records and result -> its spans (the one code path of both exports);
- `otlp_json`: spans -> OTLP/JSON (one `ExportTraceServiceRequest` a line, one line a battle);
- `export`: `appworld-green export --format otlp` over a battle folder or a run;
- `live`: with `OTEL_EXPORTER_OTLP_ENDPOINT` set, each battle's spans sent when it ends through
  `opentelemetry-sdk`'s OTLP/HTTP exporter, from a bounded queue (imported only then).
The battle's trace context (its ids and `traceparent` header) is `kernel.trace_context`: the engine, the bridge
and the exports share it. Nothing here imports `opentelemetry` but `live` and `sdk_spans`, and they only when the
endpoint is set.
"""
