"""`appworld-green agentbeats backend` stops on SIGTERM within seconds while a browser holds a streaming connection.

The upstream web UI keeps a WebSocket open on `/ws/battles` (the backend pushes battle updates); uvicorn's
graceful shutdown waits for open connections to finish, and a second SIGTERM does not force it, so
without a bound on that wait the wrapper and its MCP child stayed up. Real processes: the wrapper, the
wheel's backend app and its MCP server; the test is the browser.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from websockets.sync.client import connect

from kernel.ports import free_port, port_is_free

pytestmark = pytest.mark.e2e
STOP_WITHIN_S = 8.0
VENV_BIN = Path(sys.executable).parent


def _wait_listening(port: int, proc: subprocess.Popen, log: Path, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while port_is_free(port):
        assert proc.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, f"port {port} never opened: {log.read_text()[-3000:]}"
        time.sleep(0.3)


def test_sigterm_stops_the_backend_and_its_mcp_child_with_a_websocket_open(tmp_path: Path) -> None:
    port, mcp_port = free_port(), free_port()
    log = tmp_path / "backend.log"
    proc = subprocess.Popen([str(VENV_BIN / "appworld-green"), "agentbeats", "backend", "--port", str(port),
                             "--mcp-port", str(mcp_port), "--data-dir", str(tmp_path / "db")],
                            stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "OPENROUTER_API_KEY": "unused-offline"})
    try:
        _wait_listening(port, proc, log)
        _wait_listening(mcp_port, proc, log)
        with connect(f"ws://127.0.0.1:{port}/ws/battles", open_timeout=10) as browser:
            assert "battles_update" in browser.recv(timeout=10)  # the stream is live, as in the web UI
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_WITHIN_S)
            except subprocess.TimeoutExpired:
                pytest.fail(f"still running {STOP_WITHIN_S} s after SIGTERM: {log.read_text()[-2000:]}")
            took = time.monotonic() - started
        deadline = time.monotonic() + 3
        while not port_is_free(mcp_port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert port_is_free(port) and port_is_free(mcp_port), "the MCP child outlived the wrapper"
        assert took < STOP_WITHIN_S
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the group this test started (the wrapper and its MCP child)
            proc.wait(timeout=10)
