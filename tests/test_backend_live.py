"""A page watching `/ws/battles` sees every update of a battle, in order, up to `finished`.

Real processes: `appworld-green agentbeats backend` (the wheel's backend app, our wrapper) and, for
the stock command, `agentbeats run_backend`; the test is the browser (a plain websocket client, as the
web UI's `/ws` proxy is). The two agents are a stand-in that serves an A2A agent card and answers the
launcher's `/reset` with 200 but never reports ready, so the backend's battle processor stops at
"Waiting for agents to be ready" (120 s) while the test posts the Green's entries and its result
itself (`POST /battles/{id}`, the same call the Green's SDK makes). Contract of the stand-in: the
backend needs only a card that `A2ACardResolver` accepts at registration and a 200 from `/reset`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests
from a2a.types import AgentCapabilities, AgentCard
from websockets.sync.client import connect

from kernel.ports import free_port, port_is_free

pytestmark = pytest.mark.e2e
VENV_BIN = Path(sys.executable).parent
RECV_TIMEOUT_S = 10.0


class _StandIn(BaseHTTPRequestHandler):
    card: dict[str, Any] = {}

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._answer(self.card if self.path.startswith("/.well-known/agent") else {})

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer({"status": "ok"})

    def _answer(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def stand_in() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StandIn)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    _StandIn.card = AgentCard(name="Stand-in", description="test agent", url=url + "/", version="1",
                              capabilities=AgentCapabilities(), default_input_modes=["text"],
                              default_output_modes=["text"], skills=[]).model_dump(mode="json", by_alias=True,
                                                                                  exclude_none=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


def _start(argv: list[str], log: Path, port: int, cwd: Path) -> subprocess.Popen:
    proc = subprocess.Popen(argv, stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True)
    deadline = time.monotonic() + 90
    while True:
        try:
            if requests.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc
        except requests.RequestException:
            pass
        assert proc.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.3)


def _stop(proc: subprocess.Popen, ports: list[int]) -> None:
    import os
    import signal

    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(port_is_free(p) for p in ports):
        time.sleep(0.2)


def _register(backend: str, stand_in: str, alias: str, green: bool) -> str:
    body: dict[str, Any] = {"alias": alias, "agent_url": stand_in, "launcher_url": stand_in, "is_green": green}
    if green:
        body["participant_requirements"] = [{"role": "blue_agent", "name": "blue_agent", "required": True}]
    response = requests.post(f"{backend}/agents", json=body, timeout=30)
    assert response.status_code == 201, response.text
    return response.json()["agent_id"]


def _post(backend: str, battle_id: str, event: dict[str, Any]) -> None:
    response = requests.post(f"{backend}/battles/{battle_id}", json=event, timeout=30)
    assert response.status_code == 204, response.text


def _until_waiting_for_ready(ws: Any, battle_id: str) -> list[dict[str, Any]]:
    """The battle's updates up to the processor's "Waiting for agents to be ready" (where it stays, writing nothing).

    Upstream's processor and `POST /battles/{id}` each read the battle, append to its history and write it back,
    unlocked, on different threads: posts made while the processor still logs its first steps can each write a
    history that misses the other's entries (a loaded machine showed lengths 1, 2, 1, 2, 3). A real Green posts
    only once the processor has notified it, after its last step; so do we."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60

    def waiting() -> bool:
        return any(e.get("message") == "Waiting for agents to be ready" for e in seen[-1]["interact_history"])

    while not (seen and waiting()):
        assert time.monotonic() < deadline, [len(b["interact_history"]) for b in seen]
        update = json.loads(ws.recv(timeout=RECV_TIMEOUT_S))
        if update["type"] == "battle_update" and update["battle"]["battle_id"] == battle_id:
            seen.append(update["battle"])
    return seen


