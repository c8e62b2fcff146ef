"""Unit tests of the MCP gateway: schemas, redaction, forwarding, the call log, scope and completion.

The APIs server is mocked with `responses`; each mock states the AppWorld contract it stands for:
login `POST /<app>/auth/token` form-encoded -> {access_token},
Bearer auth, errors `{"message"}` with 401/409/422, FastAPI's bare 404 for unknown paths.
"""

from __future__ import annotations

import asyncio
import json
import re
import multiprocessing
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import requests
import responses
from jsonschema import Draft202012Validator

from kernel.call_record import CallRecord
from kernel.world_data import ApiDoc
from kernel.call_log import CallLogWriter, append_line
from kernel.call_log_reader import read_call_log
from kernel.mcp_results import EPISODE_OVER_META, episode_over
from mcp_gateway.forwarding import UPSTREAM_NOT_FOUND_MESSAGE, ApiForwarder, ArgumentError
from mcp_gateway.gateway import Gateway
from mcp_gateway.models import BattleScope
from kernel.redaction import REDACTED, redact, redact_text, secret_values
from mcp_gateway.scope import ScopeController
from mcp_gateway.tools import parameter_schema, tool_spec, type_schema

APIS = "http://apis.test"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"


def _param(name, type_, required=False, description="", default=None, constraints=()):
    return {"name": name, "type": type_, "required": required, "description": description,
            "default": default, "constraints": list(constraints)}


def _doc(app, api, method, path, params, description="An API."):
    return ApiDoc(app_name=app, api_name=api, method=method, path=path, description=description, parameters=params)


TOKEN_PARAM = _param("access_token", "string", True, "Access token obtained from simple_note app login.")
DOCS = [
    _doc("simple_note", "login", "POST", "/simple_note/auth/token",
         [_param("username", "string", True), _param("password", "string", True)], "Login to your account."),
    _doc("simple_note", "search_notes", "GET", "/simple_note/notes", [
        TOKEN_PARAM, _param("query", "string", default=""), _param("tags", "list[string]"),
        _param("pinned", "boolean"),
        _param("page_limit", "integer", default=5, constraints=["value >= 1.0, <= 20.0"])]),
    _doc("simple_note", "show_note", "GET", "/simple_note/notes/{note_id}",
         [TOKEN_PARAM, _param("note_id", "integer", True)]),
    _doc("simple_note", "create_note", "POST", "/simple_note/notes", [
        TOKEN_PARAM, _param("title", "string", True, constraints=["length >= 1"]), _param("tags", "list[string]")]),
    _doc("simple_note", "delete_note", "DELETE", "/simple_note/notes/{note_id}",
         [TOKEN_PARAM, _param("note_id", "integer", True)]),
    _doc("phone", "show_contact", "GET", "/phone/contacts/{phone_number}",
         [TOKEN_PARAM, _param("phone_number", "string", True)]),
    _doc("supervisor", "show_profile", "GET", "/supervisor/profile", []),
    _doc("api_docs", "show_api_doc", "GET", "/api_docs/api_doc",
         [_param("app_name", "string", True), _param("api_name", "string", True)], "Show one API's doc."),
    _doc("supervisor", "complete_task", "POST", "/supervisor/message", [
        _param("answer", "number | integer | string"),
        _param("status", "string", default="success", constraints=["value in ['success', 'fail']"])]),
]
SPECS = {spec.name: spec for spec in map(tool_spec, DOCS)}


# --- schemas ---------------------------------------------------------------------------------

def test_type_mapping_covers_appworld_types() -> None:
    assert type_schema("string") == {"type": "string"}
    assert type_schema("integer") == {"type": "integer"}
    assert type_schema("list[number]") == {"type": "array", "items": {"type": "number"}}
    assert type_schema("number | integer | string") == {
        "anyOf": [{"type": "number"}, {"type": "integer"}, {"type": "string"}]}


