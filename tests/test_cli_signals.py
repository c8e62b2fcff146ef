"""The CLI restores Ctrl-C at start: a battle started with SIGINT ignored (a script's background job) still stops.

Real processes: the CLI runs as a subprocess, attached (`--env-url`) to a stand-in env server in this
test that accepts requests and never answers them (except `/close`), so the battle sits in its setup
step until the signal comes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kernel.world_data import WorldData

CLI = str(Path(sys.executable).parent / "appworld-green")


class StuckEnv(ThreadingHTTPServer):
    """Stands for an AppWorld env server stuck on a request: every call but /close waits until `release`."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen = threading.Event()
        self.release = threading.Event()
        self.paths: list[str] = []


class _Handler(BaseHTTPRequestHandler):
    server: StuckEnv

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.server.paths.append(self.path)
        if self.path != "/close":
            self.server.seen.set()
            self.server.release.wait(30)
        body = json.dumps({"output": None}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def stuck_env() -> Iterator[StuckEnv]:
    server = StuckEnv()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what `cmd &` in a non-interactive shell does


def test_a_battle_started_with_sigint_ignored_is_still_interrupted(tmp_path: Path, appworld_root: Path,
                                                                   stuck_env: StuckEnv) -> None:
    url = f"http://127.0.0.1:{stuck_env.server_address[1]}"
    task = WorldData(appworld_root).split("dev")[0]
    env = {**os.environ, "APPWORLD_ROOT": str(appworld_root), "RUNS_DIR": str(tmp_path / "runs"),
           "OPENAI_API_KEY": "", "AGENTBEATS_MCP_LOG_PATH": str(tmp_path / "calls.jsonl")}
    argv = [CLI, "battle", "--task-id", task, "--blue", "http://127.0.0.1:9/", "--env-url", url, "--apis-url", url,
            "--out", str(tmp_path / "run")]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_ignore_sigint)
    try:
        assert stuck_env.seen.wait(60), "the battle never reached the env server"
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        code = proc.wait(timeout=15)
        elapsed = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 130, proc.stderr.read()[-2000:] if proc.stderr else ""
    assert elapsed < 10
    record = json.loads((tmp_path / "run" / "result.json").read_text())
    assert record["error"]["type"] == "Interrupted" and record["error"]["step"] == "setup"
    assert "/close" in stuck_env.paths  # cleanup still ran
