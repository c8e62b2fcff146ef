"""`otlp_export.json`: how a battle's live OpenTelemetry export fared (written only when an endpoint is set).

The live sender (`green_agent.trace.otel.live`) writes it into the battle's folder once the battle's spans were
sent or dropped; `results.json` sums its `dropped` over the run (`EvalResults.otlp_spans_dropped`).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

OTLP_EXPORT_FILE = "otlp_export.json"


class OtlpExportRecord(BaseModel):
    """One battle's live export."""

    endpoint: str = Field(description="The OTLP endpoint the spans were sent to (OTEL_EXPORTER_OTLP_ENDPOINT).")
    spans: int = Field(ge=0, description="The battle's spans.")
    sent: int = Field(ge=0, description="Spans the collector accepted.")
    dropped: int = Field(ge=0, description="Spans not delivered: the queue was full, the collector failed or was "
                         "given up after a failure, or the run ended first.")
    error: str | None = Field(default=None, description="Why spans were dropped, in words (None when all were sent).")
    build_ms: float = Field(default=0.0, ge=0, description="Milliseconds the battle's own thread spent building its "
                            "spans from its folder before queuing them: the live export's cost to the battle.")
    at: datetime = Field(description="When the export was settled (UTC).")