def test_constraints_become_schema_keywords() -> None:
    limit = parameter_schema(_param("page_limit", "integer", default=5, description="Max results.",
                                    constraints=["value >= 1.0, <= 20.0"]))
    assert limit == {"type": "integer", "minimum": 1, "maximum": 20, "description": "Max results.", "default": 5}
    status = parameter_schema(_param("status", "string", constraints=["value in ['success', 'fail']"]))
    assert status["enum"] == ["success", "fail"]
    title = parameter_schema(_param("title", "string", constraints=["length >= 1, <= 1000"]))
    assert (title["minLength"], title["maxLength"]) == (1, 1000)
    email = parameter_schema(_param("email", "string", description="Your email.", constraints=["value is email address"]))
    assert email["description"] == "Your email. Constraints: value is email address."


def test_tool_spec_has_name_required_and_path_params() -> None:
    spec = SPECS["simple_note__show_note"]
    assert spec.input_schema["required"] == ["access_token", "note_id"]
    assert "additionalProperties" not in spec.input_schema  # extra arguments are dropped, as AppWorld does
    assert spec.path_params == ["note_id"]
    assert SPECS["simple_note__login"].is_login and not SPECS["simple_note__create_note"].is_login
    assert "required" not in SPECS["supervisor__show_profile"].input_schema
    for spec in SPECS.values():  # every schema is itself valid JSON Schema
        Draft202012Validator.check_schema(spec.input_schema)


# --- redaction -------------------------------------------------------------------------------

def test_redact_is_recursive_and_key_based() -> None:
    args = {"username": "a@b.c", "password": "hunter22", "access_token": JWT,
            "nested": {"my_api_key": "k-123456", "items": [{"client_secret": "s3cr3t!"}]}, "Authorization": "x"}
    out = redact(args)
    assert out["username"] == "a@b.c" and out["password"] == out["access_token"] == REDACTED
    assert out["nested"]["my_api_key"] == REDACTED and out["nested"]["items"][0]["client_secret"] == REDACTED
    assert out["Authorization"] == REDACTED
    assert args["password"] == "hunter22"  # input untouched
    assert sorted(secret_values(args)) == sorted(["hunter22", JWT, "k-123456", "s3cr3t!", "x"])


def test_redact_text_scrubs_secrets_jwts_and_bearer() -> None:
    text = f"bad password hunter22 for token {JWT}; header Bearer abc.def"
    out = redact_text(text, ["hunter22"])
    assert "hunter22" not in out and JWT not in out and "abc.def" not in out
    assert out.count(REDACTED) == 3


# --- forwarding ------------------------------------------------------------------------------

@responses.activate
def test_login_is_form_encoded_and_token_is_bearer() -> None:
    # Contract: POST /simple_note/auth/token, form body username/password -> {"access_token", "token_type"}.
    login = responses.post(f"{APIS}/simple_note/auth/token", json={"access_token": JWT, "token_type": "Bearer"})
    # Contract: GET /simple_note/notes with Authorization: Bearer <token>, filters in the query string.
    search = responses.get(f"{APIS}/simple_note/notes", json=[{"note_id": 1}])
    fwd = ApiForwarder(APIS)
    reply = fwd.forward(SPECS["simple_note__login"], {"username": "a@b.c", "password": "pw 1&2"})
    assert reply.ok and reply.body["access_token"] == JWT
    assert login.calls[0].request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert parse_qs(login.calls[0].request.body) == {"username": ["a@b.c"], "password": ["pw 1&2"]}
    reply = fwd.forward(SPECS["simple_note__search_notes"],
                        {"access_token": JWT, "tags": ["work", "home"], "pinned": True, "page_limit": 3})
    request = search.calls[0].request
    assert request.headers["Authorization"] == f"Bearer {JWT}"
    assert parse_qs(urlparse(request.url).query) == {"tags": ["work", "home"], "pinned": ["true"], "page_limit": ["3"]}
    assert reply.body == [{"note_id": 1}]