def _watch_one_battle(backend: str, ws_url: str, stand_in: str) -> None:
    green = _register(backend, stand_in, "Green", True)
    blue = _register(backend, stand_in, "Blue", False)
    with connect(ws_url, open_timeout=10) as ws:
        first = json.loads(ws.recv(timeout=RECV_TIMEOUT_S))
        assert first["type"] == "battles_update"  # sent by the handler itself on connect: always arrived
        response = requests.post(f"{backend}/battles", json={"green_agent_id": green, "config": {}, "opponents": [
            {"name": "blue_agent", "agent_id": blue}]}, timeout=30)
        assert response.status_code == 201, response.text
        battle_id = response.json()["battle_id"]
        listed = json.loads(ws.recv(timeout=RECV_TIMEOUT_S))  # the list with the new battle in it
        assert listed["type"] == "battles_update", listed
        assert battle_id in [b["battle_id"] for b in listed["battles"]]
        seen = _until_waiting_for_ready(ws, battle_id)
        sent = [f"Step {k}: entry {k}" for k in range(1, 6)]
        for message in sent:
            _post(backend, battle_id, {"is_result": False, "message": message, "reported_by": "green_agent"})
        _post(backend, battle_id, {"is_result": True, "message": "Blue wins: done", "winner": "blue_agent",
                                   "reported_by": "green_agent", "detail": {"winner": "blue_agent"}})
        deadline = time.monotonic() + 60
        while not (seen and seen[-1]["state"] == "finished"):
            assert time.monotonic() < deadline, [b.get("state") for b in seen]
            update = json.loads(ws.recv(timeout=RECV_TIMEOUT_S))
            if update["type"] == "battle_update" and update["battle"]["battle_id"] == battle_id:
                seen.append(update["battle"])
    ours = [[e["message"] for e in b["interact_history"] if e.get("reported_by") == "green_agent"] for b in seen]
    for message in sent:  # each of our posts produced an update holding it and everything before it
        assert any(posted[-1:] == [message] for posted in ours), (message, ours)
    assert ours[-1] == sent + ["Blue wins: done"]
    lengths = [len(b["interact_history"]) for b in seen]
    assert lengths == sorted(lengths), lengths  # in order
    assert seen[-1]["result"]["winner"] == "blue_agent"
    listed_now = {b["battle_id"]: b["state"] for b in requests.get(f"{backend}/battles", timeout=10).json()}
    assert listed_now[battle_id] == "finished"


def test_a_websocket_client_sees_every_update_of_a_battle_on_our_backend(tmp_path: Path, stand_in: str) -> None:
    port, mcp_port = free_port(), free_port()
    proc = _start([str(VENV_BIN / "appworld-green"), "agentbeats", "backend", "--port", str(port), "--mcp-port",
                   str(mcp_port), "--data-dir", str(tmp_path / "db")], tmp_path / "backend.log", port, tmp_path)
    try:
        _watch_one_battle(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws/battles", stand_in)
    finally:
        _stop(proc, [port, mcp_port])


STOCK_SERVE = """
import os, sys
from pathlib import Path
os.environ.update(DEV_LOGIN="true", PUBLIC_BACKEND_URL="http://127.0.0.1:" + sys.argv[1])
os.environ.setdefault("OPENROUTER_API_KEY", "unused-offline")
from green_agent.agentbeats.backend import load_with_data_dir
load_with_data_dir(Path(sys.argv[2]))  # only the database path differs from `agentbeats run_backend`
import uvicorn
uvicorn.run("backend.app:app", host="127.0.0.1", port=int(sys.argv[1]))  # run_backend's own call
"""


def test_the_stock_way_of_serving_gets_the_same_fix_from_the_pth_hook(tmp_path: Path, stand_in: str) -> None:
    """`agentbeats run_backend` serves `"backend.app:app"` by import string; uvicorn imports it before its
    loop exists, so upstream's captured loop is dead there too. The `.pth` hook patches it on import."""
    port = free_port()
    proc = _start([sys.executable, "-c", STOCK_SERVE, str(port), str(tmp_path / "db")], tmp_path / "backend.log",
                  port, tmp_path)
    try:
        _watch_one_battle(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws/battles", stand_in)
    finally:
        _stop(proc, [port])


def test_registering_a_scenario_twice_reuses_its_agents_and_forwards_the_avatar(tmp_path: Path, stand_in: str) -> None:
    """Upstream's run_scenario registers every agent again under a new id; the compat hook reuses an agent the
    backend holds with exactly the same registration, and forwards `avatar_url` (the UI chip's image)."""
    from agentbeats.utils.deploy.scenario_manager import ScenarioManager

    port, mcp_port = free_port(), free_port()
    stand_port = stand_in.rsplit(":", 1)[1]
    avatar = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E"
    (tmp_path / "card.toml").write_text('name = "Probe"\ndescription = "probe"\nurl = "http://127.0.0.1:1/"\n'
                                        'version = "1"\n')
    (tmp_path / "scenario.toml").write_text(f"""
[scenario]
name = "reuse_probe"

[[agents]]
name = "Probe Blue"
card = "card.toml"
launcher_host = "127.0.0.1"
launcher_port = {stand_port}
agent_host = "127.0.0.1"
agent_port = {stand_port}
avatar_url = "{avatar}"
""")
    proc = _start([str(VENV_BIN / "appworld-green"), "agentbeats", "backend", "--port", str(port), "--mcp-port",
                   str(mcp_port), "--data-dir", str(tmp_path / "db")], tmp_path / "backend.log", port, tmp_path)
    try:
        backend = f"http://127.0.0.1:{port}"
        manager = ScenarioManager(scenario_root=tmp_path)
        first = manager.register_agent_to_backend(manager.agents[0], backend)
        again = ScenarioManager(scenario_root=tmp_path)
        second = again.register_agent_to_backend(again.agents[0], backend)
        agents = requests.get(f"{backend}/agents", timeout=10).json()
    finally:
        _stop(proc, [port, mcp_port])
    assert first and second == first and {a["agent_id"] for a in agents} == {first}  # dev login lists each twice
    assert agents[0]["register_info"]["avatar_url"] == avatar
