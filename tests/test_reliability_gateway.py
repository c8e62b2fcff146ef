"""The gateway applying a fault plan, through its seam (no servers): `Gateway._outcome` consults the running battle's
plan (`mcp_gateway.faults`) at the one place a call is about to be forwarded.

The forwarder is a stand-in that states the contract it replaces (`mcp_gateway.forwarding.ApiForwarder.forward`):
`forward(spec, arguments, gate) -> ApiReply`, asking `gate.admit()` before the request goes upstream and telling
`gate.settled(reply)` after; here every admitted call answers 200 `{"ok": <tool>}` and is recorded, so a test sees
exactly which calls would have reached AppWorld.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from kernel.call_log import CallLogWriter
from kernel.call_log_reader import read_call_log
from kernel.fault_spec import parse_fault_spec
from kernel.trace_log import trace_log_path
from kernel.trace_record import TraceRecord
from kernel.world_data import ApiDoc
from mcp_gateway.code.session import ApiCall
from mcp_gateway.forwarding import ApiReply
from mcp_gateway.gateway import Gateway
from mcp_gateway.models import BattleScope
from mcp_gateway.tools import ToolSpec, tool_spec


class RecordingForwarder:
    """Stands in for `ApiForwarder` (module docstring): records every call that would have gone upstream."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def forward(self, spec: ToolSpec, arguments: dict[str, Any], gate: Any = None) -> ApiReply:
        refusal = gate.admit() if gate is not None else None
        if refusal is not None:
            return ApiReply(status_code=None, refused=refusal)
        self.sent.append(spec.name)
        reply = ApiReply(status_code=200, body={"ok": spec.name})
        if gate is not None:
            gate.settled(reply)
        return reply

    def close(self) -> None:
        pass


def _doc(app: str, api: str, method: str, success: Any = None, path: str | None = None,
         parameters: tuple[str, ...] = ()) -> ApiDoc:
    return ApiDoc(app_name=app, api_name=api, method=method, path=path or f"/{app}/{api}",
                  parameters=[{"name": name, "type": "string", "required": False} for name in parameters],
                  response_schemas={"success": success if success is not None else {"x": 1}})


SPECS = {s.name: s for s in map(tool_spec, [
    _doc("spotify", "login", "POST", path="/spotify/auth/token", parameters=("username", "password")),
    _doc("spotify", "show_song_library", "GET", [{"song_id": 1}]),
    _doc("spotify", "add_song_to_playlist", "POST", parameters=("song_id",)),
    _doc("supervisor", "show_account_passwords", "GET", [{"x": 1}]), _doc("supervisor", "complete_task", "POST"),
    _doc("api_docs", "show_api_doc", "GET")])}


def gateway(tmp_path: Path, faults: str | None, interaction: str = "tools") -> tuple[Gateway, RecordingForwarder]:
    forwarder = RecordingForwarder()
    gw = Gateway(dict(SPECS), forwarder, CallLogWriter(tmp_path / "calls.jsonl"))  # type: ignore[arg-type]
    gw.scope.set_battle(BattleScope(battle_id="B", task_id="t_1", launch_url_allowed=True, interaction=interaction,
                                    task_datetime="2023-05-18T12:00:00",
                                    faults=parse_fault_spec(faults).salted() if faults else None))
    return gw, forwarder


def test_without_a_spec_every_call_is_forwarded_and_nothing_is_marked(tmp_path: Path) -> None:
    gw, forwarder = gateway(tmp_path, None)
    for name in ["spotify__login", "spotify__show_song_library"] * 5:
        asyncio.run(gw.call_tool(name, {}))
    assert forwarder.sent == ["spotify__login", "spotify__show_song_library"] * 5
    assert all(r.fault is None and r.success for r in read_call_log(tmp_path / "calls.jsonl"))