@responses.activate
def test_path_params_substituted_and_bodies_are_json() -> None:
    # Contract: DELETE /simple_note/notes/{note_id} with a JSON body (AppWorld's remote requester does so).
    delete = responses.delete(f"{APIS}/simple_note/notes/7", json={"message": "Deleted."})
    # Contract: path values are URL-encoded as one segment.
    contact = responses.get(f"{APIS}/phone/contacts/%2B1%20555", json={"contact_id": 1})
    create = responses.post(f"{APIS}/simple_note/notes", json={"note_id": 9})
    fwd = ApiForwarder(APIS)
    assert fwd.forward(SPECS["simple_note__delete_note"], {"access_token": "t", "note_id": 7}).ok
    assert json.loads(delete.calls[0].request.body) == {}
    assert fwd.forward(SPECS["phone__show_contact"], {"access_token": "t", "phone_number": "+1 555"}).ok
    assert contact.call_count == 1
    fwd.forward(SPECS["simple_note__create_note"], {"access_token": "t", "title": "T", "tags": ["a"]})
    assert json.loads(create.calls[0].request.body) == {"title": "T", "tags": ["a"]}
    assert "Authorization" in create.calls[0].request.headers
    with pytest.raises(ArgumentError, match="single path segment"):
        fwd.forward(SPECS["phone__show_contact"], {"access_token": "t", "phone_number": "../admin"})


@responses.activate
def test_error_replies_carry_status_and_message() -> None:
    # Contract: AppWorld errors are {"message": ...} with 401/409/422; an unknown path is FastAPI's 404.
    responses.get(f"{APIS}/simple_note/notes/5", json={"message": "The note with id 5 does not exist."}, status=409)
    responses.get(f"{APIS}/simple_note/notes/6", json={"detail": "Not Found"}, status=404)
    fwd = ApiForwarder(APIS)
    conflict = fwd.forward(SPECS["simple_note__show_note"], {"access_token": "t", "note_id": 5})
    assert (conflict.ok, conflict.status_code, conflict.agent_message) == (False, 409, "The note with id 5 does not exist.")
    missing = fwd.forward(SPECS["simple_note__show_note"], {"access_token": "t", "note_id": 6})
    assert missing.status_code == 404 and missing.agent_message == UPSTREAM_NOT_FOUND_MESSAGE
    assert missing.error == "Not Found"


def test_unreachable_server_is_reported_with_its_url() -> None:
    from kernel.ports import free_port
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    reply = ApiForwarder(url, connect_timeout_s=1).forward(SPECS["supervisor__show_profile"], {})
    assert reply.status_code is None and not reply.ok
    assert f"APIs server at {url} is unreachable" in reply.agent_message


@responses.activate
def test_timeout_is_reported() -> None:
    responses.get(f"{APIS}/supervisor/profile", body=requests.ReadTimeout("slow"))
    reply = ApiForwarder(APIS, read_timeout_s=0.5).forward(SPECS["supervisor__show_profile"], {})
    assert reply.status_code is None and "did not answer" in reply.error


# --- gateway core (no transport) -------------------------------------------------------------

def _gateway(tmp_path: Path, output_type="both", battle: str | None = None) -> Gateway:
    """A gateway; with `battle`, that battle runs and accepts calls through the plain launch URL."""
    gw = Gateway(dict(SPECS), ApiForwarder(APIS), CallLogWriter(tmp_path / "logs" / "calls.jsonl"), output_type)
    if battle:
        gw.scope.set_battle(BattleScope(battle_id=battle, task_id="T", launch_url_allowed=True))
    return gw


@responses.activate
def test_gateway_results_log_and_redaction(tmp_path: Path) -> None:
    responses.post(f"{APIS}/simple_note/auth/token", json={"message": "Invalid credentials for pw-secret-1"}, status=401)
    responses.get(f"{APIS}/simple_note/notes", json=[{"note_id": 1}, {"note_id": 2}])
    gw = _gateway(tmp_path)
    gw.scope.set_battle(BattleScope(battle_id="B1", task_id="T1", scope=None, launch_url_allowed=True))
    failed = asyncio.run(gw.call_tool("simple_note__login", {"username": "u@x.y", "password": "pw-secret-1"}))
    assert not failed.is_error  # API errors are data
    assert failed.structured_content == {"response": {"message": "Invalid credentials for pw-secret-1", "is_error": True}}
    listed = asyncio.run(gw.call_tool("simple_note__search_notes", {"access_token": JWT, "pinned": None}))
    assert listed.structured_content == {"response": [{"note_id": 1}, {"note_id": 2}]}
    assert json.loads(listed.content[0].text) == listed.structured_content
    assert "pinned" not in responses.calls[1].request.url  # None means "not passed"
    bad = asyncio.run(gw.call_tool("simple_note__search_notes", {"access_token": JWT, "page_limit": 99, "x": 1}))
    assert bad.is_error and "page_limit" in bad.content[0].text and "'x'" not in bad.content[0].text
    records = read_call_log(tmp_path / "logs" / "calls.jsonl")
    assert [r.seq for r in records] == [1, 2, 3] and {r.battle_id for r in records} == {"B1"}
    assert records[0].status_code == 401 and not records[0].success and records[0].error == f"Invalid credentials for {REDACTED}"
    assert records[1].success and records[1].result_items == 2 and records[1].arguments["access_token"] == REDACTED
    assert records[2].status_code is None and not records[2].success
    text = (tmp_path / "logs" / "calls.jsonl").read_text()
    assert "pw-secret-1" not in text and JWT not in text


