"""The engine's hook into the live export: `battle_ended(battle_dir)` when a battle's result is final, `flush()`
before a run writes its results. Both do nothing (and import nothing of OpenTelemetry) when no OTLP endpoint is
set (`live.configured`), and neither raises: the export is evidence, never a battle's fate.

`battle_ended` builds the spans from the battle's folder (`export.folder_spans`: the same spans, ids and scrubbing
as `export --format otlp`), hands them to the process's bounded sender and returns; when they are sent or dropped,
the battle's `otlp_export.json` says so (`green_agent.models.otlp_export`).
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timezone
from pathlib import Path

from green_agent.models.otlp_export import OTLP_EXPORT_FILE, OtlpExportRecord
from green_agent.trace.otel import live
from kernel.atomic import atomic_write_text

log = logging.getLogger(__name__)


def _recorder(battle_dir: Path, endpoint: str, spans: int, build_ms: float) -> live.Done:
    def done(sent: int, dropped: int, error: str | None) -> None:
        record = OtlpExportRecord(endpoint=endpoint, spans=spans, sent=sent, dropped=dropped, error=error,
                                  build_ms=round(build_ms, 3), at=datetime.now(timezone.utc))
        atomic_write_text(battle_dir / OTLP_EXPORT_FILE, record.model_dump_json(indent=2))
    return done


def battle_ended(battle_dir: Path) -> None:
    """Queue the finished battle's spans for the live export (see the module docstring)."""
    if live.configured() is None:
        return
    try:
        from green_agent.trace.otel.export import folder_spans

        started = time.perf_counter()
        sender = live.sender()
        spans = folder_spans(Path(battle_dir))
        build_ms = 1000 * (time.perf_counter() - started)
        if sender is not None:
            sender.submit(spans, _recorder(Path(battle_dir), sender.endpoint, len(spans), build_ms))
    except Exception as exc:  # noqa: BLE001 - never a battle's fate
        log.warning("the battle in %s was not exported live: %s: %s", battle_dir, type(exc).__name__, str(exc)[:200])


def flush(timeout_s: float = live.FLUSH_TIMEOUT_S) -> None:
    """Let the queued battles be sent (bounded) before a run's results are written; nothing when none is set up."""
    sender = live.existing()
    if sender is not None:
        sender.flush(timeout_s)
