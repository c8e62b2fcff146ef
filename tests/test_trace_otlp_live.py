"""The live export's sender (`green_agent.trace.otel.live`): bounded, never blocking, counting what it drops.

The exporter here is a stand-in for `opentelemetry-sdk`'s `SpanExporter` (its contract: `export(spans)` returns a
result whose `name` is `SUCCESS` or `FAILURE`, and may take up to its timeout); the real exporter against a real
collector, an unreachable one and no endpoint at all is tests/test_trace_otlp_phoenix.py's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest

from green_agent.trace.otel import live
from green_agent.trace.otel.spans import Span


def spans(n: int) -> list[Span]:
    return [Span(name="s", trace_id="a" * 32, span_id=f"{i + 1:016x}", start_ns=1, end_ns=2) for i in range(n)]


class Exporter:
    """Answers SUCCESS or FAILURE, after `delay_s`; counts what it was given."""

    def __init__(self, ok: bool = True, delay_s: float = 0.0) -> None:
        self.ok, self.delay_s, self.calls, self.gate = ok, delay_s, [], threading.Event()
        self.gate.set()

    def export(self, batch: list) -> SimpleNamespace:
        self.gate.wait(10)
        time.sleep(self.delay_s)
        self.calls.append(len(batch))
        return SimpleNamespace(name="SUCCESS" if self.ok else "FAILURE")


def test_each_battle_is_one_request_and_its_fate_is_told() -> None:
    exporter, told = Exporter(), []
    sender = live.LiveSender("http://127.0.0.1:1", exporter)
    for n in (3, 5):
        assert sender.submit(spans(n), lambda s, d, e: told.append((s, d, e)))
    assert sender.flush(5)
    assert exporter.calls == [3, 5] and told == [(3, 0, None), (5, 0, None)]
    assert (sender.sent, sender.dropped) == (8, 0)


def test_a_failing_collector_costs_one_request_one_warning_and_the_count(caplog: pytest.LogCaptureFixture) -> None:
    exporter, told = Exporter(ok=False), []
    sender = live.LiveSender("http://127.0.0.1:1", exporter)
    for _ in range(4):
        sender.submit(spans(2), lambda s, d, e: told.append((s, d)))
    assert sender.flush(5)
    assert exporter.calls == [2], "given up after the first failure (the cooldown): no request per battle"
    assert told == [(0, 2)] * 4 and sender.dropped == 8
    assert len([r for r in caplog.records if "OpenTelemetry export" in r.getMessage()]) == 1


def test_submit_never_waits_for_a_slow_collector_and_a_full_queue_drops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "MAX_QUEUED_SPANS", 10)
    exporter, told = Exporter(), []
    exporter.gate.clear()  # the collector hangs
    sender = live.LiveSender("http://127.0.0.1:1", exporter)
    started = time.monotonic()
    results = [sender.submit(spans(4), lambda s, d, e: told.append((s, d, e))) for _ in range(4)]
    assert time.monotonic() - started < 0.5
    assert results == [True, True, False, False]
    assert told == [(0, 4, "the export queue was full")] * 2
    assert not sender.flush(0.3), "the flush is bounded"
    exporter.gate.set()
    deadline = time.monotonic() + 5
    while len(told) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(told)[-1][0] == 4, "the request in flight settles when the collector answers"
    assert sender.dropped + sender.sent == 16


def test_no_endpoint_no_sender(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in live.ENDPOINT_ENVS:
        monkeypatch.delenv(name, raising=False)
    assert live.configured() is None and live.sender() is None
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
    assert live.configured() == "http://127.0.0.1:1"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:2/v1/traces")
    assert live.configured() == "http://127.0.0.1:2/v1/traces", "the signal's own variable first, as the SDK reads"


def test_with_no_endpoint_the_serving_doors_import_no_opentelemetry_sdk() -> None:
    """`serve` and the v1 session import their whole stack (the A2A server, the assessment, the bridge, the
    engine): with no endpoint, nothing of OpenTelemetry's SDK or exporter, nor our modules that use them. (a2a-sdk
    itself imports OpenTelemetry's API, `opentelemetry` and `opentelemetry.trace`, when it is installed: its own
    doing, before this export existed; an eval, which never imports a2a-sdk, imports no `opentelemetry` module at
    all: tests/test_trace_otlp_phoenix.py.)"""
    code = ("import json, sys\n"
            "import green_agent.a2a.server, green_agent.a2a.assessment, green_agent.a2a.bridge.server\n"
            "import green_agent.agentbeats.session, green_agent.engine.sequencer, green_agent.batch.evaluate\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = json.loads(proc.stdout.splitlines()[-1])
    assert "green_agent.trace.otel.hook" in modules and "a2a.server.apps" in modules
    assert [m for m in modules if m.startswith(("opentelemetry.sdk", "opentelemetry.exporter"))] == []
    assert "green_agent.trace.otel.sdk_spans" not in modules