@responses.activate
def test_arguments_the_api_does_not_take_are_dropped_not_refused(tmp_path: Path) -> None:
    """AppWorld's requester ignores extra parameters by default (raise_on_extra_parameters=False);
    agents routinely pass access_token to APIs that need none (spotify.search_songs)."""
    responses.get(f"{APIS}/supervisor/profile", json={"first_name": "A"})
    gw = _gateway(tmp_path)
    gw.scope.set_battle(BattleScope(battle_id="B9", task_id="T9", scope=None, launch_url_allowed=True))
    result = asyncio.run(gw.call_tool("supervisor__show_profile", {"access_token": JWT, "unknown": 1}))
    assert not result.is_error and result.structured_content == {"response": {"first_name": "A"}}
    forwarded = responses.calls[0].request
    assert "unknown" not in forwarded.url and "Authorization" not in forwarded.headers


@responses.activate
def test_scope_refusal_and_unknown_tool(tmp_path: Path) -> None:
    responses.get(f"{APIS}/supervisor/profile", json={"first_name": "A"})
    gw = _gateway(tmp_path)
    gw.scope.set_battle(BattleScope(battle_id="B2", task_id="T2", launch_url_allowed=True, policy="enforce",
                                    scope=["supervisor__show_profile", "supervisor__complete_task", "bogus__x"]))
    assert [t.name for t in gw.list_tools()] == ["supervisor__show_profile", "supervisor__complete_task"]
    assert gw.scope.battle.unknown_tools == ["bogus__x"]
    refused = asyncio.run(gw.call_tool("simple_note__login", {"username": "u", "password": "p"}))
    assert refused.is_error and "simple_note__login" in refused.content[0].text
    assert "outside this battle's scope" in refused.content[0].text
    unknown = asyncio.run(gw.call_tool("nope__nothing", {}))
    assert unknown.is_error and "Unknown tool 'nope__nothing'" in unknown.content[0].text
    assert not asyncio.run(gw.call_tool("supervisor__show_profile", {})).is_error
    records = read_call_log(tmp_path / "logs" / "calls.jsonl")
    assert [(r.tool_name, r.in_scope, r.success) for r in records] == [
        ("simple_note__login", False, False), ("nope__nothing", False, False), ("supervisor__show_profile", True, True)]
    assert records[0].arguments["password"] == REDACTED and len(responses.calls) == 1  # refusals never forwarded
    gw.scope.clear_battle()
    assert gw.list_tools() == []  # no battle: nothing is listed or callable


