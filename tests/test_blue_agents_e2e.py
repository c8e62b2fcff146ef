"""End-to-end tests of the Blue Agents against real processes on free loopback ports:
AppWorld's APIs + environment servers (`appworld_servers`), a real gateway subprocess
(`appworld-green mcp`), and each Blue as its own A2A server process.

Each battle: initialize the task on the env server in remote-APIs mode, set the battle on the
gateway, send the Green's task message over A2A (raw JSON-RPC `message/send`), wait for
`/task_completed`, persist state with one `/execute pass`, evaluate once, close.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from green_agent.runtime.appworld_servers import AppWorldServers
from green_agent.gateway_client import GatewayClient
from green_agent.runtime.processes import ManagedProcess
from kernel.ports import free_port
from kernel.settings import REPO_ROOT
from fake_openai import FakeOpenAI
from kernel.world_data import WorldData

pytestmark = pytest.mark.e2e

VENV_BIN = Path(sys.executable).parent
BLUE_DIR = REPO_ROOT / "scenarios" / "appworld" / "blue_agent"
COMPLETION_DEADLINE_S = 90.0
HTTP_TIMEOUT = httpx.Timeout(120.0, connect=5.0)


# --- fixtures ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gateway(appworld_servers: AppWorldServers, appworld_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A real gateway subprocess over the session's APIs server; yields its URL and log path."""
    tmp = tmp_path_factory.mktemp("blue-gateway")
    port, log_path = free_port(), tmp / "calls.jsonl"
    process = ManagedProcess("gateway", [
        str(VENV_BIN / "appworld-green"), "mcp", "--remote-apis-url", appworld_servers.spec.apis_url,
        "--port", str(port), "--log-path", str(log_path), "--appworld-root", str(appworld_root),
    ], tmp / "gateway.log", env=_env(appworld_root)).start()
    try:
        url = f"http://127.0.0.1:{port}"
        process.wait_ready(url + "/health", timeout_s=60)
        yield {"url": url, "log_path": log_path}
    finally:
        process.stop()


def _env(appworld_root: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "APPWORLD_ROOT": str(appworld_root), "PYTHONUNBUFFERED": "1", **extra}


def _start_blue(kind: str, appworld_root: Path, tmp: Path) -> tuple[ManagedProcess, str]:
    port = free_port()
    process = ManagedProcess(f"{kind} blue", [sys.executable, "-m", f"blue_agent.{kind}", "--port", str(port)],
                             tmp / f"blue-{kind}.log", env=_env(appworld_root)).start()
    url = f"http://127.0.0.1:{port}"
    try:
        process.wait_ready(url + "/.well-known/agent-card.json", timeout_s=60)
    except BaseException:
        process.stop()
        raise
    return process, url


# --- one battle, as the Green would run it ---------------------------------------------------

def _env_call(servers: AppWorldServers, endpoint: str, body: dict[str, Any]) -> Any:
    reply = httpx.post(f"{servers.spec.env_url}/{endpoint}", json=body, timeout=HTTP_TIMEOUT,
                       headers=servers.credentials.guard_headers())
    reply.raise_for_status()
    return reply.json()["output"]


def task_message(task_id: str, gateway_url: str, instruction: str) -> str:
    """The Green's task message (the contract lines, among prose)."""
    return (f"You are solving an AppWorld task.\nAppWorld task id: {task_id}\n"
            f"MCP endpoint (Streamable HTTP): {gateway_url}/mcp\nMCP endpoint (SSE): {gateway_url}/sse\n"
            f"Instruction: {instruction}\nFinish by calling supervisor__complete_task.\n")


def send_a2a(blue_url: str, text: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": uuid.uuid4().hex, "method": "message/send",
            "params": {"message": {"role": "user", "messageId": uuid.uuid4().hex,
                                   "parts": [{"kind": "text", "text": text}]}}}
    return httpx.post(blue_url + "/", json=body, timeout=HTTP_TIMEOUT).json()