def test_a_faulted_call_is_answered_by_the_gateway_never_forwarded_and_marked_with_what_the_agent_got(
        tmp_path: Path) -> None:
    gw, forwarder = gateway(tmp_path, "rate=1,seed=1,kinds=error,max_consecutive=2")
    results = [asyncio.run(gw.call_tool("spotify__login", {"username": "u", "password": "secret-pw"}))
               for _ in range(3)]
    scaffolding = [asyncio.run(gw.call_tool(name, {})) for name in
                   ("supervisor__show_account_passwords", "api_docs__show_api_doc", "supervisor__complete_task")]
    assert forwarder.sent == ["spotify__login", "supervisor__show_account_passwords", "api_docs__show_api_doc",
                              "supervisor__complete_task"]  # the third login got through; scaffolding never faulted
    first = results[0]
    assert not first.is_error and first.structured_content["response"]["is_error"] is True  # an API error, as data
    assert "temporarily unavailable" in first.content[0].text
    records = read_call_log(tmp_path / "calls.jsonl")
    faulted = [r for r in records if r.fault]
    assert [(r.fault.kind, r.fault.position, r.status_code) for r in faulted] == [("error", 1, 503), ("error", 2, 503)]
    assert faulted[0].fault.delivered == first.content[0].text
    assert all(not r.success and r.upstream_fault is None for r in faulted)  # never an infrastructure fault
    assert "secret-pw" not in (tmp_path / "calls.jsonl").read_text()
    traced = [TraceRecord.model_validate_json(line) for line in trace_log_path(tmp_path / "calls.jsonl").read_text()
              .splitlines()]
    assert [t.fault for t in traced] == ["error", "error", None, None, None, None]
    assert traced[0].result == first.content[0].text
    assert scaffolding[-1].meta  # complete_task still ends the episode


def test_code_mode_gets_the_failure_as_appworlds_requester_raises_it(tmp_path: Path) -> None:
    gw, forwarder = gateway(tmp_path, "rate=1,seed=1,kinds=rate_limit", interaction="code")

    async def one() -> Any:
        return await gw.code_call(ApiCall(app="spotify", api="login", arguments={}), "B", "t_1", gw.scope.generation)

    answer = asyncio.run(one())
    assert (answer.status_code, answer.error) == (429, None) and forwarder.sent == []
    message = "Response status code is 429:\n" + json.dumps(answer.body, ensure_ascii=False, separators=(",", ":"))
    assert "Retry after 1 second" in message
    assert read_call_log(tmp_path / "calls.jsonl")[0].fault.delivered == message


def test_a_malformed_answer_is_cut_text_in_tools_mode_and_undecodable_text_in_code_mode(tmp_path: Path) -> None:
    gw, _ = gateway(tmp_path, "rate=1,seed=1,kinds=malformed")
    result = asyncio.run(gw.call_tool("spotify__show_song_library", {}))
    assert result.structured_content is None and not result.is_error
    with pytest.raises(ValueError):
        json.loads(result.content[0].text)
    code_gw, _ = gateway(tmp_path / "code", "rate=1,seed=1,kinds=malformed", interaction="code")
    answer = asyncio.run(code_gw.code_call(ApiCall(app="spotify", api="show_song_library", arguments={}), "B", "t_1",
                                           code_gw.scope.generation))
    assert answer.status_code == 200 and answer.text is not None
    with pytest.raises(ValueError):
        json.loads(answer.text)


def test_a_timeout_holds_the_call_then_fails_and_one_whose_battle_ended_meanwhile_is_not_delivered(
        tmp_path: Path) -> None:
    gw, forwarder = gateway(tmp_path, "rate=1,seed=1,kinds=timeout,timeout_s=0.3")
    started = time.monotonic()
    result = asyncio.run(gw.call_tool("spotify__login", {}))
    assert time.monotonic() - started >= 0.3 and "within 0.3 seconds" in result.content[0].text

    async def ended_while_waiting() -> Any:
        call = asyncio.ensure_future(gw.call_tool("spotify__login", {}))
        await asyncio.sleep(0.05)
        gw.scope.clear_battle()
        return await call

    late = asyncio.run(ended_while_waiting())
    assert late.is_error and "has ended" in late.content[0].text and forwarder.sent == []
    records = read_call_log(tmp_path / "calls.jsonl")
    assert records[0].fault.delivered is not None
    assert records[1].refused == "battle_ended" and records[1].fault.kind == "timeout"
    assert records[1].fault.delivered is None  # it never reached the agent: not counted