@responses.activate
def test_advise_lists_scope_docs_and_call_api_and_serves_any_api_out_of_scope(tmp_path: Path) -> None:
    # Contract: GET /api_docs/api_doc?app_name&api_name -> the doc; GET /simple_note/notes/{id} -> the note.
    responses.get(f"{APIS}/api_docs/api_doc", json={"api_name": "show_note", "parameters": []})
    responses.get(f"{APIS}/simple_note/notes/7", json={"note_id": 7, "title": "T"})
    responses.get(f"{APIS}/supervisor/profile", json={"first_name": "A"})
    gw = _gateway(tmp_path)
    gw.scope.set_battle(BattleScope(battle_id="B4", task_id="T4", scope=["supervisor__complete_task"],
                                    launch_url_allowed=True))
    assert [t.name for t in gw.list_tools()] == ["api_docs__show_api_doc", "supervisor__complete_task", "call_api"]
    doc = asyncio.run(gw.call_tool("api_docs__show_api_doc", {"app_name": "simple_note", "api_name": "show_note"}))
    via = asyncio.run(gw.call_tool("call_api", {"app_name": "simple_note", "api_name": "show_note",
                                                "arguments": {"access_token": JWT, "note_id": 7}}))
    direct = asyncio.run(gw.call_tool("supervisor__show_profile", {}))
    bad = asyncio.run(gw.call_tool("call_api", {"app_name": "simple_note"}))
    nowhere = asyncio.run(gw.call_tool("call_api", {"app_name": "nope", "api_name": "x"}))
    assert not doc.is_error and via.structured_content == {"response": {"note_id": 7, "title": "T"}}
    assert direct.structured_content == {"response": {"first_name": "A"}}
    assert bad.is_error and "app_name and api_name" in bad.content[0].text
    assert nowhere.is_error and "Unknown tool 'nope__x'" in nowhere.content[0].text
    records = read_call_log(tmp_path / "logs" / "calls.jsonl")
    assert [(r.tool_name, r.in_scope, r.success) for r in records] == [
        ("api_docs__show_api_doc", True, True), ("simple_note__show_note", False, True),
        ("supervisor__show_profile", False, True), ("call_api", False, False), ("nope__x", False, False)]
    assert records[1].arguments == {"access_token": REDACTED, "note_id": 7}


def test_unscoped_battles_list_every_tool_without_call_api(tmp_path: Path) -> None:
    gw = _gateway(tmp_path)
    for policy in ("advise", "enforce"):
        gw.scope.set_battle(BattleScope(battle_id="B5", task_id="T5", scope=None, policy=policy, launch_url_allowed=True))
        assert [t.name for t in gw.list_tools()] == list(SPECS)
    unknown = asyncio.run(gw.call_tool("call_api", {"app_name": "supervisor", "api_name": "show_profile"}))
    assert unknown.is_error and "Unknown tool 'call_api'" in unknown.content[0].text


@responses.activate
def test_output_types(tmp_path: Path) -> None:
    responses.get(f"{APIS}/supervisor/profile", json={"first_name": "A"})
    structured = asyncio.run(_gateway(tmp_path, "structured_data_only", "B").call_tool("supervisor__show_profile", {}))
    assert structured.content == [] and structured.structured_content == {"response": {"first_name": "A"}}
    content = asyncio.run(_gateway(tmp_path, "content_only", "B").call_tool("supervisor__show_profile", {}))
    assert content.structured_content is None and json.loads(content.content[0].text) == {"response": {"first_name": "A"}}


@responses.activate
def test_complete_task_wakes_the_waiter_at_once(tmp_path: Path) -> None:
    # Contract: POST /supervisor/message {"answer", "status"} -> {"message": "Marked the active task complete."}
    responses.post(f"{APIS}/supervisor/message", json={"message": "Marked the active task complete."})
    gw = _gateway(tmp_path)

    async def scenario() -> tuple[float, object, object]:
        gw.scope.set_battle(BattleScope(battle_id="B3", task_id="T3", launch_url_allowed=True))
        waiter = asyncio.create_task(gw.scope.wait_completion("B3", 5.0))
        await asyncio.sleep(0.05)
        assert not waiter.done()
        await gw.call_tool("supervisor__complete_task", {"answer": 2, "status": "fail"})
        started = time.perf_counter()
        reply = await waiter
        return time.perf_counter() - started, reply, await gw.scope.wait_completion("other", 5.0)

    latency, reply, unknown = asyncio.run(scenario())
    assert reply.completed and reply.status == "fail" and reply.at is not None
    assert latency < 0.05
    assert not unknown.completed  # a battle never set answers at once
    assert json.loads(responses.calls[0].request.body) == {"answer": 2, "status": "fail"}


def test_set_battle_resets_completion_and_wait_times_out() -> None:
    scope = ScopeController(["supervisor__complete_task"])

    async def scenario() -> tuple[bool, bool, float]:
        scope.set_battle(BattleScope(battle_id="B", task_id="T"))
        scope.mark_completed("B", "success")
        first = scope.completion("B").completed
        scope.set_battle(BattleScope(battle_id="B", task_id="T"))
        started = time.perf_counter()
        second = (await scope.wait_completion("B", 0.2)).completed
        return first, second, time.perf_counter() - started

    first, second, waited = asyncio.run(scenario())
    assert first and not second and 0.15 < waited < 1.0