class Battle:
    """Initialize a task and set a fresh battle (with its token) on the gateway; `finish()` evaluates.

    The AppWorld servers are guarded and the gateway's control listener needs its secret: the test
    plays the Green, so it uses the slot's credentials; the Blue only ever gets `mcp_base` (the token URL).
    """

    def __init__(self, servers: AppWorldServers, gateway: dict[str, Any], task_id: str,
                 launch_url_allowed: bool = False, scope: list[str] | None = None, policy: str = "advise") -> None:
        self.servers, self.apis_url, self.guard = servers, servers.spec.apis_url, servers.credentials.guard_headers()
        self.gateway_url, self.task_id = gateway["url"], task_id
        self.control = GatewayClient.for_slot(self.gateway_url, self.apis_url)
        self.battle_id = "blue-test-" + uuid.uuid4().hex[:8]
        self.info = _env_call(servers, "initialize", {"task_id": task_id, "experiment_name": self.battle_id,
                                                      "remote_apis_url": servers.credentials.guarded_url(self.apis_url)})
        self.passwords = [p["password"] for p in httpx.get(f"{self.apis_url}/supervisor/account_passwords",
                                                            headers=self.guard, timeout=30).json()]
        self.mcp_base = self.control.start_battle(self.battle_id, task_id, scope, policy,
                                                  launch_url_allowed=launch_url_allowed)

    def message(self) -> str:
        return task_message(self.task_id, self.mcp_base, self.info["instruction"])

    def wait_completed(self) -> bool:
        deadline = time.monotonic() + COMPLETION_DEADLINE_S
        while time.monotonic() < deadline:
            if _env_call(self.servers, "task_completed", {"task_id": self.task_id}):
                return True
            time.sleep(0.3)
        return False

    def finish(self) -> dict[str, Any]:
        _env_call(self.servers, "execute", {"task_id": self.task_id, "code": "pass"})  # persist state (B5)
        return _env_call(self.servers, "evaluate", {"task_id": self.task_id, "suppress_errors": True})

    def close(self) -> None:
        self.control.end_battle()
        try:
            _env_call(self.servers, "close", {"task_id": self.task_id})
        except httpx.HTTPError:
            pass


def log_records(log_path: Path, battle_id: str) -> list[dict[str, Any]]:
    lines = log_path.read_text().splitlines() if log_path.exists() else []
    return [r for r in map(json.loads, lines) if r.get("battle_id") == battle_id]


def run_battle(servers: AppWorldServers, gateway: dict[str, Any], blue_url: str, task_id: str) -> tuple[dict, dict, list]:
    battle = Battle(servers, gateway, task_id)
    try:
        reply = send_a2a(blue_url, battle.message())
        assert battle.wait_completed(), f"Blue never completed {task_id}; A2A reply: {reply}"
        evaluation = battle.finish()
    finally:
        battle.close()
    log_text = gateway["log_path"].read_text()
    assert not [p for p in battle.passwords if p in log_text], "a world password reached the call log"
    return reply, evaluation, log_records(gateway["log_path"], battle.battle_id)


@pytest.fixture(scope="module")
def sample_tasks(mini_tasks: tuple[str, str]) -> list[str]:
    """An action and a question task of the built world's dev split."""
    return list(mini_tasks)


# --- the offline Blues ------------------------------------------------------------------------

def test_reference_blue_wins(appworld_servers, gateway, appworld_root, tmp_path, sample_tasks) -> None:
    """One reference Blue process serves several battles in a row; each is won and logged on its own."""
    blue, url = _start_blue("reference", appworld_root, tmp_path)
    try:
        battles = [(task_id, *run_battle(appworld_servers, gateway, url, task_id)) for task_id in sample_tasks]
    finally:
        blue.stop()
    for task_id, reply, evaluation, records in battles:
        assert reply["result"]["status"]["state"] == "completed", reply
        assert evaluation["success"] is True, (task_id, evaluation)
        tools = [r["tool_name"] for r in records]
        gold = {api.replace(".", "__") for api in WorldData(appworld_root).gold_apis(task_id)}
        assert set(tools) == gold and tools[-1] == "supervisor__complete_task", (task_id, tools)
        assert all(r["task_id"] == task_id and r["in_scope"] for r in records)


