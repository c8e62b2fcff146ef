"""Hostile input is refused with a clear error before any file, URL, command or request is built from it.

Surfaces: task ids (library, `appworld-green battle`, the AgentBeats battle_start path), the
battle_start message itself, and tool arguments (the MCP gateway, the LLM Blue's
`call_appworld_tool`). Every service that must not be contacted is a `RecordingServer`
(faults_support), so "no request was sent" is checked, not assumed; "no file" is checked by
listing the runs and log folders.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

from blue_agent import llm_tools
from faults_support import RecordingServer, fault_settings, first_task
from green_agent.agentbeats import registry
from green_agent.agentbeats.battle_start import parse_battle_start
from green_agent.appworld_client import AppWorldClient
from green_agent.cli import main
from kernel.errors import BadInputError
from green_agent.gateway_client import GatewayClient
from green_agent.runtime.processes import ManagedProcess
from kernel.ports import free_port
from kernel.slot_credentials import create_credentials, port_of, remove_credentials
from kernel.settings import Settings
from kernel.task_ids import resolve_task
from kernel.world_data import WorldData
from kernel.call_log_reader import read_call_log

HOSTILE_IDS = {
    "traversal": "../../etc/passwd",
    "shell": "x; rm -rf /",
    "huge": "7" * 50 + "a" * 100_000,
    "cyrillic": "7c1\u04300e2_1",           # Cyrillic 'а' in place of the Latin one
    "fullwidth": "7c1a0e2_\uff11",           # fullwidth digit one
    "fullwidth_index": "\uff11",
    "nul": "7c1a0e2_1\x00",
    "url_encoded": "..%2f..%2fetc%2fpasswd",
    "description_traversal": "Task description: ../../etc/passwd",
    "index_out_of_range": "999999",
}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, appworld_root: Path) -> Settings:
    return fault_settings(tmp_path_factory.mktemp("hostile"), appworld_root)


@pytest.fixture(scope="module")
def recorder() -> Iterator[RecordingServer]:
    """Stands for the env server, APIs server, gateway and Blue: none may be contacted."""
    with RecordingServer(status=200) as server:
        yield server


@pytest.mark.parametrize("name", HOSTILE_IDS)
def test_hostile_task_id_is_refused_before_any_request(name: str, env: Settings, recorder: RecordingServer) -> None:
    recorder.requests.clear()
    world = WorldData(env.appworld_root)
    for kwargs in ({"world": world}, {"world": None, "lookup": AppWorldClient(recorder.url)}):
        with pytest.raises(BadInputError) as info:
            resolve_task(HOSTILE_IDS[name], split=env.default_split, **kwargs)
        message = str(info.value)
        assert len(message) < 400 and ("task" in message) and "\x00" not in message
    assert recorder.requests == []


@pytest.mark.parametrize("name", ["traversal", "shell", "huge", "cyrillic", "fullwidth"])
def test_cli_battle_refuses_hostile_ids_with_exit_2_and_creates_nothing(
        name: str, env: Settings, recorder: RecordingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    recorder.requests.clear()
    runs, logs = tmp_path / "runs", tmp_path / "logs"
    for key, value in {"RUNS_DIR": runs, "AGENTBEATS_MCP_LOG_PATH": logs / "calls.jsonl",
                       "APPWORLD_ROOT": env.appworld_root, "DEFAULT_SPLIT": env.default_split}.items():
        monkeypatch.setenv(key, str(value))
    previous = signal.getsignal(signal.SIGTERM)
    try:
        code = main(["--env-file", "/dev/null", "battle", "--task-id", HOSTILE_IDS[name], "--blue", recorder.url,
                     "--env-url", recorder.url, "--apis-url", recorder.url, "--gateway-url", recorder.url])
    finally:
        signal.signal(signal.SIGTERM, previous)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "Traceback" not in err and len(err) < 500
    assert "invalid task id" in err or "too long" in err
    assert not runs.exists() and not logs.exists()
    assert recorder.requests == []


def _start(task_config: str, battle_id: str, backend: str, blue: str) -> str:
    return json.dumps({"type": "battle_start", "battle_id": battle_id,
                       "green_battle_context": {"battle_id": battle_id, "backend_url": backend,
                                                "agent_name": "green", "task_config": task_config},
                       "opponent_infos": [{"name": "blue_agent", "agent_url": blue}]})


@pytest.mark.parametrize("text, expected", [
    ("Task description: 7c1a0e2_1", "not valid JSON"),                         # plain text, not JSON
    ("{\"type\": \"battle_start\", \"battle_id\": ", "not valid JSON"),          # truncated JSON
    (json.dumps({"type": "battle_start"}), "battle_id: Field required"),
    (json.dumps({"type": "battle_start", "battle_id": ["b"], "green_battle_context": "x", "opponent_infos": {}}),
     "battle_id: Input should be a valid string"),
    (_start("", "b", "javascript:alert(1)", "http://127.0.0.1:1"), "not an http(s) URL"),
    (_start("", "b", "http://127.0.0.1:1", "http://127.0.0.1:1; rm -rf /"), "not an http(s) URL"),
    (_start("x" * 20_000, "b", "http://127.0.0.1:1", "http://127.0.0.1:1"), "task_config: String should have at most"),
    (_start("", "b" * 1000, "http://127.0.0.1:1", "http://127.0.0.1:1"), "battle_id: String should have at most"),
])
def test_malformed_battle_start_is_refused_clearly(text: str, expected: str) -> None:
    with pytest.raises(BadInputError) as info:
        parse_battle_start(text)
    assert expected in str(info.value) and len(str(info.value)) < 400


@pytest.mark.parametrize("name", ["traversal", "shell", "cyrillic", "fullwidth"])
def test_agentbeats_battle_with_a_hostile_task_config_never_touches_the_world_or_blue(
        name: str, env: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The battle_start path: a draw is reported to the backend; the env server and Blue get nothing."""
    with RecordingServer(status=200) as world_and_blue, RecordingServer(status=204) as backend:
        (tmp_path / "scenario.toml").write_text(
            f'[appworld]\npredictor = "none"\ndeadline_s = 5\nenv_url = "{world_and_blue.url}"\n'
            f'apis_url = "{world_and_blue.url}"\ngateway_url = ""\nruns_dir = "runs"\ngreen_mode = "deterministic"\n')
        monkeypatch.chdir(tmp_path)
        registry.clear()
        try:
            start = parse_battle_start(_start(f"Task description: {HOSTILE_IDS[name]}", "../../evil",
                                              backend.url, world_and_blue.url))
            summary = registry.open_session(start, settings=env, scenario_file=tmp_path / "scenario.toml").run_all()
        finally:
            registry.clear()
        assert summary["bad_input"] and "invalid task id" in summary["bad_input"]
        assert world_and_blue.requests == []
        results = [json.loads(r["body"]) for r in backend.requests if json.loads(r["body"]).get("is_result")]
        assert [r["winner"] for r in results] == ["draw"]
    outside = [p for p in tmp_path.parent.iterdir() if p.name == "evil"]
    assert outside == []  # the battle id never became a path outside the runs folder


