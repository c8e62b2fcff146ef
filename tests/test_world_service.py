"""`world up` / `world down`: slots on 127.0.0.1, recorded PIDs, exact stop, clear port errors.

These use slot 0's fixed ports (8000/9000/10000): `world up` serves the seed's ports by design.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import requests
from kernel.errors import InfrastructureError
from green_agent.gateway_client import GatewayClient
from kernel.ports import port_is_free
from kernel.settings import Settings
from kernel.slot_credentials import load_credentials, require_credentials
from green_agent.runtime.world_service import read_state, start_slots, state_path, stop_slots

SLOT0_PORTS = (8000, 9000, 10000)


@pytest.fixture()
def isolated_settings(settings: Settings, appworld_root: Path, tmp_path: Path) -> Settings:
    busy = [p for p in SLOT0_PORTS if not port_is_free(p)]
    if busy:
        pytest.fail(f"slot 0 ports {busy} are taken by something else on this machine; free them to run this test")
    return settings.model_copy(update={"runs_dir": tmp_path / "runs",
                                       "agentbeats_mcp_log_path": tmp_path / "calls.jsonl"})


@pytest.mark.e2e
def test_world_up_serves_and_down_stops_exactly_its_processes(isolated_settings: Settings) -> None:
    state = start_slots(isolated_settings, 1)
    pids = [p.pid for slot in state.slots for p in slot.processes]
    try:
        assert len(pids) == 3 and all(psutil.pid_exists(pid) for pid in pids)
        guard = require_credentials("http://127.0.0.1:9000")  # left for later battles of this user
        assert requests.get("http://127.0.0.1:8000/", timeout=5).status_code == 404  # guarded
        welcome = requests.get("http://127.0.0.1:8000/", headers=guard.guard_headers(), timeout=5).json()
        assert "Welcome to AppWorld" in welcome["message"]
        assert requests.get("http://127.0.0.1:10000/health", timeout=5).json()["status"] == "ok"
        assert GatewayClient.for_slot("http://127.0.0.1:10000", "http://127.0.0.1:9000").health() is None
        assert read_state(isolated_settings).slots[0].urls.apis_url == "http://127.0.0.1:9000"
        with pytest.raises(InfrastructureError, match="already up"):
            start_slots(isolated_settings, 1)
    finally:
        stopped = stop_slots(isolated_settings)
    assert len(stopped) == 3
    assert not state_path(isolated_settings).exists() and load_credentials("http://127.0.0.1:9000") is None
    assert all(not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE for pid in pids)
    assert all(port_is_free(p) for p in SLOT0_PORTS)
    assert stop_slots(isolated_settings) == []  # down twice is harmless


@pytest.mark.e2e
def test_world_up_refuses_a_taken_port_and_leaves_nothing_running(isolated_settings: Settings) -> None:
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.bind(("127.0.0.1", 8000))
    holder.listen()
    try:
        before = {p.pid for p in psutil.Process().children(recursive=True)}
        with pytest.raises(InfrastructureError, match="8000"):
            start_slots(isolated_settings, 1)
        after = {p.pid for p in psutil.Process().children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE}
        assert after <= before
        assert port_is_free(9000) and port_is_free(10000)
    finally:
        holder.close()


def test_slot_count_is_bounded(settings: Settings, tmp_path: Path) -> None:
    bounded = settings.model_copy(update={"runs_dir": tmp_path})
    with pytest.raises(InfrastructureError, match="between 1 and"):
        start_slots(bounded, 0)


def test_world_down_without_up_says_so(tmp_path: Path) -> None:
    proc = subprocess.run([str(Path(sys.executable).parent / "appworld-green"), "world", "down"],
                          capture_output=True, text=True, timeout=180, env={"RUNS_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert "no world slots were up" in proc.stdout


def _world_up(settings: Settings, tmp_path: Path) -> subprocess.Popen:
    env = {**os.environ, "RUNS_DIR": str(settings.runs_dir), "APPWORLD_ROOT": str(settings.appworld_root),
           "AGENTBEATS_MCP_LOG_PATH": str(settings.agentbeats_mcp_log_path)}
    return subprocess.Popen([str(Path(sys.executable).parent / "appworld-green"), "world", "up", "--foreground"],
                            stdout=(tmp_path / "up.out").open("w"), stderr=(tmp_path / "up.err").open("w"), env=env)


def _descendants(pid: int) -> set[int]:
    try:
        return {p.pid for p in psutil.Process(pid).children(recursive=True)}
    except psutil.NoSuchProcess:
        return set()


@pytest.mark.e2e
@pytest.mark.parametrize(("sig", "when"), [(signal.SIGINT, "serving"), (signal.SIGTERM, "starting")])
def test_world_up_in_the_foreground_stops_everything_on_a_signal(isolated_settings: Settings, tmp_path: Path,
                                                                sig: signal.Signals, when: str) -> None:
    process = _world_up(isolated_settings, tmp_path)
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            seen |= _descendants(process.pid)
            if when == "starting" and len(seen) >= 2:  # servers launched, not all answering yet
                break
            if when == "serving" and "serving" in (tmp_path / "up.out").read_text():
                break
            assert process.poll() is None, (tmp_path / "up.err").read_text()[-2000:]
            time.sleep(0.1)
        else:
            raise AssertionError(f"world up never reached {when}")
        process.send_signal(sig)
        assert process.wait(timeout=60) == 130, (tmp_path / "up.err").read_text()[-2000:]
    finally:
        if process.poll() is None:
            process.kill()
    alive = [pid for pid in seen if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert alive == [], "world up left processes running"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not all(port_is_free(p) for p in SLOT0_PORTS):
        time.sleep(0.1)
    assert all(port_is_free(p) for p in SLOT0_PORTS)
    assert not state_path(isolated_settings).exists()