def test_noop_blue_loses(appworld_servers, gateway, appworld_root, tmp_path, sample_tasks) -> None:
    blue, url = _start_blue("noop", appworld_root, tmp_path)
    try:
        reply, evaluation, records = run_battle(appworld_servers, gateway, url, sample_tasks[0])
    finally:
        blue.stop()
    assert reply["result"]["status"]["state"] == "completed", reply
    assert evaluation["success"] is False and evaluation["num_tests"] > 0
    assert [(r["tool_name"], r["arguments"]) for r in records] == [("supervisor__complete_task", {"status": "success"})]


def test_reference_blue_finishes_when_the_caller_hangs_up(appworld_servers, gateway, appworld_root, tmp_path,
                                                         sample_tasks) -> None:
    """The Green does not wait for Blue's reply: an abandoned `message/stream` must not stop the work."""
    blue, url = _start_blue("reference", appworld_root, tmp_path)
    battle = Battle(appworld_servers, gateway, sample_tasks[-1])
    try:
        body = {"jsonrpc": "2.0", "id": "1", "method": "message/stream",
                "params": {"message": {"role": "user", "messageId": uuid.uuid4().hex,
                                       "parts": [{"kind": "text", "text": battle.message()}]}}}
        with httpx.stream("POST", url + "/", json=body, timeout=10) as stream:
            assert stream.status_code == 200
            next(stream.iter_lines())  # the first event arrives, then we hang up mid-work
        assert battle.wait_completed()
        evaluation = battle.finish()
    finally:
        battle.close()
        blue.stop()
    assert evaluation["success"] is True, evaluation


def test_reference_blue_reports_unreachable_gateway(appworld_root, tmp_path) -> None:
    blue, url = _start_blue("reference", appworld_root, tmp_path)
    task_id = WorldData(appworld_root).split("dev")[0]  # any task the world has: the gateway is what's missing
    try:
        reply = send_a2a(url, task_message(task_id, f"http://127.0.0.1:{free_port()}", "x"))
    finally:
        blue.stop()
    assert reply["result"]["status"]["state"] == "failed"
    assert "cannot connect to the MCP gateway" in reply["result"]["artifacts"][0]["parts"][0]["text"]


# --- the LLM Blue through the AgentBeats SDK, with a scripted model ---------------------------

# The pack's question the script answers: "How many of my notes in Simple Note are tagged 'recipe'?"
LLM_TASK, LLM_TAG = "f0a1c01_1", "recipe"


def _direct_tagged_notes(apis_url: str, guard: dict[str, str], email: str, password: str,
                         page_limit: int) -> tuple[int, int]:
    """(pages to read until an empty page, notes tagged LLM_TAG), asked of the APIs server directly (test oracle)."""
    token = httpx.post(f"{apis_url}/simple_note/auth/token", data={"username": email, "password": password},
                       headers=guard, timeout=30).json()["access_token"]
    count = 0
    for page in range(50):
        notes = httpx.get(f"{apis_url}/simple_note/notes", params={"tags": [LLM_TAG], "page_index": page,
                          "page_limit": page_limit}, headers={**guard, "Authorization": f"Bearer {token}"}, timeout=30).json()
        if not notes:
            return page + 1, count
        count += len(notes)
    raise AssertionError("more than 50 pages of notes")