# --- call log --------------------------------------------------------------------------------

def _record(battle: str, index: int, pad: int) -> CallRecord:
    from datetime import datetime, timezone
    return CallRecord(timestamp=datetime.now(timezone.utc), battle_id=battle, task_id=f"task-{battle}",
                      tool_name="simple_note__create_note", arguments={"title": f"{battle}-{index}", "pad": "x" * pad},
                      success=True, duration_ms=1.0, seq=index)


def _write_many(path: str, battle: str, count: int) -> None:
    writer = CallLogWriter(Path(path))
    for i in range(count):
        writer.append(_record(battle, i, pad=(i * 997) % 20000))


def test_log_lines_are_atomic_across_threads_and_processes(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "calls.jsonl"  # parents are created
    threads = [threading.Thread(target=_write_many, args=(str(path), f"T{k}", 150)) for k in range(4)]
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_write_many, args=(str(path), f"P{k}", 150)) for k in range(2)]
    for worker in [*threads, *processes]:
        worker.start()
    for worker in [*threads, *processes]:
        worker.join(timeout=120)
    assert all(p.exitcode == 0 for p in processes)
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 6 * 150 + 1
    records = [CallRecord.model_validate_json(line) for line in lines[:-1]]  # every line is whole
    for battle in ("T0", "T1", "T2", "T3", "P0", "P1"):
        mine = [r for r in records if r.battle_id == battle]
        assert sorted(r.seq for r in mine) == list(range(150))
        assert all(r.task_id == f"task-{battle}" and r.arguments["title"].startswith(battle) for r in mine)


def test_append_line_creates_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "new" / "log.jsonl"
    append_line(path, b'{"a": 1}\n')
    path.unlink()
    append_line(path, b'{"a": 2}\n')
    assert path.read_text() == '{"a": 2}\n'


# --- control endpoints (ASGI in process) -----------------------------------------------------

CONTROL_SECRET = "c" * 43
TOKEN = "t" * 43