# -- tool arguments ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gateway_on_recorder(env: Settings, recorder: RecordingServer,
                        tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A real gateway process whose 'APIs server' records every forwarded request."""
    tmp = tmp_path_factory.mktemp("hostile-gateway")
    port = free_port()
    log_path = tmp / "calls.jsonl"
    argv = [sys.executable, "-m", "mcp_gateway", "--remote-apis-url", recorder.url, "--port", str(port),
            "--appworld-root", str(env.appworld_root), "--log-path", str(log_path)]
    process = ManagedProcess(f"gateway :{port}", argv, tmp / "gateway.log")
    create_credentials(port_of(recorder.url))  # the slot's secrets, as a WorldSlot would create them
    try:
        process.start()
        process.wait_ready(f"http://127.0.0.1:{port}/health", timeout_s=90)
        control = GatewayClient.for_slot(f"http://127.0.0.1:{port}", recorder.url)
        battle_url = control.start_battle("hostile", "t_1", None)
        yield battle_url, log_path, control
    finally:
        process.stop()
        remove_credentials(port_of(recorder.url))


def _mcp(url: str, body: bytes | dict) -> requests.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return requests.post(f"{url}/mcp", data=data, headers=headers, timeout=30)


def _call(name: str, arguments: object) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def test_gateway_refuses_bad_and_huge_arguments_before_forwarding(gateway_on_recorder: tuple[str, Path, Any],
                                                                  recorder: RecordingServer) -> None:
    url, log_path, _ = gateway_on_recorder
    recorder.requests.clear()
    assert _mcp(url, b"this is not json {").json()["error"]["code"] == -32700
    for arguments in ("not an object", ["a", "list"], 42):
        assert _mcp(url, _call("supervisor__show_profile", arguments)).json()["error"]["code"] == -32602
    huge = _mcp(url, _call("supervisor__show_profile", {"blob": "z" * 2_000_000})).json()["result"]
    assert huge["isError"] and "too large (2000" in huge["content"][0]["text"]
    long_name = _mcp(url, _call("n" * 500_000, {})).json()["result"]
    assert long_name["isError"] and "Unknown tool" in long_name["content"][0]["text"]
    traversal = _mcp(url, _call("simple_note__show_note", {"note_id": "../../admin", "access_token": "t"})).json()
    assert traversal["result"]["isError"]
    assert recorder.requests == []  # nothing reached the APIs server
    lines = log_path.read_bytes().splitlines()
    assert all(len(line) < 5_000 for line in lines)  # oversized input never becomes an oversized log line
    records = read_call_log(log_path)
    assert len(records) == 3 and records[0].arguments == {"omitted": "2000012 bytes"}


def test_gateway_control_api_refuses_malformed_bodies(gateway_on_recorder: tuple[str, Path, Any]) -> None:
    _, _, control = gateway_on_recorder
    url, auth = control.control_url, control._headers  # noqa: SLF001 - the Green's own bearer header
    assert requests.put(f"{url}/control/battle", data=b"\xff\xfe not json", headers=auth, timeout=10).status_code == 422
    assert requests.put(f"{url}/control/battle", json={"battle_id": "b" * 10_000}, headers=auth,
                        timeout=10).status_code == 422
    assert requests.put(f"{url}/control/battle", json={"battle_id": "b", "scope": "all"}, headers=auth,
                        timeout=10).status_code == 422
    reply = requests.get(f"{url}/control/completion", params={"battle_id": "b", "wait": "soon"}, headers=auth, timeout=10)
    assert reply.status_code == 422


@pytest.mark.parametrize("arguments_json, expected", [
    ("{not json", "Expecting property name"),
    ("[1, 2]", "must be a JSON object"),
    ("{\"blob\": \"" + "q" * 300_000 + "\"}", "the limit is"),
])
def test_blue_call_appworld_tool_refuses_bad_arguments_before_connecting(
        arguments_json: str, expected: str, recorder: RecordingServer) -> None:
    recorder.requests.clear()
    reply = asyncio.run(llm_tools.call_appworld_tool("supervisor__show_profile", arguments_json, recorder.url))
    assert reply.startswith("error: ") and expected in reply and len(reply) < 400
    assert recorder.requests == []


def test_first_task_of_the_world_is_accepted(env: Settings) -> None:
    """Control: the validation that refuses the look-alikes accepts the real id."""
    task_id = first_task(env.appworld_root)
    assert resolve_task(task_id, WorldData(env.appworld_root), env.default_split).task_id == task_id


def _declare_only(url: str, method: str, path: str, length: int, headers: dict[str, str] | None = None) -> int:
    """Send headers declaring a `length`-byte body but no body bytes; the status the server answers."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.putrequest(method, path)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(length))
        conn.endheaders()
        return conn.getresponse().status
    finally:
        conn.close()