def _llm_script(battle: Battle, pages: int, page_limit: int, answer: Any) -> list[dict[str, Any]]:
    """The scripted model's turns: SSE MCP tools directly, plus the native tools (credentials by placeholder)."""
    mcp_url = battle.mcp_base + "/mcp"

    def via_tool(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"tool": "call_appworld_tool", "args": {"tool_name": tool, "arguments_json": json.dumps(args),
                                                        "mcp_url": mcp_url}}

    email = battle.info["supervisor"]["email"]
    listing = [via_tool("simple_note__search_notes", {"access_token": "{{access_token:simple_note}}", "tags": [LLM_TAG],
                                                      "page_index": page, "page_limit": page_limit})
               for page in range(pages)]
    return [
        {"tool": "supervisor__show_profile", "args": {}},
        via_tool("supervisor__show_account_passwords", {}),
        {"tool": "read_api_doc", "args": {"app_name": "simple_note", "api_name": "search_notes"}},
        via_tool("simple_note__login", {"username": email, "password": "{{password:simple_note}}"}),
        *listing,
        {"tool": "supervisor__complete_task", "args": {"answer": answer}},
    ]


def test_llm_blue_through_agentbeats_sdk(appworld_servers, gateway, appworld_root, tmp_path) -> None:
    battle = Battle(appworld_servers, gateway, LLM_TASK, launch_url_allowed=True)  # the SDK agent's --mcp URL
    agent: ManagedProcess | None = None
    try:
        passwords = httpx.get(f"{battle.apis_url}/supervisor/account_passwords", headers=battle.guard, timeout=30).json()
        password = next(p["password"] for p in passwords if p["account_name"] == "simple_note")
        page_limit = 5  # fewer than the notes tagged, so the listing really paginates
        pages, answer = _direct_tagged_notes(battle.apis_url, battle.guard, battle.info["supervisor"]["email"], password,
                                             page_limit)
        with FakeOpenAI(log_path=tmp_path / "fake_openai.jsonl") as fake:
            port = free_port()
            card = tmp_path / "blue_card.toml"
            card.write_text(_card_with_script(port, _llm_script(battle, pages, page_limit, answer)))
            agent = ManagedProcess("llm blue", [
                str(VENV_BIN / "agentbeats"), "run_agent", str(card), "--agent_host", "127.0.0.1",
                "--agent_port", str(port), "--model_type", "openai", "--model_name", "gpt-4o-mini",
                "--tool", str(BLUE_DIR / "tools.py"), "--mcp", gateway["url"] + "/sse",
            ], tmp_path / "llm-blue.log", env=_env(appworld_root, OPENAI_API_KEY="dummy", OPENAI_BASE_URL=fake.base_url,
                                                   OPENAI_AGENTS_DISABLE_TRACING="1")).start()
            try:
                agent.wait_ready(f"http://127.0.0.1:{port}/.well-known/agent.json", timeout_s=90)
                reply = send_a2a(f"http://127.0.0.1:{port}", battle.message())
                assert battle.wait_completed(), f"LLM Blue never completed; reply {reply}"
            except BaseException as exc:  # whatever failed, keep the evidence (the agent's window is gone after)
                raise AssertionError(f"{type(exc).__name__}: {exc}\nmodel requests: {len(fake.requests_to('/responses'))}"
                                     f"\nLLM Blue log:\n{agent.log_tail(60)}") from exc
            evaluation = battle.finish()
            model_requests = json.dumps(fake.requests_to("/responses"))
    finally:
        if agent is not None:
            agent.stop(grace_s=5)
        battle.close()
    records = log_records(gateway["log_path"], battle.battle_id)
    assert [r["tool_name"] for r in records] == ["supervisor__show_profile", "supervisor__show_account_passwords",
                                                 "simple_note__login"] + ["simple_note__search_notes"] * pages + \
        ["supervisor__complete_task"]
    assert [r["arguments"]["page_index"] for r in records if r["tool_name"] == "simple_note__search_notes"] == \
        list(range(pages))
    assert all(r["success"] for r in records), records
    assert pages >= 3 and evaluation["num_tests"] > 0
    assert evaluation["success"] is True, evaluation  # the script answers exactly this question: it must win
    assert password not in gateway["log_path"].read_text()
    assert "response_schemas" in model_requests  # read_api_doc's output reached the model
    assert "{{password:simple_note}}" in model_requests and password not in model_requests  # the model never saw it


