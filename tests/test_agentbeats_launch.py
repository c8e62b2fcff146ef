"""A scenario agent that does not come up is named, with the tail of its launch log (exit 3).

Real processes: `appworld-green agentbeats run-scenario DIR --no-battle` launches the agents with
the wheel's ScenarioManager in tmux (fresh TMUX_TMPDIR), exactly as for a battle.
1. the Green's launcher port is taken, so its launcher exits and its tmux window closes: the
   command fails at once (well inside its wait), names the Green, and quotes its log;
2. the Blue's card file is missing, so its launcher runs but its agent never answers: after the
   wait the command names the Blue and quotes the error from its log (the Green may or may not
   be up by then on a busy machine, so only the Blue is checked).
Each agent's log stays in `<runs>/agentbeats-launch/<session>/` after its window is gone.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernel.ports import free_port, port_is_free
from kernel.settings import SCENARIO_DIR

pytestmark = pytest.mark.e2e
VENV_BIN = Path(sys.executable).parent
SESSION = "appworld_launch_test"


def scenario(tmp: Path, ports: dict[str, int], blue_card: str) -> Path:
    root = tmp / "scenario"
    root.mkdir(exist_ok=True)
    card = (SCENARIO_DIR / "offline" / "noop_blue_card.toml").read_text()
    (root / "green_card.toml").write_text(card.replace("http://127.0.0.1:9115/", f"http://127.0.0.1:{ports['green']}/"))
    tools = SCENARIO_DIR / "offline" / "noop_blue_tools.py"
    (root / "scenario.toml").write_text(f'''[scenario]
name = "launch_test"

[[agents]]
name = "AppWorld Green"
card = "green_card.toml"
launcher_host = "127.0.0.1"
launcher_port = {ports['green_launcher']}
agent_host = "127.0.0.1"
agent_port = {ports['green']}
tools = ["{tools}"]
is_green = true

  [[agents.participant_requirements]]
  role = "blue_agent"
  name = "blue_agent"
  required = true
  participant_agent = "No-op Blue"

[[agents]]
name = "No-op Blue"
card = "{blue_card}"
launcher_host = "127.0.0.1"
launcher_port = {ports['blue_launcher']}
agent_host = "127.0.0.1"
agent_port = {ports['blue']}
tools = ["{tools}"]

[launch]
mode = "tmux"
tmux_session_name = "{SESSION}"
''')
    return root


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    tmux_dir = Path(tempfile.mkdtemp(prefix="abtmux"))
    environ = {**os.environ, "TMUX_TMPDIR": str(tmux_dir), "RUNS_DIR": str(tmp_path / "runs"),
               "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONUNBUFFERED": "1",
               "OPENAI_AGENTS_DISABLE_TRACING": "1"}
    try:
        yield environ
    finally:
        subprocess.run(["tmux", "kill-server"], env=environ, capture_output=True, check=False)
        shutil.rmtree(tmux_dir, ignore_errors=True)


def run_scenario(root: Path, env: dict[str, str], ready_timeout: float) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    done = subprocess.run([str(VENV_BIN / "appworld-green"), "agentbeats", "run-scenario", str(root), "--no-battle",
                           "--ready-timeout", str(ready_timeout)], env=env, capture_output=True, text=True, timeout=240)
    return done, time.monotonic() - started


def wait_free(ports: list[int], timeout_s: float = 20) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not all(port_is_free(p) for p in ports):
        time.sleep(0.2)
    return all(port_is_free(p) for p in ports)


def test_an_agent_that_exits_is_named_at_once_with_its_log(tmp_path: Path, env: dict[str, str]) -> None:
    ports = {name: free_port() for name in ("green_launcher", "green", "blue_launcher", "blue")}
    root = scenario(tmp_path, ports, "missing_card.toml")
    holder = socket.socket()
    holder.bind(("127.0.0.1", ports["green_launcher"]))
    holder.listen()
    try:
        done, took = run_scenario(root, env, ready_timeout=120)
    finally:
        holder.close()
        subprocess.run(["tmux", "kill-server"], env=env, capture_output=True, check=False)
    assert done.returncode == 3, done.stdout + done.stderr
    assert took < 100, f"waited {took:.0f} s for an agent that had exited"
    assert "agent 'AppWorld Green' exited (its launch command ended)" in done.stderr, done.stderr
    assert "No-op Blue'" not in done.stderr  # still starting, not failed: not named
    assert "address already in use" in done.stderr.lower(), done.stderr  # the tail of its launch log
    log = tmp_path / "runs" / "agentbeats-launch" / SESSION / "AppWorld_Green.log"
    assert "address already in use" in log.read_text().lower()
    assert wait_free(list(ports.values()))


def test_an_agent_that_never_answers_is_named_after_the_wait(tmp_path: Path, env: dict[str, str]) -> None:
    ports = {name: free_port() for name in ("green_launcher", "green", "blue_launcher", "blue")}
    root = scenario(tmp_path, ports, "missing_card.toml")
    try:
        done, took = run_scenario(root, env, ready_timeout=40)
    finally:
        subprocess.run(["tmux", "kill-server"], env=env, capture_output=True, check=False)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "agent 'No-op Blue' not answering after 40 s" in done.stderr, done.stderr
    assert "missing_card.toml" in done.stderr  # the agent's own error, from its launch log
    assert wait_free(list(ports.values()))
