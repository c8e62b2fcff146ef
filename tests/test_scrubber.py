"""The one scrubber (`kernel.scrubber`) and the narrowed key rule (`kernel.redaction`), on their own and in writers.

No servers here. Secrets are removed by value: a battle's values from what is written about it, every known value
from unscoped text; in each form a value takes in a file (raw, JSON-escaped once or twice, ASCII or not, a Python
repr, HTML, URL-encoded); overlapping values leave no part; short values follow the documented rule. The key rule
blanks credentials and keeps plain values (`"token_type": "Bearer"`, token counts). Then each writer and each hand-
over: the trace writer, the gathered trace, the page and `environment_io.md`, the call log, the gateway (secrets
the Green sent with the battle; tokens AppWorld issued in it, learned from its login replies) and the bridge's
message. The APIs server is mocked with `responses` as in test_mcp_gateway_unit.py (contract: login
`POST /simple_note/auth/token` -> `{"access_token", "token_type"}`; the notes search -> a JSON list).
"""

from __future__ import annotations

import asyncio
import html
import json
import uuid
from collections import OrderedDict
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote_plus

import pytest
import responses

from green_agent.a2a.bridge.server import given_secrets
from green_agent.a2a.bridge.trace import BridgeTrace
from green_agent.steps.dispatch import build_send_request
from green_agent.trace.environment_io import write_environment_io
from green_agent.trace.gather import gather
from green_agent.trace.page import write_page
from green_agent.trace.reader import read_trace
from kernel import scrubber
from kernel.call_log import CallLogWriter, append_line
from kernel.call_log_reader import read_call_log
from kernel.call_record import CallRecord
from kernel.redaction import REDACTED, is_sensitive_key, redact, redact_free_text
from kernel.scrubber import (battle_secrets, register_battle_secrets, register_secrets, scrub, scrub_data)
from kernel.trace_log import TraceWriter, bounded, trace_log_path
from kernel.trace_record import TraceRecord
from kernel.world_secrets import task_secrets
from mcp_gateway.models import BattleScope, BattleState
from test_mcp_gateway_unit import APIS, CONTROL_SECRET, TOKEN, _gateway

T0 = datetime(2026, 12, 3, 12, 0, tzinfo=timezone.utc)
ODD = 'pa"ss\\wörd-✓1'
"""A password with a quote, a backslash and non-ASCII letters: its JSON, repr, HTML and URL forms all differ."""


@pytest.fixture(autouse=True)
def own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """This module's registrations stay in it: the process's registry is empty for each test and restored after."""
    monkeypatch.setattr(scrubber, "_battles", OrderedDict())
    monkeypatch.setattr(scrubber, "_process", scrubber._Scope(scrubber.MIN_PROCESS_CHARS))
    monkeypatch.setattr(scrubber, "_union", [None])
    monkeypatch.setattr(scrubber, "_settled", [(frozenset(), ((), None))])


def battle(*values: str) -> str:
    """A fresh battle id with `values` registered (the registry is the process's: each test uses its own battles)."""
    battle_id = f"b-{uuid.uuid4().hex[:12]}"
    register_battle_secrets(battle_id, values)
    return battle_id


# --- the scrubber ------------------------------------------------------------------------------

def test_a_battles_password_is_removed_by_value_wherever_it_stands() -> None:
    b = battle("952a54b1ecd0")
    text = "the password is 952a54b1ecd0, again:952a54b1ecd0x and {'amazon': '952a54b1ecd0'}"
    assert scrub(text, b) == f"the password is {REDACTED}, again:{REDACTED}x and {{'amazon': '{REDACTED}'}}"
    assert battle_secrets(b) == ["952a54b1ecd0"]


def test_a_battle_scrubs_its_own_secrets_and_unscoped_text_every_one() -> None:
    mine, theirs = battle("mine-1234567"), battle("theirs-12345")
    text = "mine-1234567 theirs-12345"
    assert scrub(text, mine) == f"{REDACTED} theirs-12345"  # a battle's writer: its own values (and the process's)
    assert scrub(text) == f"{REDACTED} {REDACTED}"  # process output, logs: everything known
    register_secrets(["process-secret-abc"])
    assert scrub("process-secret-abc", mine) == REDACTED


def test_overlapping_and_nested_secrets_leave_no_part() -> None:
    b = battle("abcdefgh12", "abcdefgh1234", "aaaabbbb", "bbbbcccc", "xyxyxyxy")
    assert scrub("<abcdefgh1234>", b) == f"<{REDACTED}>"  # not "[REDACTED]34"
    assert scrub("<aaaabbbbcccc>", b) == f"<{REDACTED}>"  # two secrets sharing "bbbb": not "[REDACTED]cccc"
    assert scrub("<xyxyxyxyxy>", b) == f"<{REDACTED}>"  # a secret overlapping itself