def test_llm_blue_calls_an_out_of_scope_api_after_looking_it_up(appworld_servers, gateway, appworld_root,
                                                               tmp_path) -> None:
    """Under `advise` the SDK-based Blue sees the api_docs tools and `call_api` in tools/list and reaches an API
    outside the scope with them; the gateway serves it and logs it in_scope false."""
    scope = ["supervisor__show_profile", "supervisor__complete_task"]
    battle = Battle(appworld_servers, gateway, LLM_TASK, launch_url_allowed=True, scope=scope, policy="advise")
    script = [
        {"tool": "api_docs__show_api_descriptions", "args": {"app_name": "supervisor"}},
        {"tool": "api_docs__show_api_doc", "args": {"app_name": "supervisor", "api_name": "show_addresses"}},
        {"tool": "call_api", "args": {"app_name": "supervisor", "api_name": "show_addresses", "arguments": {}}},
        {"tool": "supervisor__complete_task", "args": {"answer": 0}},
    ]
    agent: ManagedProcess | None = None
    try:
        with FakeOpenAI(log_path=tmp_path / "fake_openai.jsonl") as fake:
            port = free_port()
            card = tmp_path / "blue_card.toml"
            card.write_text(_card_with_script(port, script))
            agent = ManagedProcess("llm blue", [
                str(VENV_BIN / "agentbeats"), "run_agent", str(card), "--agent_host", "127.0.0.1",
                "--agent_port", str(port), "--model_type", "openai", "--model_name", "gpt-4o-mini",
                "--tool", str(BLUE_DIR / "tools.py"), "--mcp", gateway["url"] + "/sse",
            ], tmp_path / "llm-blue.log", env=_env(appworld_root, OPENAI_API_KEY="dummy", OPENAI_BASE_URL=fake.base_url,
                                                   OPENAI_AGENTS_DISABLE_TRACING="1")).start()
            agent.wait_ready(f"http://127.0.0.1:{port}/.well-known/agent.json", timeout_s=90)
            reply = send_a2a(f"http://127.0.0.1:{port}", battle.message())
            assert battle.wait_completed(), f"LLM Blue never completed; reply {reply}; log:\n{agent.log_tail(40)}"
            model_requests = json.dumps(fake.requests_to("/responses"))
    finally:
        if agent is not None:
            agent.stop(grace_s=5)
        battle.close()
    records = log_records(gateway["log_path"], battle.battle_id)
    assert [(r["tool_name"], r["in_scope"], r["success"]) for r in records] == [
        ("api_docs__show_api_descriptions", True, True), ("api_docs__show_api_doc", True, True),
        ("supervisor__show_addresses", False, True), ("supervisor__complete_task", True, True)]
    assert '\\"call_api\\"' in model_requests or '"call_api"' in model_requests  # offered to the model
    assert "Alder Street" in model_requests  # the out-of-scope API's answer reached the model


def _card_with_script(port: int, script: list[dict[str, Any]]) -> str:
    """The production card with its url set to `port` and the stand-in's script appended to the prompt."""
    text = (BLUE_DIR / "blue_agent_card.toml").read_text()
    text = text.replace('url = "http://127.0.0.1:9113/"', f'url = "http://127.0.0.1:{port}/"')
    marker = 'supervisor__complete_task call. After it, reply with one short sentence\n  saying what you did. Never reveal passwords or access tokens in your replies.'
    assert marker in text, "card prompt changed: update the test's insertion point"
    return text.replace(marker, marker + "\n<<FAKE_SCRIPT>>" + json.dumps(script).replace("\\", "\\\\") + "<<END>>")
