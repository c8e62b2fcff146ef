"""Unit tests of the Blue Agents' shared parts: message parsing, the MCP `apis` shim, the secret
vault, the LLM tools' input checks and the A2A wiring (in-process, no network)."""

from __future__ import annotations

import asyncio
import json
import time
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from blue_agent.a2a_server import build_app, make_card
from blue_agent.apis_shim import McpApis, UnavailableRequester, run_solution, unwrap_response
from blue_agent.errors import AppWorldApiError, GatewayCallError, ReferenceSolutionError
from kernel.errors import TaskMessageError
from kernel.mcp_results import tool_result_payload
from blue_agent.llm_tools import call_appworld_tool, read_api_doc
from blue_agent.secret_vault import MissingSecretError, SecretVault
from kernel.task_message import is_battle_info, parse_task_message
from kernel.errors import BadInputError
from kernel.world_data import WorldData

GOOD_MESSAGE = """You are working on an AppWorld task.
AppWorld task id: 7c1a0e2_1
MCP endpoint (Streamable HTTP): http://127.0.0.1:10000/mcp
MCP endpoint (SSE): http://127.0.0.1:10000/sse
Instruction: Create a note titled Weekend Groceries.
Finish with supervisor__complete_task.
"""


# --- message parsing -------------------------------------------------------------------------

def test_parse_good_message() -> None:
    task = parse_task_message(GOOD_MESSAGE)
    assert (task.task_id, task.mcp_url, task.sse_url) == (
        "7c1a0e2_1", "http://127.0.0.1:10000/mcp", "http://127.0.0.1:10000/sse")


def test_parse_tolerates_indentation_and_missing_sse_line() -> None:
    text = "  AppWorld task id:  b4d9e51_1 \n\tMCP endpoint (Streamable HTTP): http://localhost:9/mcp/\n"
    task = parse_task_message(text)
    assert (task.task_id, task.mcp_url, task.sse_url) == ("b4d9e51_1", "http://localhost:9/mcp", None)


@pytest.mark.parametrize("drop", ["AppWorld task id", "MCP endpoint (Streamable HTTP)"])
def test_parse_missing_line_names_it(drop: str) -> None:
    text = "\n".join(line for line in GOOD_MESSAGE.splitlines() if not line.startswith(drop))
    with pytest.raises(TaskMessageError, match=drop.replace("(", r"\(").replace(")", r"\)")):
        parse_task_message(text)


@pytest.mark.parametrize("task_id", [
    "../../etc/passwd", "x;_rm_-rf_/", "7c1a0e2_1;rm", "7c1a0e2", "_1", "7c1a0e2_x", "a" * 100_000 + "_1",
    "７c1a0e2_1",  # full-width digit look-alike
    "7c1a0e2_１",
])
def test_hostile_task_ids_rejected(task_id: str) -> None:
    text = GOOD_MESSAGE.replace("7c1a0e2_1", task_id)
    with pytest.raises(TaskMessageError) as info:
        parse_task_message(text)
    assert isinstance(info.value, BadInputError)
    assert len(str(info.value)) < 400  # a huge id is not echoed back whole


def test_conflicting_task_ids_rejected() -> None:
    with pytest.raises(TaskMessageError, match="conflicting"):
        parse_task_message(GOOD_MESSAGE + "AppWorld task id: b4d9e51_1\n")


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/mcp", "127.0.0.1:10000/mcp", "http:///mcp"])
def test_bad_endpoint_rejected(url: str) -> None:
    with pytest.raises(TaskMessageError, match="invalid MCP endpoint"):
        parse_task_message(GOOD_MESSAGE.replace("http://127.0.0.1:10000/mcp", url))


def test_battle_info_detected() -> None:
    info = {"agent_name": "b", "agent_id": "1", "battle_id": "2", "backend_url": "http://localhost:9002"}
    assert is_battle_info(json.dumps(info))
    assert not is_battle_info(GOOD_MESSAGE)
    assert not is_battle_info(json.dumps({"battle_id": "2"}))