def test_gateway_refuses_oversized_bodies_on_every_route_with_413(gateway_on_recorder: tuple[str, Path, Any],
                                                                  recorder: RecordingServer) -> None:
    battle_url, _, control = gateway_on_recorder
    parts = urlsplit(battle_url)
    blue, token_path = f"{parts.scheme}://{parts.netloc}", parts.path
    auth = control._headers  # noqa: SLF001 - the Green's own bearer header
    recorder.requests.clear()
    twenty_mb = 20 * 1024 * 1024
    for method, path in (("POST", "/mcp"), ("POST", "/messages/?session_id=x"), ("GET", "/health"),
                         ("POST", f"{token_path}/mcp"), ("POST", f"{token_path}/messages/?session_id=x")):
        # the answer comes although the body never arrives: it was refused, not read
        assert _declare_only(blue, method, path, twenty_mb) == 413, (method, path)
    for method, path in (("PUT", "/control/battle"), ("DELETE", "/control/battle"), ("GET", "/control/completion")):
        assert _declare_only(control.control_url, method, path, twenty_mb, auth) == 413, (method, path)
    assert _declare_only(control.control_url, "PUT", "/control/battle", 2 * 1024 * 1024, auth) == 413  # 1 MiB
    chunks = (b" " * 65536 for _ in range(40))  # 2.5 MB without a Content-Length (chunked)
    assert requests.put(f"{control.control_url}/control/battle", data=chunks, headers=auth, timeout=30).status_code == 413
    assert requests.get(f"{blue}/health", timeout=10).status_code == 200  # the gateway still serves
    assert control.start_battle("ok-1", "x_1", None).startswith(blue + "/b/") and recorder.requests == []