@pytest.mark.parametrize("form", [
    ODD,
    json.dumps(ODD)[1:-1],  # ASCII JSON: \" \\ \u00f6 \u2713
    json.dumps(ODD, ensure_ascii=False)[1:-1],  # JSON as pydantic writes it
    json.dumps(json.dumps(ODD)[1:-1])[1:-1],  # a JSON tool result inside a JSON line
    repr(ODD)[1:-1],  # a REPL's printed dict or list
    html.escape(ODD),  # a page
    quote_plus(ODD),  # an AppWorld server's logged URL
])
def test_a_secret_with_a_quote_a_backslash_and_unicode_is_removed_in_each_form_it_takes(form: str) -> None:
    b = battle(ODD)
    scrubbed = scrub(f"before {form} after", b)
    assert scrubbed == f"before {REDACTED} after", scrubbed


def _percent(text: str, lower: bool = False, every: int = 1) -> str:
    """`text` with every `every`-th character percent-encoded (all of its UTF-8 bytes), the others as they are."""
    hexed = lambda c: "".join(f"%{b:02x}" if lower else f"%{b:02X}" for b in c.encode())  # noqa: E731
    return "".join(hexed(c) if i % every == 0 else c for i, c in enumerate(text))


@pytest.mark.parametrize("form", [
    _percent("952a54b1ecd0"),  # %39%35%32...: every character, as a URL encoder that escapes all would
    _percent("952a54b1ecd0", lower=True),
    _percent("952a54b1ecd0", every=2),  # mixed: some characters as they are, some encoded
    _percent(ODD),  # the non-ASCII letters as their UTF-8 bytes
    _percent(ODD, lower=True).replace("%c3", "%C3"),  # hex in both cases
    _percent(ODD, lower=True, every=2),
])
def test_a_secret_percent_encoded_in_any_way_is_removed(form: str) -> None:
    b = battle(ODD, "952a54b1ecd0", "pw12")
    assert scrub(f"GET /notes?query={form}&page=1 HTTP/1.1", b) == f"GET /notes?query={REDACTED}&page=1 HTTP/1.1"
    assert scrub(f"q={form}") == f"q={REDACTED}"  # unscoped text (a child's log): every value known
    assert scrub_data({"url": f"/x?q={form}", "n": 1}, b) == {"url": f"/x?q={REDACTED}", "n": 1}
    assert scrub(f"%2F{form}%2F", b) == f"%2F{REDACTED}%2F"  # the encoded characters around it are kept


def test_a_short_value_percent_encoded_follows_the_short_values_rule() -> None:
    b = battle("pw12")
    assert scrub(f"q={_percent('pw12')}&r=1", b) == f"q={REDACTED}&r=1"
    assert scrub(f"q=x{_percent('pw12')}y", b) == f"q=x{_percent('pw12')}y"  # inside a longer word: kept
    assert scrub("100%25 sure %zz %4", b) == "100%25 sure %zz %4"  # text with stray or partial escapes: unchanged
    assert scrub(f"%C3{_percent('pw12')}%zz", b) == f"%C3{REDACTED}%zz"  # after a byte that is no UTF-8 alone


def test_a_json_line_scrubbed_as_data_stays_json_and_holds_no_form_of_the_secret() -> None:
    b = battle(ODD)
    result = json.dumps({"response": [{"account_name": "gmail", "pw": ODD}]})  # a tool's JSON result text
    line = json.dumps(scrub_data({"result": result, "text": f"I read {ODD}", "list": [repr([ODD])]}, b))
    data = json.loads(line)
    assert data["text"] == f"I read {REDACTED}" and json.loads(data["result"])["response"][0]["pw"] == REDACTED
    assert data["list"] == [f"['{REDACTED}']"]
    for form in (ODD, json.dumps(ODD)[1:-1], json.dumps(ODD, ensure_ascii=False)[1:-1], "ss\\\\w"):
        assert form not in line, form


def test_short_values_are_ignored_or_removed_only_where_they_stand_alone() -> None:
    b = battle("ab1", "pw12", "seven77")
    assert scrub("ab1 and xab1y", b) == "ab1 and xab1y"  # 1-3 characters: in every text, never scrubbed
    assert scrub("pw12 (pw12) xpw12 pw12y", b) == f"{REDACTED} ({REDACTED}) xpw12 pw12y"  # 4-7: only standing alone
    assert scrub("seven77!", b) == f"{REDACTED}!"
    register_secrets(["short77"])  # a process's own secret (an API key) shorter than 8: not one
    assert scrub("short77", None) == "short77"