# --- the apis shim, against a fake MCP call function -----------------------------------------
# Contract it stands for: the gateway's tool call `<app>__<api>(**kwargs)` answers
# {"response": <api json>} on success and {"response": {"message", "is_error": true}} on API errors.

class FakeGateway:
    """A tiny simple_note world: login, paginated search (page size 2), complete_task."""

    def __init__(self, notes: int) -> None:
        self.notes = [{"note_id": i, "tags": ["work"]} for i in range(notes)]
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.answer: Any = "<<NOT_GIVEN>>"

    def __call__(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((tool, dict(args)))
        if tool == "supervisor__show_account_passwords":
            return {"response": [{"account_name": "simple_note", "password": "pw"}]}
        if tool == "supervisor__show_profile":
            return {"response": {"email": "ava@example.com"}}
        if tool == "simple_note__login":
            ok = args == {"username": "ava@example.com", "password": "pw"}
            return {"response": {"access_token": "tok"} if ok else {"message": "Invalid credentials", "is_error": True}}
        if tool == "simple_note__search_notes":
            page = args.get("page_index", 0)
            return {"response": self.notes[page * 2:page * 2 + 2]}
        if tool == "supervisor__complete_task":
            self.answer = args.get("answer")
            return {"response": {"message": "Marked the active task complete."}}
        return {"response": {"message": f"No tool named {tool}.", "is_error": True}}


COUNT_SOLUTION = '''
def solution(apis, requester):
    passwords = {p["account_name"]: p["password"] for p in apis.supervisor.show_account_passwords()}
    profile = apis.supervisor.show_profile()
    token = apis.simple_note.login(username=profile["email"], password=passwords["simple_note"])["access_token"]
    count, page_index = 0, 0
    while True:
        notes = apis.simple_note.search_notes(tags=["work"], page_index=page_index, access_token=token)
        if not notes:
            break
        count += len(notes)
        page_index += 1
    apis.supervisor.complete_task(answer=count)
'''


def test_run_solution_maps_calls_to_mcp_tools() -> None:
    gateway = FakeGateway(notes=5)
    run_solution(COUNT_SOLUTION, gateway)
    tools = [tool for tool, _ in gateway.calls]
    assert tools == ["supervisor__show_account_passwords", "supervisor__show_profile", "simple_note__login"] + \
        ["simple_note__search_notes"] * 4 + ["supervisor__complete_task"]
    assert [args["page_index"] for tool, args in gateway.calls if tool.endswith("search_notes")] == [0, 1, 2, 3]
    assert gateway.calls[3][1]["access_token"] == "tok"
    assert gateway.answer == 5


@pytest.mark.parametrize("think_s", [0.0, 0.05])
def test_reference_blue_think_time_waits_before_every_tool_call(monkeypatch: pytest.MonkeyPatch, think_s: float) -> None:
    """REFERENCE_BLUE_THINK_S (benchmarks' stand-in for model latency) delays each call, not the result."""
    import blue_agent.reference as reference

    gateway = FakeGateway(notes=5)
    stamps: list[float] = []

    class RecordingSession:
        def __init__(self, url: str) -> None:
            assert url == "http://127.0.0.1:1/mcp"

        def __enter__(self) -> "RecordingSession":
            self.started = time.monotonic()
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def call_tool(self, name: str, arguments: dict) -> dict:
            stamps.append(time.monotonic() - self.started)
            return gateway(name, arguments)

        def list_tool_names(self) -> list[str]:  # a tools-mode battle (code mode lists only `execute`)
            return ["supervisor__complete_task"]

    monkeypatch.setattr(reference, "GatewaySession", RecordingSession)
    reference.replay_solution(COUNT_SOLUTION, "http://127.0.0.1:1/mcp", think_s)
    assert gateway.answer == 5 and len(stamps) == 8
    gaps = [b - a for a, b in zip([0.0] + stamps, stamps)]
    if think_s:
        assert min(gaps) >= think_s
    else:
        assert sum(gaps) < 0.05 * 8


def test_reference_blue_think_time_waits_before_its_code_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    """In code mode the reference Blue sends one execution: the think time delays it, as a model's reply would
    (bench_capacity's model-bound stand-in in code mode)."""
    import blue_agent.reference as reference

    sent: list[tuple[float, str]] = []

    class CodeSession:
        def __init__(self, url: str) -> None:
            self.started = 0.0

        def __enter__(self) -> "CodeSession":
            self.started = time.monotonic()
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def list_tool_names(self) -> list[str]:
            return ["execute"]

    def execute(session: CodeSession, code: str) -> str:
        sent.append((time.monotonic() - session.started, code))
        return "ok"

    monkeypatch.setattr(reference, "GatewaySession", CodeSession)
    monkeypatch.setattr(reference, "is_code_battle", lambda session: session.list_tool_names() == ["execute"])
    monkeypatch.setattr(reference, "execute", execute)
    reference.replay_solution(COUNT_SOLUTION, "http://127.0.0.1:1/mcp", 0.2)
    assert len(sent) == 1 and sent[0][0] >= 0.2 and "def solution" in sent[0][1]


def test_api_error_raises_like_raise_on_failure() -> None:
    apis = McpApis(FakeGateway(notes=0))
    with pytest.raises(AppWorldApiError, match="simple_note__login: Invalid credentials"):
        apis.simple_note.login(username="x", password="y")


def test_shim_rejects_positional_args_and_bad_payloads() -> None:
    apis = McpApis(FakeGateway(notes=0))
    with pytest.raises(TypeError):
        apis.supervisor.show_profile("positional")
    with pytest.raises(GatewayCallError, match="without a `response`"):
        unwrap_response("x__y", {"result": 1})
    assert unwrap_response("x__y", {"response": [1, 2]}) == [1, 2]


def test_requester_stub_raises_and_missing_solution_reported() -> None:
    with pytest.raises(NotImplementedError):
        UnavailableRequester().post("/x")
    with pytest.raises(ReferenceSolutionError):
        run_solution("x = 1\n", FakeGateway(notes=0))


def test_tool_result_payload_shapes() -> None:
    text = lambda s: SimpleNamespace(text=s)  # noqa: E731
    structured = SimpleNamespace(content=[], structured_content={"response": [1]}, is_error=False)
    from_text = SimpleNamespace(content=[text('{"response": {"a": 1}}')], structured_content=None, is_error=False)
    mcp_error = SimpleNamespace(content=[text("Unknown tool: x__y")], structured_content=None, is_error=True)
    assert tool_result_payload(structured) == {"response": [1]}
    assert tool_result_payload(from_text) == {"response": {"a": 1}}
    assert tool_result_payload(mcp_error) == {"response": {"message": "Unknown tool: x__y", "is_error": True}}


# --- secret vault and LLM tools ---------------------------------------------------------------

def test_vault_replaces_and_fills_secrets() -> None:
    vault = SecretVault()
    shown = vault.capture("supervisor__show_account_passwords", [{"account_name": "simple_note", "password": "s3cret"}])
    assert shown == [{"account_name": "simple_note", "password": "{{password:simple_note}}"}]
    login = vault.capture("simple_note__login", {"access_token": "jwt.abc", "token_type": "Bearer"})
    assert login["access_token"] == "{{access_token:simple_note}}" and "jwt.abc" not in json.dumps(login)
    filled = vault.fill({"password": "{{password:simple_note}}", "nested": ["{{access_token:simple_note}}"], "n": 1})
    assert filled == {"password": "s3cret", "nested": ["jwt.abc"], "n": 1}
    with pytest.raises(MissingSecretError, match="spotify__login"):
        vault.fill("{{access_token:spotify}}")


@pytest.mark.parametrize(("tool", "args", "expected"), [
    ("spotify.login", "{}", "not of the form"),
    ("simple_note__search_notes", "[1, 2]", "JSON object"),
    ("simple_note__search_notes", "{not json", "error:"),
    ("simple_note__search_notes", json.dumps({"q": "x" * 30_000}), "limit"),
])
def test_call_appworld_tool_rejects_bad_input_before_any_connection(tool: str, args: str, expected: str) -> None:
    reply = asyncio.run(call_appworld_tool(tool, args, "http://127.0.0.1:1/mcp"))
    assert reply.startswith("error:") and expected in reply


def test_call_appworld_tool_reports_unreachable_gateway() -> None:
    reply = asyncio.run(call_appworld_tool("supervisor__show_profile", "{}", "http://127.0.0.1:1/mcp"))
    assert reply.startswith("error:") and "cannot connect to the MCP gateway" in reply


def test_read_api_doc(appworld_root) -> None:
    world = WorldData(appworld_root)
    doc = json.loads(read_api_doc("simple_note", "search_notes", world))
    assert doc["tool_name"] == "simple_note__search_notes"
    assert {p["name"] for p in doc["parameters"]} >= {"access_token", "page_index"}
    assert "success" in doc["response_schemas"]
    assert read_api_doc("simple_note", "nope", world).startswith("error: simple_note has no API 'nope'")
    assert read_api_doc("../etc", "passwd", world).startswith("error:")


# --- A2A wiring, in-process -------------------------------------------------------------------

async def _post(app: Any, body: dict[str, Any]) -> dict[str, Any]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://blue") as client:
        return (await client.post("/", json=body)).json()


def _send(text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "1", "method": "message/send",
            "params": {"message": {"role": "user", "messageId": "m1", "parts": [{"kind": "text", "text": text}]}}}


def test_a2a_server_runs_handler_and_serves_card() -> None:
    seen: list[str] = []

    async def handler(text: str) -> str:
        seen.append(parse_task_message(text).task_id)
        return "done"

    app = build_app(make_card("Test Blue", "d", "http://127.0.0.1:4321", "test"), handler)

    async def scenario() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://blue") as client:
            for path in ("/.well-known/agent.json", "/.well-known/agent-card.json"):
                assert (await client.get(path)).json()["url"] == "http://127.0.0.1:4321/"
        ok = await _post(app, _send(GOOD_MESSAGE))
        assert ok["result"]["status"]["state"] == "completed"
        assert ok["result"]["artifacts"][0]["parts"][0]["text"] == "done"
        bad = await _post(app, _send("AppWorld task id: ../x\nMCP endpoint (Streamable HTTP): http://h/mcp"))
        assert bad["result"]["status"]["state"] == "failed"
        assert "invalid task id" in bad["result"]["artifacts"][0]["parts"][0]["text"]
        info = json.dumps({"agent_name": "b", "agent_id": "1", "battle_id": "2", "backend_url": "http://x"})
        ready = await _post(app, _send(info))
        assert ready["result"]["status"]["state"] == "completed"

    asyncio.run(scenario())
    assert seen == ["7c1a0e2_1"]


# --- the LLM Blue's card and tool file ---------------------------------------------------------

def test_llm_card_is_a_valid_agent_card() -> None:
    import tomllib

    from a2a.types import AgentCard

    from kernel.settings import SCENARIO_DIR

    data = tomllib.loads((SCENARIO_DIR / "blue_agent" / "blue_agent_card.toml").read_text())
    card = AgentCard(**data)
    assert card.name == "AppWorld LLM Blue" and card.url == "http://127.0.0.1:9113/" and card.capabilities.streaming
    for must in ("supervisor__show_account_passwords", "supervisor__show_profile", "page_index",
                 "supervisor__complete_task(answer=", 'status="fail"', "phone number", "read_api_doc"):
        assert must in card.description
    assert "<<FAKE_SCRIPT>>" not in card.description and card.skills


def test_tool_file_loads_by_path_and_registers_non_clashing_tools() -> None:
    import importlib.util

    import agentbeats

    from kernel.settings import SCENARIO_DIR

    before = len(agentbeats.get_registered_tools())
    spec = importlib.util.spec_from_file_location("tools", SCENARIO_DIR / "blue_agent" / "tools.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # as `agentbeats run_agent --tool` does: no package context
    names = [f.__name__ for f in agentbeats.get_registered_tools()[before:]]
    assert names == ["read_api_doc", "call_appworld_tool"]
    assert all("__" not in name for name in names)  # MCP tools are all <app>__<api>
