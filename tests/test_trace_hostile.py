"""The trace against a hostile Blue and under kills: real `eval` processes, a real Blue process (tests/trace_blue.py).

- A Blue whose calls and reply hold markup, arguments nested 80 levels deep and ~900 kB of text: the trace is cut
  (each string at 20,000 characters, arguments at 20 levels) and the page, opened in headless Chromium,
  shows the markup as text (no injected element, no script ran); a screenshot is kept for a person to look at.
- A Blue SIGKILLed after two calls, and a gateway SIGKILLed after them: the battle's trace keeps both calls.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from faults_support import answers, wait_until
from green_agent.models.eval_run import EvalResults
from green_agent.trace.reader import read_trace
from kernel.ports import free_port
from test_batch_e2e import CLI, assert_nothing_left, cli_env, slot_ports
from test_report_html import CHROMIUM_FLAGS, chromium, chromium_env, dump_dom  # noqa: F401 - the fixture
from test_trace_e2e import assert_no_secret
from trace_blue import MARKUP

pytestmark = pytest.mark.e2e
TRACE_BLUE = Path(__file__).resolve().parent / "trace_blue.py"
SCREENSHOTS_ENV = "TRACE_SCREENSHOTS"
"""A folder to keep the page's screenshot in, for a person to look at (default: the test's tmp_path)."""


@contextmanager
def trace_blue(mode: str) -> Iterator[tuple[str, subprocess.Popen]]:
    port = free_port()
    process = subprocess.Popen([sys.executable, str(TRACE_BLUE), "--port", str(port), "--mode", mode],
                               start_new_session=True)
    try:
        wait_until(lambda: answers(f"http://127.0.0.1:{port}/.well-known/agent-card.json"), 20, "trace blue up")
        yield f"http://127.0.0.1:{port}", process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


def start_eval(root: Path, tmp: Path, blue: str, out: Path) -> tuple[subprocess.Popen, list[int]]:
    ports_arg, ports = slot_ports(1)
    argv = [CLI, "eval", "--task-ids", "f0a1c01_1", "--blue", blue, "--predictor", "ground_truth", "--workers", "1",
            "--out", str(out), "--slot-ports", ports_arg, "--deadline", "90", "--max-infra-retries", "0"]
    return subprocess.Popen(argv, env=cli_env(root, tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True), ports


def battle_folder(out: Path) -> Path:
    results = EvalResults.model_validate_json((out / "results.json").read_text())
    return out / Path(results.rows[0].result_path).parent


def test_hostile_text_is_cut_and_the_page_renders_it_as_text(chromium: str, tmp_path: Path,  # noqa: F811
                                                             appworld_root: Path) -> None:
    out = tmp_path / "hostile"
    with trace_blue("hostile") as (url, _):
        proc, ports = start_eval(appworld_root, tmp_path, url, out)
        stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr[-3000:]
    assert_nothing_left(ports)
    folder = battle_folder(out)
    records = read_trace(folder / "trace.jsonl")
    reply = next(r for r in records if r.kind == "agent_reply")
    assert reply.text.startswith(MARKUP) and "characters in all]" in reply.text and len(reply.text) < 20_100
    deep = next(r for r in records if r.kind == "tool_call" and "deeper" in json.dumps(r.arguments))
    assert "nested too deep" in json.dumps(deep.arguments) and not deep.ok
    answer = next(r for r in records if r.tool == "supervisor__complete_task")
    assert answer.arguments == {"answer": MARKUP}
    assert (folder / "trace.jsonl").stat().st_size < 1_000_000
    page = folder / "trace.html"
    dom = dump_dom(chromium, page, tmp_path / "profile")
    assert '<b id="injected"' not in dom and "<img" not in dom and "window.pwned" in dom  # shown, as text
    assert dom.count("&lt;script&gt;") >= 3
    shot = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path) / "trace-hostile.png"
    with chromium_env() as env:
        done = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile2'}",
                               f"--screenshot={shot}", "--window-size=1200,1600", f"file://{page}"],
                              capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and shot.stat().st_size > 10_000, done.stderr[-2000:]
    assert_no_secret(folder / "trace.jsonl", page)


def _gateway_pid(port: int) -> int:
    for proc in psutil.process_iter(["pid"]):
        try:
            if any(c.laddr.port == port and c.status == "LISTEN" for c in proc.net_connections()):
                return proc.pid
        except psutil.Error:
            continue
    raise AssertionError(f"no process listens on the gateway's port {port}")


def _traced_calls(out: Path) -> int:
    return sum(line.count('"kind":"tool_call"') for path in out.rglob("*.trace.jsonl") for line in [path.read_text()])


@pytest.mark.parametrize("victim", ["blue", "gateway"])
def test_a_battle_killed_midway_keeps_its_trace_up_to_the_kill(tmp_path: Path, appworld_root: Path,
                                                                victim: str) -> None:
    out = tmp_path / victim
    with trace_blue("hang") as (url, blue):
        proc, ports = start_eval(appworld_root, tmp_path, url, out)
        try:
            wait_until(lambda: _traced_calls(out) >= 2, 300, "the Blue's two calls traced")
            time.sleep(0.5)
            os.kill(blue.pid if victim == "blue" else _gateway_pid(ports[2]), signal.SIGKILL)
            stdout, stderr = proc.communicate(timeout=600)
        finally:
            if proc.poll() is None:
                proc.kill()
    folder = battle_folder(out)
    records = read_trace(folder / "trace.jsonl")
    calls = [r.tool for r in records if r.kind == "tool_call"]
    assert calls == ["supervisor__show_profile", "supervisor__show_account_passwords"], (calls, stderr[-2000:])
    result = json.loads((folder / "result.json").read_text())
    verdict = next(r for r in records if r.kind == "verdict")
    assert verdict.outcome == result["outcome"]
    if victim == "blue":
        assert result["outcome"] == "blue_error"
        assert next(r for r in records if r.kind == "agent_reply").error
    assert (folder / "trace.html").is_file()
