"""The live export: each finished battle's spans sent to `OTEL_EXPORTER_OTLP_ENDPOINT` through `opentelemetry-sdk`.

Contract:
- `configured()` reads the environment only (OpenTelemetry's own variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
  else `OTEL_EXPORTER_OTLP_ENDPOINT`; `OTEL_EXPORTER_OTLP_HEADERS` and `..._TIMEOUT` are read by the SDK's
  exporter). Unset, `sender()` is None and nothing of OpenTelemetry is imported (the SDK is imported when the
  first battle is sent).
- `LiveSender.submit(spans, on_done)` never blocks and never raises: a battle's spans join a bounded queue
  (`MAX_QUEUED_SPANS`) that one daemon thread drains, one OTLP/HTTP request per battle, each bounded by
  `EXPORT_TIMEOUT_S` (the SDK's exporter retries within it). A battle that does not fit is dropped at once;
  after a failed request the collector is given up for `COOLDOWN_S` (the battles then are dropped unsent, so a
  dead collector costs one request, not one per battle). One warning per process says the collector failed;
  `on_done(sent, dropped, error)` is told each battle's fate, from the worker (or from `flush`).
- `flush(timeout_s)` waits, bounded, until the queue is empty; what is still queued then is dropped (told).
So an unreachable collector never fails a battle nor holds it up; what it cost is the count of spans dropped.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

from green_agent.trace.otel.spans import Span

log = logging.getLogger(__name__)
ENDPOINT_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
TIMEOUT_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
MAX_QUEUED_SPANS = 20_000
EXPORT_TIMEOUT_S = 3.0
"""Our default for one request (the SDK's is 10 s); OpenTelemetry's timeout variables override it."""
COOLDOWN_S = 30.0
FLUSH_TIMEOUT_S = EXPORT_TIMEOUT_S + 2.0
Done = Callable[[int, int, "str | None"], None]


class Batch(NamedTuple):
    """One battle's spans and whom to tell how they fared."""

    spans: list[Span]
    on_done: Done | None


def configured() -> str | None:
    """The OTLP endpoint the environment names (None: no live export). Reads nothing but the environment."""
    return next((os.environ[name].strip() for name in ENDPOINT_ENVS if os.environ.get(name, "").strip()), None)


def _timeout() -> float | None:
    """None when OpenTelemetry's own timeout variable is set (the SDK reads it), else ours."""
    return None if any(os.environ.get(name) for name in TIMEOUT_ENVS) else EXPORT_TIMEOUT_S


def _sdk_exporter() -> Any:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    logging.getLogger("opentelemetry.exporter").setLevel(logging.CRITICAL)  # our one warning says it
    return OTLPSpanExporter(timeout=_timeout())


class LiveSender:
    """The bounded queue and its worker (see the module docstring). `exporter`: an SDK `SpanExporter`."""

    def __init__(self, endpoint: str, exporter: Any = None) -> None:
        self.endpoint = endpoint
        self._exporter = exporter
        self._queue: deque[Batch] = deque()
        self._queued = 0
        self._busy = False
        self._down_until = 0.0
        self._warned = False
        self._cond = threading.Condition()
        self.sent = self.dropped = 0
        self._thread = threading.Thread(target=self._run, name="otlp-export", daemon=True)
        self._thread.start()

    def submit(self, spans: list[Span], on_done: Done | None = None) -> bool:
        """Queue one battle's spans; False (and told as dropped) when the queue has no room."""
        with self._cond:
            if self._queued + len(spans) > MAX_QUEUED_SPANS:
                self._settle(Batch(spans, on_done), 0, "the export queue was full")
                return False
            self._queue.append(Batch(spans, on_done))
            self._queued += len(spans)
            self._cond.notify_all()
            return True

    @property
    def pending(self) -> int:
        """Spans queued, not yet sent or dropped."""
        return self._queued

    def flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> bool:
        """Wait until every queued battle was sent or dropped, at most `timeout_s`; then drop what is left."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while (self._queue or self._busy) and (left := deadline - time.monotonic()) > 0:
                self._cond.wait(left)
            done = not self._queue and not self._busy
            while self._queue:
                batch = self._queue.popleft()
                self._queued -= len(batch.spans)
                self._settle(batch, 0, "not sent before the run ended")
            return done

    def _settle(self, batch: Batch, sent: int, error: str | None) -> None:
        """Count a battle's fate and tell it (called with the lock held)."""
        self.sent += sent
        self.dropped += len(batch.spans) - sent
        if error and not self._warned:
            self._warned = True
            log.warning("OpenTelemetry export to %s failed (%s): this process's battles keep running; the spans "
                        "not sent are counted (each battle's otlp_export.json, a run's results.json: "
                        "otlp_spans_dropped)", self.endpoint, error)
        if batch.on_done is not None:
            try:
                batch.on_done(sent, len(batch.spans) - sent, error)
            except Exception:  # noqa: BLE001 - a report of the export never fails the export
                log.debug("on_done failed", exc_info=True)

    def _next(self) -> Batch:
        with self._cond:
            while not self._queue:
                self._cond.wait()
            self._busy = True
            return self._queue.popleft()

    def _run(self) -> None:
        while True:
            batch = self._next()
            sent, error = self._send(batch.spans)
            with self._cond:
                self._queued -= len(batch.spans)
                self._settle(batch, sent, error)
                self._busy = False
                self._cond.notify_all()

    def _send(self, spans: list[Span]) -> tuple[int, str | None]:
        if time.monotonic() < self._down_until:
            return 0, "the collector failed a moment ago"
        try:
            if self._exporter is None:
                self._exporter = _sdk_exporter()
            from green_agent.trace.otel.sdk_spans import readable

            ok = self._exporter.export([readable(s) for s in spans]).name == "SUCCESS"
        except Exception as exc:  # noqa: BLE001 - a broken exporter drops spans, never a battle
            ok, error = False, f"{type(exc).__name__}: {str(exc)[:200]}"
        else:
            error = None if ok else "the collector did not accept the spans (unreachable, or an error status)"
        if not ok:
            self._down_until = time.monotonic() + COOLDOWN_S
            return 0, error
        return len(spans), None


_sender: LiveSender | None = None
_lock = threading.Lock()


def sender() -> LiveSender | None:
    """This process's sender, made on first use; None when no endpoint is configured."""
    global _sender
    endpoint = configured()
    if endpoint is None:
        return None
    with _lock:
        if _sender is None or _sender.endpoint != endpoint:
            _sender = LiveSender(endpoint)
        return _sender


def existing() -> LiveSender | None:
    """This process's sender if one was made (never makes one)."""
    return _sender


class SendOutcome(NamedTuple):
    """What `send_file` sent."""

    endpoint: str
    sent: int
    dropped: int


def send_file(path: Any) -> SendOutcome:
    """Send an OTLP/JSON export (`export --format otlp --send`) to the configured endpoint, waiting for it."""
    from pathlib import Path

    from green_agent.trace.otel.otlp_json import spans_of
    from kernel.errors import BadInputError

    live = sender()
    if live is None:
        raise BadInputError(f"--send needs {ENDPOINT_ENVS[1]} (e.g. http://127.0.0.1:6006 for a local Phoenix)")
    before_sent, before_dropped = live.sent, live.dropped
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        spans = spans_of(line)
        if live.pending + len(spans) > MAX_QUEUED_SPANS:
            live.flush(max(FLUSH_TIMEOUT_S, 60.0))
        live.submit(spans)
    live.flush(max(FLUSH_TIMEOUT_S, 60.0))
    return SendOutcome(live.endpoint, live.sent - before_sent, live.dropped - before_dropped)
