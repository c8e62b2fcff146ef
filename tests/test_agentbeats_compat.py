"""The agentbeats 1.2.6 compatibility layer: D1 (run_scenario), D2 (run_backend), D3 (battle_timeout)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from green_agent.agentbeats_compat.install import status
from green_agent.runtime.processes import stop_process_group
from kernel.ports import free_port, port_is_free

VENV_BIN = Path(sys.executable).parent

SCENARIO_TOML = """
[scenario]
name = "compat_probe"

[[agents]]
name = "Probe Green"
card = "card.toml"
launcher_host = "127.0.0.1"
launcher_port = 1
agent_host = "127.0.0.1"
agent_port = 2
is_green = true
battle_timeout = 1500
"""


def test_layer_is_installed() -> None:
    assert status() == {"pth_hook": True, "backend_link": True}


def test_scenario_manager_defaults_project_dir_and_forwards_battle_timeout(tmp_path: Path) -> None:
    (tmp_path / "scenario.toml").write_text(SCENARIO_TOML)
    code = f"""
import json, sys
from agentbeats.utils.deploy import scenario_manager as sm
sent = []
class Reply:
    status_code = 201
    def json(self): return {{"agent_id": "a1"}}
sm.requests.post = lambda url, json=None, **kw: sent.append(json) or Reply()
manager = sm.ScenarioManager(scenario_root=r"{tmp_path}")  # D1: no project_dir
agent_id = manager.register_agent_to_backend(manager.agents[0], "http://127.0.0.1:1")
print(json.dumps({{"project_dir": str(manager.project_dir), "agent_id": agent_id, "sent": sent}}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    import json

    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["project_dir"] == str(tmp_path)
    assert out["agent_id"] == "a1"
    assert out["sent"][0]["battle_timeout"] == 1500
    assert out["sent"][0]["alias"] == "Probe Green"


@pytest.mark.e2e
def test_run_backend_starts_and_answers_on_loopback(tmp_path: Path) -> None:
    backend_port, mcp_port = free_port(), free_port()
    env = {**os.environ, "OPENROUTER_API_KEY": "dummy", "OPENAI_API_KEY": "dummy"}
    proc = subprocess.Popen(
        [str(VENV_BIN / "agentbeats"), "run_backend", "--host", "127.0.0.1",
         "--backend_port", str(backend_port), "--mcp_port", str(mcp_port)],
        cwd=tmp_path, env=env, stdout=open(tmp_path / "backend.log", "wb"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        reply = None
        while time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / "backend.log").read_text()[-3000:]
            try:
                reply = requests.get(f"http://127.0.0.1:{backend_port}/agents", timeout=2)
                break
            except requests.RequestException:
                time.sleep(0.5)
        assert reply is not None and reply.status_code == 200, (tmp_path / "backend.log").read_text()[-3000:]
        assert isinstance(reply.json(), list)
    finally:
        stop_process_group(proc.pid)
        proc.wait(timeout=15)
    time.sleep(0.5)
    assert port_is_free(backend_port) and port_is_free(mcp_port)