def test_a_call_within_a_429s_retry_after_is_answered_429_again_in_tools_mode_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("mcp_gateway.faults.battles.RETRY_AFTER_S", 0.3)
    gw, forwarder = gateway(tmp_path, "rate=1,seed=1,kinds=rate_limit,max_consecutive=1")
    first = asyncio.run(gw.call_tool("spotify__login", {"username": "u"}))
    early = asyncio.run(gw.call_tool("spotify__login", {"username": "u"}))  # at once: the retry-after ignored
    other = asyncio.run(gw.call_tool("spotify__show_song_library", {}))  # another API is not held back
    time.sleep(0.35)
    waited = asyncio.run(gw.call_tool("spotify__login", {"username": "u"}))  # after it: the plan again (streak: clear)
    assert "Retry after 1 second" in first.content[0].text and early.content[0].text == first.content[0].text
    assert "Retry after" in other.content[0].text and json.loads(waited.content[0].text) == {
        "response": {"ok": "spotify__login"}}
    assert forwarder.sent == ["spotify__login"]
    records = read_call_log(tmp_path / "calls.jsonl")
    assert [(r.tool_name, r.fault.kind, r.fault.position, r.fault.enforced) for r in records if r.fault] == [
        ("spotify__login", "rate_limit", 1, False), ("spotify__login", "rate_limit", 1, True),
        ("spotify__show_song_library", "rate_limit", 2, False)]
    code_gw, code_forwarder = gateway(tmp_path / "code", "rate=1,seed=1,kinds=rate_limit,max_consecutive=1",
                                      interaction="code")

    async def login() -> Any:
        return await code_gw.code_call(ApiCall(app="spotify", api="login", arguments={}), "B", "t_1",
                                       code_gw.scope.generation)

    assert [asyncio.run(login()).status_code for _ in range(2)] == [429, 200]  # code cannot wait: not enforced
    assert code_forwarder.sent == ["spotify__login"]


def test_a_lost_response_reaches_the_world_and_the_agent_gets_the_timeout_a_timeout_gives(tmp_path: Path) -> None:
    gw, forwarder = gateway(tmp_path, "rate=1,seed=1,kinds=lost_response,timeout_s=0.1")
    lost = asyncio.run(gw.call_tool("spotify__add_song_to_playlist", {"song_id": "7"}))
    read = asyncio.run(gw.call_tool("spotify__show_song_library", {}))  # a read or a login never loses its answer
    login = asyncio.run(gw.call_tool("spotify__login", {}))
    timeout_gw, _ = gateway(tmp_path / "timeout", "rate=1,seed=1,kinds=timeout,timeout_s=0.1")
    timed_out = asyncio.run(timeout_gw.call_tool("spotify__add_song_to_playlist", {"song_id": "7"}))
    assert lost.content[0].text == timed_out.content[0].text  # the agent cannot tell: it must check its write
    assert "did not answer within 0.1 seconds" in lost.content[0].text
    assert not read.structured_content["response"].get("is_error") and not login.structured_content[
        "response"].get("is_error")
    assert forwarder.sent == ["spotify__add_song_to_playlist", "spotify__show_song_library", "spotify__login"]
    record = read_call_log(tmp_path / "calls.jsonl")[0]
    assert (record.status_code, record.success, record.fault.kind, record.fault.upstream_status) == (
        504, False, "lost_response", 200)
    assert record.seq >= 1 and record.fault.delivered == lost.content[0].text


@pytest.mark.parametrize("kind, interaction, silent", [
    ("empty", "tools", True), ("malformed", "tools", True), ("malformed", "code", False), ("error", "tools", False)])
def test_a_fault_is_silent_when_the_agent_is_not_told(tmp_path: Path, kind: str, interaction: str,
                                                      silent: bool) -> None:
    gw, _ = gateway(tmp_path, f"rate=1,seed=1,kinds={kind}", interaction=interaction)
    if interaction == "code":
        asyncio.run(gw.code_call(ApiCall(app="spotify", api="show_song_library", arguments={}), "B", "t_1",
                                 gw.scope.generation))
    else:
        asyncio.run(gw.call_tool("spotify__show_song_library", {}))
    assert read_call_log(tmp_path / "calls.jsonl")[0].fault.silent is silent


def test_a_calls_key_is_the_same_for_the_same_call_and_compares_secrets_by_value(tmp_path: Path) -> None:
    gw, _ = gateway(tmp_path, None)
    for arguments in ({"username": "u", "password": "pw-one"}, {"password": "pw-one", "username": "u"},
                      {"username": "u", "password": "pw-two"}, {"username": "u", "password": "pw-one", "x": 1}):
        asyncio.run(gw.call_tool("spotify__login", arguments))
    keys = [r.call_key for r in read_call_log(tmp_path / "calls.jsonl")]
    assert keys[0] == keys[1] == keys[3] != keys[2]  # order and unknown arguments aside; the password's value counts
    assert all(k and len(k) == 32 for k in keys) and "pw-one" not in (tmp_path / "calls.jsonl").read_text()
    other, _ = gateway(tmp_path / "other", None)  # another gateway's key: the same call, another hash
    asyncio.run(other.call_tool("spotify__login", {"username": "u", "password": "pw-one"}))
    assert read_call_log(tmp_path / "other" / "calls.jsonl")[0].call_key != keys[0]