def test_control_endpoints(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from mcp_gateway.server import build_control_app

    gw = _gateway(tmp_path)
    auth = {"Authorization": f"Bearer {CONTROL_SECRET}"}
    with TestClient(build_control_app(gw, CONTROL_SECRET), base_url="http://127.0.0.1:8080", headers=auth) as client:
        assert client.get("/control/health").json() == {"status": "ok", "tools": len(SPECS), "battle": None}
        assert client.put("/control/battle", json={"task_id": "T"}).status_code == 422
        state = client.put("/control/battle", json={"battle_id": "B", "task_id": "T", "token": TOKEN,
                                                    "policy": "enforce", "scope": ["supervisor__complete_task"]}).json()
        assert state["battle_id"] == "B" and state["scope"] == ["supervisor__complete_task"]
        assert client.get("/control/health").json()["battle"]["task_id"] == "T"
        assert [t.name for t in gw.list_tools(TOKEN)] == ["supervisor__complete_task"]
        assert gw.list_tools(None) == [] and gw.list_tools("x" * 43) == []  # only the battle's token lists
        assert client.get("/control/completion", params={"wait": "1"}).status_code == 422
        reply = client.get("/control/completion", params={"battle_id": "B", "wait": "0.1"}).json()
        assert reply == {"battle_id": "B", "completed": False, "at": None, "status": None}
        cleared = client.delete("/control/battle").json()
        assert cleared["cleared"] == "B" and cleared["battle"]["refused"] == {}
        assert client.get("/control/health").json()["battle"] is None and gw.list_tools(TOKEN) == []


def test_control_listener_needs_the_secret_and_caps_bodies(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from mcp_gateway.body_limit import CONTROL_BODY_LIMIT as MAX_CONTROL_BODY_BYTES
    from mcp_gateway.server import build_control_app

    gw = _gateway(tmp_path)
    with TestClient(build_control_app(gw, CONTROL_SECRET), base_url="http://127.0.0.1:8080") as client:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": CONTROL_SECRET}):
            assert client.put("/control/battle", json={"battle_id": "B", "scope": None},
                              headers=headers).status_code == 401
            assert client.delete("/control/battle", headers=headers).status_code == 401
            assert client.get("/control/completion", params={"battle_id": "B"}, headers=headers).status_code == 401
        assert gw.scope.battle is None
        huge = b"{" + b" " * (MAX_CONTROL_BODY_BYTES + 10) + b"}"
        response = client.put("/control/battle", content=huge, headers={"Authorization": f"Bearer {CONTROL_SECRET}",
                                                                       "Content-Type": "application/json"})
        assert response.status_code == 413 and gw.scope.battle is None


def test_blue_facing_listener_serves_no_control_route_and_a_bare_health(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from mcp_gateway.server import build_app

    gw = _gateway(tmp_path)
    gw.scope.set_battle(BattleScope(battle_id="B", task_id="T", token=TOKEN))
    with TestClient(build_app(gw), base_url="http://127.0.0.1:8080") as client:
        assert client.get("/health").json() == {"status": "ok"}  # no battle id, task id or scope
        assert client.put("/control/battle", json={"battle_id": "X", "scope": None}).status_code in (404, 405)
        assert client.delete("/control/battle").status_code in (404, 405)
        assert client.get("/control/completion", params={"battle_id": "B"}).status_code == 404
        assert client.get(f"/b/{'x' * 43}/sse").status_code == 404  # not the running battle's token
    assert gw.scope.battle is not None and gw.scope.battle.battle_id == "B"


@responses.activate
def test_calls_must_belong_to_the_running_battle(tmp_path: Path) -> None:
    responses.get(f"{APIS}/supervisor/profile", json={"first_name": "A"})
    responses.post(f"{APIS}/supervisor/message", json={"message": "Marked the active task complete."})
    gw = _gateway(tmp_path)
    call = lambda name, token: asyncio.run(gw.call_tool(name, {}, token))  # noqa: E731
    assert "No battle is running" in call("supervisor__show_profile", TOKEN).content[0].text
    gw.scope.set_battle(BattleScope(battle_id="B1", task_id="T", token=TOKEN))
    assert "does not belong to the running battle" in call("supervisor__show_profile", "y" * 43).content[0].text
    assert "closed for it" in call("supervisor__show_profile", None).content[0].text
    assert "closed for it" in call("supervisor__complete_task", None).content[0].text
    assert not gw.scope.completion("B1").completed  # a refused complete_task completes nothing
    assert not call("supervisor__show_profile", TOKEN).is_error
    refused_counts = dict(gw.scope.battle.refused)
    gw.scope.clear_battle()  # the token is revoked with its battle
    gw.scope.set_battle(BattleScope(battle_id="B2", task_id="T", token="z" * 43))
    late = call("supervisor__complete_task", TOKEN)  # a Blue left over from B1
    assert late.is_error and not gw.scope.completion("B2").completed
    records = read_call_log(tmp_path / "logs" / "calls.jsonl")
    assert [(r.battle_id, r.refused) for r in records] == [
        (None, "no_battle"), (None, "wrong_token"), (None, "token_required"), (None, "token_required"),
        ("B1", None), ("B1", "battle_ended")]  # the late call is B1's own, not B2's foreign refusal
    assert refused_counts == {"wrong_token": 1, "token_required": 2}
    assert gw.scope.battle.refused == {}
    assert len(responses.calls) == 1  # nothing refused was forwarded


def test_unreachable_apis_server_gives_an_error_result_and_record(tmp_path: Path) -> None:
    from kernel.ports import free_port

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    gw = Gateway(dict(SPECS), ApiForwarder(url, connect_timeout_s=1), CallLogWriter(tmp_path / "calls.jsonl"))
    gw.scope.set_battle(BattleScope(battle_id="B", task_id="T", launch_url_allowed=True))
    result = asyncio.run(gw.call_tool("supervisor__show_profile", {}))
    assert result.is_error and f"APIs server at {url} is unreachable" in result.content[0].text
    (record,) = read_call_log(tmp_path / "calls.jsonl")
    assert (record.success, record.status_code, record.in_scope) == (False, None, True)
    assert "unreachable" in record.error and record.upstream_fault == "unreachable (ConnectionError)"


@responses.activate
def test_a_5xx_is_a_fault_only_when_the_apis_server_stops_answering(tmp_path: Path) -> None:
    # Contract: AppWorld's APIs server answers 5xx for a bug a call hit; GET / answers (404) while it is up.
    responses.get(f"{APIS}/supervisor/profile", json={"detail": "boom"}, status=500)
    responses.get(f"{APIS}/", json={"detail": "Not Found"}, status=404)
    gw = _gateway(tmp_path, battle="B")
    assert not asyncio.run(gw.call_tool("supervisor__show_profile", {})).is_error  # an API error, as data
    responses.replace(responses.GET, f"{APIS}/", body=requests.ConnectionError("down"))
    failed = asyncio.run(gw.call_tool("supervisor__show_profile", {}))
    assert failed.is_error and "no longer answers" in failed.content[0].text
    first, second = read_call_log(tmp_path / "logs" / "calls.jsonl")
    assert (first.upstream_fault, first.status_code) == (None, 500)
    assert second.upstream_fault == "HTTP 500, then no answer to a health probe"


def test_client_reports_an_unreachable_gateway() -> None:
    from kernel.errors import GatewayError
    from kernel.ports import free_port
    from mcp_test_client import GatewayClient, GatewayControl

    control = GatewayControl(f"http://127.0.0.1:{free_port()}", "s" * 43, timeout_s=2)
    with pytest.raises(GatewayError, match="unreachable"):
        asyncio.run(control.health())
    with pytest.raises(GatewayError, match="cannot connect to the MCP gateway"):
        asyncio.run(GatewayClient(f"http://127.0.0.1:{free_port()}", timeout_s=2).list_tools())


@responses.activate
def test_a_result_that_ends_the_episode_is_marked_however_complete_task_was_called(tmp_path: Path) -> None:
    # Contract: POST /supervisor/message -> complete_task's answer; GET /supervisor/profile -> the profile.
    responses.post(f"{APIS}/supervisor/message", json={"message": "Marked the active task complete."})
    responses.get(f"{APIS}/supervisor/profile", json={"first_name": "A"})
    gw = _gateway(tmp_path)
    gw.scope.set_battle(BattleScope(battle_id="B8", task_id="T8", scope=["supervisor__show_profile"],
                                    launch_url_allowed=True))
    before = asyncio.run(gw.call_tool("supervisor__show_profile", {}))
    via_call_api = asyncio.run(gw.call_tool("call_api", {"app_name": "supervisor", "api_name": "complete_task",
                                                         "arguments": {"status": "success"}}))
    after = asyncio.run(gw.call_tool("supervisor__show_profile", {}))
    assert not episode_over(before) and episode_over(via_call_api) and episode_over(after)
    assert after.is_error and "episode is over" in after.content[0].text
    gw.scope.set_battle(BattleScope(battle_id="B9", task_id="T9", launch_url_allowed=True))
    direct = asyncio.run(gw.call_tool("supervisor__complete_task", {"status": "success"}))
    assert episode_over(direct) and direct.model_dump(by_alias=True)["_meta"] == {EPISODE_OVER_META: True}


@responses.activate
def test_a_calls_number_is_the_order_it_reached_the_world_not_the_order_it_was_logged(tmp_path: Path) -> None:
    """Parallel calls are logged after forwarding; `rejudge` replays by `seq`, so `seq` must be the forwarding order."""
    responses.get(re.compile(rf"{APIS}/simple_note/notes/\d+"), json={"note_id": 0})
    gw = _gateway(tmp_path, battle="B1")
    forwarded_outcome = gw._outcome
    finished = 0

    async def late_logging(*args, **kwargs):  # the first call to come back is the last to be logged
        nonlocal finished
        outcome = await forwarded_outcome(*args, **kwargs)
        finished += 1
        await asyncio.sleep(0.05 * (5 - finished))
        return outcome

    gw._outcome = late_logging

    async def parallel() -> None:
        await asyncio.gather(*(gw.call_tool("simple_note__show_note", {"access_token": JWT, "note_id": n})
                               for n in range(1, 5)))

    asyncio.run(parallel())
    reached = [int(call.request.url.rsplit("/", 1)[1].split("?")[0]) for call in responses.calls]
    records = read_call_log(tmp_path / "logs" / "calls.jsonl")
    logged = [r.arguments["note_id"] for r in records]
    assert logged != reached  # the log's line order is not the world's
    assert [r.arguments["note_id"] for r in sorted(records, key=lambda r: r.seq)] == reached