def test_timestamps_and_keys_in_data() -> None:
    b = battle("4242", "key-secret-1")
    data = scrub_data({"at": "4242-12-03T12:00:00Z", "note": "in 4242", "key-secret-1": 1}, b)
    assert data == {"at": "4242-12-03T12:00:00Z", "note": f"in {REDACTED}", REDACTED: 1}


def test_data_is_scrubbed_as_each_of_its_strings_alone_whatever_else_it_holds() -> None:
    """`scrub_data` looks for the known values once over all its strings before string by string: the output must be
    exactly each string scrubbed on its own, with a value in one string among clean ones, a short value at a string's
    edge (where the joined text puts a NUL), a Bearer credential with no known value, and nothing to remove."""
    b = battle("pw12", "key-secret-1", ODD)
    register_secrets(["process-secret-abc"])
    each = lambda v: (v if scrubber._TIMESTAMP.fullmatch(v) else scrub(v, b)) if isinstance(v, str) else (  # noqa: E731
        {each(k): each(x) for k, x in v.items()} if isinstance(v, dict) else
        [each(x) for x in v] if isinstance(v, (list, tuple)) else v)
    cases = [{"a": "clean", "b": ["x", {"c": "pw12"}], "d": 3},  # a short value alone in its string
             {"pw": "xpw12", "q": "pw12y", "n": None},  # inside a longer word: kept, even at the edges
             {"t": "Authorization: Bearer abc.def", "u": "no secret here", "at": "2026-12-03T12:00:00Z"},
             ["one", "two", json.dumps({"pw": ODD}), ("process-secret-abc",)],
             {"k": "v"}, [], "pw12", 7]
    for data in cases:
        assert scrub_data(data, b) == each(data), data
        assert scrub_data(data) == scrub_data(data, None)
    assert scrub_data({"a": "pw12"}, b) == {"a": REDACTED} and scrub_data({"a": "x pw12"}, "other") == {"a": "x pw12"}


def test_unscoped_text_loses_every_battles_values_across_the_unions_compilations(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Unscoped text (log lines, child logs) is scrubbed of every value known: those compiled together and the later
    battles' on top (compiled again only every FRESH_SCOPES battles), long and short, overlapping across battles."""
    monkeypatch.setattr(scrubber, "FRESH_SCOPES", 3)
    for i in range(10):  # past three compilations, each battle scrubbed for at once
        battle(f"long-secret-{i:04d}", f"pw{i:02d}")
        register_secrets([f"process-token-{i:04d}"])
        text = f"long-secret-{i:04d} (pw{i:02d}) xpw{i:02d} process-token-{i:04d}"
        assert scrub(text) == f"{REDACTED} ({REDACTED}) xpw{i:02d} {REDACTED}", text
    assert scrub("long-secret-0000 pw00 long-secret-0009 pw09") == " ".join([REDACTED] * 4)
    battle("aaaabbbb"), battle("bbbbcccc")  # two battles' values sharing a part: one marker, no part left
    assert scrub("<aaaabbbbcccc>") == f"<{REDACTED}>" and scrub_data({"k": "<aaaabbbbcccc>"}) == {"k": f"<{REDACTED}>"}


def test_a_battles_values_and_the_battles_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scrubber, "MAX_BATTLE_VALUES", 3)
    b = f"b-{uuid.uuid4().hex[:12]}"
    register_battle_secrets(b, [f"value-{i:04d}" for i in range(10)])
    assert len(battle_secrets(b)) == 3
    monkeypatch.setattr(scrubber, "KEPT_BATTLES", 2)
    first, *_ = [battle("old-battle-secret")] + [battle() for _ in range(3)]
    assert battle_secrets(first) == [] and scrub("old-battle-secret", first) == "old-battle-secret"


# --- the key rule --------------------------------------------------------------------------------

