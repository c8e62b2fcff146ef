"""What `appworld-green assess` prints and where it writes.

The Green here is a stand-in A2A agent (`standin_green`: a2a-sdk's own server, in-process, or the process a
scenario's `cmd` starts) whose executor emits what our Green's does at the protocol level. The client side is the
real `send_request` and the CLI's score line: each state in words when an update has no message, TGC with its
interval. Two `assess` runs at once in one checkout keep their own run folders (logs, what the Green writes).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import uvicorn

from green_agent.a2a.local_runner import AgentEntry, Scenario, send_request
from green_agent.commands.a2a import assess_score_line
from kernel.ports import free_port
from standin_green import RESULT, app

CLI = str(Path(sys.executable).parent / "appworld-green")
STANDIN = Path(__file__).with_name("standin_green.py")


@pytest.fixture()
def green() -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = uvicorn.Server(uvicorn.Config(app(url), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while True:
        try:
            requests.get(f"{url}/.well-known/agent-card.json", timeout=1)
            break
        except requests.RequestException:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_assess_prints_each_state_in_words_and_tgc_with_its_interval(green: str, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = Scenario(green_agent=AgentEntry(endpoint=green), participants=[AgentEntry(endpoint="http://x", role="agent")])
    state, results = asyncio.run(send_request(scenario, assess_score_line))
    lines = capsys.readouterr().out.splitlines()
    assert state == "completed" and results == [RESULT]
    states = [line for line in lines if line.startswith("[") and not line.startswith("[artifact]")]
    assert all(len(line.split("] ", 1)) == 2 and line.split("] ", 1)[1].strip() for line in states), lines  # no empty
    assert "[working] assessment started: 3 task(s)" in states
    assert "[completed] the assessment finished; its results are the task's artifacts" in states
    assert lines[-1] == "TGC 66.7 [95% CI 20.8-93.9] (2/3 tasks passed)"  # as eval's summary prints an interval


def test_two_assess_runs_in_one_checkout_keep_their_own_logs_and_runs(tmp_path: Path) -> None:
    """Both use one RUNS_DIR (the checkout's `runs/`, here a temporary one); each writes only into its own run folder:
    its agents' logs and what its Green writes (RUNS_DIR is the run folder for the agents it starts)."""
    checkout_runs = tmp_path / "checkout-runs"
    env = {**os.environ, "RUNS_DIR": str(checkout_runs), "OPENAI_API_KEY": ""}
    runs = {}
    for mark in ("alpha", "beta"):
        port = free_port()
        scenario = tmp_path / f"{mark}.toml"
        scenario.write_text(f'[green_agent]\nendpoint = "http://127.0.0.1:{port}"\n'
                            f'cmd = "{sys.executable} {STANDIN} --port {port} --mark {mark}"\n')
        out = tmp_path / mark / "results.json"
        runs[mark] = (out, subprocess.Popen([CLI, "--env-file", "/dev/null", "assess", str(scenario), "--out", str(out)],
                                            env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True))
    for mark, (out, process) in runs.items():
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stdout[-2000:] + stderr[-2000:]
        run_dir = out.parent / "results-run"
        assert f"run folder {run_dir}" in stdout
        assert json.loads(out.read_text())["results"] == [RESULT]
        log = (run_dir / "logs" / "agent-0.log").read_text()
        other = "beta" if mark == "alpha" else "alpha"
        assert f"stand-in Green {mark}" in log and other not in log
        assert sorted(p.name for p in run_dir.iterdir()) == [f"{mark}.txt", "logs"]  # the Green wrote here
    assert not checkout_runs.exists()  # nothing of either run went to the shared runs folder