def test_credentials_are_blanked_by_key_and_plain_values_stay_visible() -> None:
    login = {"access_token": "opaque", "token_type": "Bearer", "file_system_access_token": "x", "accessToken": "y",
             "usage": {"prompt_tokens": 12, "max_tokens": 99}, "tokens": ["a"], "password": "p", "api-key": "k"}
    out = redact(login)
    assert out["token_type"] == "Bearer" and out["usage"] == {"prompt_tokens": 12, "max_tokens": 99}
    assert out["tokens"] == ["a"]
    assert all(out[k] == REDACTED for k in ("access_token", "file_system_access_token", "accessToken", "password",
                                            "api-key"))
    assert not is_sensitive_key("token_type") and not is_sensitive_key("total_tokens") and is_sensitive_key("token")
    text = redact_free_text('{"access_token": "opaque", "token_type": "bearer"} {\'token_type\': \'Bearer\'}')
    assert text == f'{{"access_token": "{REDACTED}", "token_type": "bearer"}} {{\'token_type\': \'Bearer\'}}'


# --- what the referee knows: the task's data -----------------------------------------------------

def test_the_tasks_data_names_its_supervisors_passwords(appworld_root: Path, tmp_path: Path) -> None:
    lines = (appworld_root / "data" / "tasks" / "f0a1c01_1" / "dbs" / "supervisor.jsonl").read_text().splitlines()
    expected = sorted(json.loads(line)[1][3] for line in lines if "INTO account_passwords" in line)
    assert len(expected) >= 5 and task_secrets(appworld_root / "data", "f0a1c01_1") == expected
    dbs = tmp_path / "data" / "tasks" / "t_1" / "dbs"
    dbs.mkdir(parents=True)
    (dbs / "x.jsonl").write_text("\n".join(json.dumps(line) for line in [
        ["INSERT INTO users (name, password) VALUES (?, ?)", [["ann", "pw-ann-1"], ["bob", "pw-bob-1"]], True],
        ["UPDATE users SET password = ? WHERE id = ?", ["pw-new-1", 1], False],  # the agent's doing, not set-up
        ["INSERT INTO notes (title) VALUES (?)", ["password"], False]]) + "\nnot json\n")
    assert task_secrets(tmp_path / "data", "t_1") == ["pw-ann-1", "pw-bob-1"]
    assert task_secrets(tmp_path / "data", "../t_1") == [] and task_secrets(tmp_path / "data", "missing_1") == []


# --- writers ----------------------------------------------------------------------------------------

def record(b: str, kind: str = "tool_call", **fields: object) -> TraceRecord:
    return TraceRecord(at=T0, battle_id=b, kind=kind, source="gateway", **fields)  # type: ignore[arg-type]


def test_the_trace_writer_removes_a_bare_password_from_every_field() -> None:
    b = battle(ODD, "952a54b1ecd0")
    line = bounded(record(b, tool="simple_note__search_notes", arguments={"query": "952a54b1ecd0", ODD: 1},
                          result=json.dumps({"response": [{"account_name": "gmail", "pw": ODD}]}),
                          text=f"printed {ODD}\n952a54b1ecd0", usage={ODD: 1.0}))
    text = line.decode()
    assert "952a54b1ecd0" not in text and not any(f in text for f in (ODD, json.dumps(ODD)[1:-1]))
    data = json.loads(line)
    assert data["arguments"] == {"query": REDACTED, REDACTED: 1} and data["at"].startswith("2026-12-03")


def test_what_the_green_writes_from_a_trace_is_scrubbed_again(tmp_path: Path) -> None:
    """A record another process wrote before it knew a value (the Green knows it from the task's data) loses it when
    the Green gathers the trace, renders the page and writes `environment_io.md`."""
    b = f"b-{uuid.uuid4().hex[:12]}"
    shared = tmp_path / "calls.trace.jsonl"
    for rec in (record(b, tool="x__y", result="pw 952a54b1ecd0", arguments={"q": "952a54b1ecd0"}),
                record(b, "execution", text="print(p)", result="952a54b1ecd0\n", ok=True)):
        append_line(shared, rec.model_dump_json(exclude_none=True).encode() + b"\n")  # as written without the value
    register_battle_secrets(b, ["952a54b1ecd0"])
    run = tmp_path / "run"
    TraceWriter(run / "trace.jsonl").append(record(b, "task_message", text="do it"))
    assert gather(run, b, [shared]) == (2, None)
    write_page(run / "trace.jsonl", run / "trace.html")
    assert write_environment_io(read_trace(run / "trace.jsonl"), run / "environment_io.md")
    for name in ("trace.jsonl", "trace.html", "environment_io.md"):
        assert "952a54b1ecd0" not in (run / name).read_text() and REDACTED in (run / name).read_text(), name


def test_the_call_log_keeps_no_bare_password_and_keeps_its_own_values(tmp_path: Path) -> None:
    b = battle("2026", "952a54b1ecd0")  # a short value: the record's own time, ids and number are kept
    log = CallLogWriter(tmp_path / "calls.jsonl")
    log.append(CallRecord(timestamp=T0, battle_id=b, task_id="t_1", tool_name="simple_note__search_notes",
                          arguments={"query": "952a54b1ecd0 2026"}, success=False, duration_ms=1,
                          error="no note matches 952a54b1ecd0", seq=log.next_seq()))
    [kept] = read_call_log(tmp_path / "calls.jsonl")
    assert kept.arguments == {"query": f"{REDACTED} {REDACTED}"} and kept.error == f"no note matches {REDACTED}"
    assert (kept.timestamp, kept.battle_id, kept.task_id) == (T0, b, "t_1")


# --- hand-overs: the gateway, the bridge -----------------------------------------------------------

@responses.activate
def test_the_gateway_learns_the_tokens_appworld_issues_and_keeps_token_type(tmp_path: Path) -> None:
    """An opaque token (no JWT shape: only its value can find it) from a login reply, then sent back bare."""
    token = "opaque-token-" + uuid.uuid4().hex
    responses.post(f"{APIS}/simple_note/auth/token", json={"access_token": token, "token_type": "Bearer"})
    responses.get(f"{APIS}/simple_note/notes", json=[])
    b = f"b-{uuid.uuid4().hex[:12]}"
    gw = _gateway(tmp_path, battle=b)
    login = asyncio.run(gw.call_tool("simple_note__login", {"username": "u@x.y", "password": "pw-secret-1"}))
    assert login.structured_content == {"response": {"access_token": token, "token_type": "Bearer"}}  # the agent's
    asyncio.run(gw.call_tool("simple_note__search_notes", {"access_token": token, "query": f"mine is {token}"}))
    log = tmp_path / "logs" / "calls.jsonl"
    written = log.read_text() + trace_log_path(log).read_text()
    assert token not in written and "pw-secret-1" not in written
    traced = read_trace(trace_log_path(log))
    assert '"token_type": "Bearer"' in traced[0].result and traced[1].arguments["query"] == f"mine is {REDACTED}"


def test_the_gateway_takes_the_battles_secrets_and_never_echoes_them(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from mcp_gateway.server import build_control_app

    password, b = "pw-" + uuid.uuid4().hex[:12], f"b-{uuid.uuid4().hex[:12]}"
    scope = BattleScope(battle_id=b, task_id="T", token=TOKEN, secrets=[password])
    assert password not in scope.model_dump_json() and password not in repr(scope)
    assert BattleState(**scope.model_dump(), set_at=T0).secrets == []
    gw = _gateway(tmp_path)
    auth = {"Authorization": f"Bearer {CONTROL_SECRET}"}
    with TestClient(build_control_app(gw, CONTROL_SECRET), base_url="http://127.0.0.1:8080", headers=auth) as client:
        put = client.put("/control/battle", json={"battle_id": b, "task_id": "T", "token": TOKEN,
                                                  "secrets": [password]})
        health = client.get("/control/health")
        cleared = client.delete("/control/battle")
    assert put.status_code == health.status_code == cleared.status_code == 200
    assert all(password not in reply.text for reply in (put, health, cleared))
    assert battle_secrets(b) == sorted([password, TOKEN])
    assert scrub(f"x {password} {TOKEN}", b) == f"x {REDACTED} {REDACTED}"


def test_only_the_bridge_is_sent_the_battles_secrets_and_it_scrubs_with_them(tmp_path: Path) -> None:
    from a2a.types import Message

    password, b = "pw-" + uuid.uuid4().hex[:12], f"b-{uuid.uuid4().hex[:12]}"
    plain = build_send_request("the task", "m1", b)
    assert [p["kind"] for p in plain["params"]["message"]["parts"]] == ["text"]  # any Blue: the task, nothing else
    request = build_send_request("the task", "m1", b, [password])
    message = Message.model_validate({**request["params"]["message"], "messageId": "m1"})
    assert given_secrets(message) == [password] and given_secrets(None) == []
    register_battle_secrets(b, given_secrets(message))  # as the bridge's executor does
    trace = BridgeTrace(tmp_path / "bridge.trace.jsonl", b)
    token = "opaque-token-" + uuid.uuid4().hex
    trace.learn({"access_token": token, "token_type": "Bearer"})  # a login's answer, before it is traced
    trace.sent(f"Tool 'simple_note__login' result: {json.dumps({'access_token': token, 'token_type': 'Bearer'})}")
    trace.sent(f"Output:\n{password}\n{token}\n")
    written = (tmp_path / "bridge.trace.jsonl").read_text()
    assert password not in written and token not in written and '\\"token_type\\": \\"Bearer\\"' in written
