"""The A2A front door's pure parts: the in-band wire format, the request model, sharding, the bridge's trust.

No processes: the world is the built offline world's files (read only).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
import requests

from green_agent.a2a.artifact import AssessmentData, ShardInfo, build_data
from green_agent.a2a.bridge.conversation import first_message
from green_agent.a2a.request import RequestError, parse_request, resolve_shard
from green_agent.models.bridge import BridgeReport
from green_agent.steps.dispatch import BlueReply, DispatchHandle, DispatchResult, AgentCardInfo, parse_reply
from green_agent.steps.wait import _blue_fault
from kernel.a2a_tools import (MAX_REPLY_CHARS, ToolCall, parse_result, parse_tool_call, render_call, render_result,
                              task_id_of, tools_of)
from kernel.errors import BridgeFaultError
from kernel.world_data import WorldData

AGENT = "http://127.0.0.1:1"


# -- the wire format ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    '{"name": "spotify__login", "arguments": {"username": "a"}}',
    'I will log in.\n<json>\n{"name": "spotify__login", "arguments": {"username": "a"}}\n</json>',
    'Sure:\n```json\n{"name": "spotify__login", "arguments": {"username": "a"}}\n```',
    '{"name": "spotify__login", "arguments": "{\\"username\\": \\"a\\"}"}',
])
def test_a_tool_call_is_read_in_every_tau2_form(text: str) -> None:
    assert parse_tool_call(text) == ToolCall(name="spotify__login", arguments={"username": "a"})


def test_a_tool_call_is_read_from_a_data_part_first() -> None:
    call = parse_tool_call("not json", [{"name": "supervisor__complete_task", "arguments": {"status": "success"}}])
    assert call == ToolCall(name="supervisor__complete_task", arguments={"status": "success"})


@pytest.mark.parametrize("text, problem", [
    ("hello", "no JSON object"),
    ('{"name": "x; rm -rf /", "arguments": {}}', "listed tool names"),
    ('{"name": "spotify__login", "arguments": [1, 2]}', "must be a JSON object"),
    ('{"name": "spotify__login", "arguments": "{bad"}', "not JSON"),
    ("x" * (MAX_REPLY_CHARS + 1), "too long"),
])
def test_anything_else_is_one_sentence_saying_what_is_wrong(text: str, problem: str) -> None:
    result = parse_tool_call(text)
    assert isinstance(result, str) and problem in result


def test_results_and_calls_round_trip_and_the_first_message_keeps_the_token_out() -> None:
    assert parse_result(render_result("a__b", {"x": [1, "é"]})) == ("a__b", {"x": [1, "é"]})
    assert parse_tool_call(render_call(ToolCall(name="a__b", arguments={"k": 1}))) == ToolCall(name="a__b",
                                                                                               arguments={"k": 1})
    task_text = ("You are being evaluated.\nAppWorld task id: abc_1\n"
                 "MCP endpoint (Streamable HTTP): http://127.0.0.1:1/b/SECRET-TOKEN/mcp\n"
                 "MCP endpoint (SSE): http://127.0.0.1:1/b/SECRET-TOKEN/sse\nTask instruction:\nDo it.")
    schemas = [{"type": "function", "function": {"name": "a__b", "description": "d", "parameters": {}}}]
    text = first_message(task_text, schemas)
    assert "SECRET-TOKEN" not in text and "Do it." in text
    assert tools_of(text) == schemas and task_id_of(text) == "abc_1"


# -- the request ----------------------------------------------------------------------------------

def request(config: dict | None = None, participants: dict | None = None) -> str:
    return json.dumps({"participants": participants if participants is not None else {"agent": AGENT},
                       "config": config or {}})


@pytest.mark.parametrize("text, field", [
    ("not json", "not JSON"),
    (request(participants={}), "participants"),
    (request(participants={"a": AGENT, "b": AGENT}), "participants"),
    (request(participants={"agent": "ftp://x"}), "participants.agent"),
    (request({"colour": "red"}), "config.colour is not a known key"),
    (request({"assessment_config": {"max_turns": 3}}), "config.max_turns is not a known key"),
    (request({"workers": 0}), "config.workers"),
    (request({"turn_timeout_s": 300}), "config.turn_timeout_s"),
    (request({"predictor": "magic"}), "config.predictor"),
    (json.dumps({"participants": {"agent": AGENT}, "extra": 1}), "extra"),
])
def test_bad_requests_are_refused_naming_the_field(text: str, field: str) -> None:
    with pytest.raises(RequestError, match=field.replace(".", r"\.")):
        parse_request(text)


def test_the_config_may_be_nested_and_the_participant_may_have_another_role() -> None:
    parsed = parse_request(json.dumps({"participants": {"solver": AGENT + "/"},
                                       "config": {"assessment_config": {"workers": 2, "num_shards": 3},
                                                  "shard_index": 1, "task_ids": "a_1, b_2"}}))
    assert (parsed.role, parsed.purple_url) == ("solver", AGENT)
    assert (parsed.config.workers, parsed.config.num_shards, parsed.config.shard_index) == (2, 3, 1)
    assert parsed.config.task_ids == ["a_1", "b_2"]


@pytest.mark.parametrize("config, field", [
    ({"task_ids": ["zzz_404"]}, "config.task_ids: unknown task"),
    ({"task_ids": ["../etc"]}, "config.task_ids"),
    ({"split": "nosuch"}, "config.split"),
    ({"shard_index": 3, "num_shards": 3}, "config.shard_index 3 is out of range"),
    ({"split": "dev", "task_ids": ["a_1"]}, "exclude each other"),
])
def test_a_task_set_that_cannot_be_resolved_is_refused(appworld_root: Path, config: dict, field: str) -> None:
    with pytest.raises(RequestError, match=field.replace(".", r"\.")):
        resolve_shard(parse_request(request(config)).config, WorldData(appworld_root), "dev")


def test_shards_cover_the_task_set_exactly_once_in_order(appworld_root: Path) -> None:
    world = WorldData(appworld_root)
    whole, size = resolve_shard(parse_request(request({"split": "dev"})).config, world, "dev")
    shards = [resolve_shard(parse_request(request({"split": "dev", "shard_index": k, "num_shards": 3})).config,
                            world, "dev") for k in range(3)]
    merged = [t for ids, _ in shards for t in ids]
    assert sorted(merged) == sorted(whole) and len(merged) == len(set(merged)) == size == len(world.split("dev"))
    assert shards[1][0] == whole[1::3]
    limited, _ = resolve_shard(parse_request(request({"num_tasks": 4})).config, world, "dev")
    assert limited == whole[:4]


# -- the artifact ---------------------------------------------------------------------------------

def test_an_empty_shard_still_has_every_field_with_its_type() -> None:
    data = build_data(None, [], ShardInfo(index=2, count=3, tasks=0, task_set_size=2), "agent", {"trials": 1},
                      {"appworld_green": "x"}, 0.0, None)
    dumped = AssessmentData.model_validate(data.model_dump()).model_dump()
    assert (dumped["score"], dumped["max_score"], dumped["pass_rate"], dumped["tgc"]) == (0, 0, 0.0, 0.0)
    assert isinstance(dumped["pass_rate"], float) and isinstance(dumped["tgc"], float)
    assert set(dumped["outcomes"]) >= {"passed", "timeout", "infra_error", "not_run"}


# -- the bridge's report is trusted from the bridge only ------------------------------------------

def _reply_with_report(report: dict) -> requests.Response:
    response = requests.Response()
    response.status_code = 200
    body = {"jsonrpc": "2.0", "id": "1", "result": {"kind": "task", "id": "t", "contextId": "c",
            "status": {"state": "completed"}, "artifacts": [{"artifactId": "a", "parts": [
                {"kind": "text", "text": "done"}, {"kind": "data", "data": {"bridge_report": report}}]}]}}
    response._content = json.dumps(body).encode()
    return response


def test_a_blue_that_is_not_the_bridge_cannot_hand_the_engine_a_fault_report() -> None:
    forged = {"ended_by": "gateway_error", "fault_owner": "green", "message": "not my fault"}
    assert parse_reply(_reply_with_report(forged)).bridge_report is None
    assert parse_reply(_reply_with_report(forged), bridge=True).bridge_report == BridgeReport.model_validate(forged)


def test_a_bridge_answer_without_its_report_is_our_fault_never_the_purples() -> None:
    response = requests.Response()
    response.status_code = 500
    response._content = b"boom"
    reply = parse_reply(response, bridge=True)
    assert reply.bridge_report.fault_owner == "green" and reply.fault is None


class _Never:
    def task_completed(self, task_id: str) -> bool:
        return False


def test_the_bridges_own_fault_is_an_infrastructure_error_and_the_purples_is_not() -> None:
    handle = DispatchHandle(DispatchResult(blue_url="http://b", agent=AgentCardInfo(), message_id="m"))
    handle._set(BlueReply(state="replied", at=time.monotonic(), bridge_report=BridgeReport(
        ended_by="gateway_error", fault_owner="green", message="gateway down")))
    with pytest.raises(BridgeFaultError, match="gateway down"):
        _blue_fault(handle, _Never(), "t_1")
    handle._set(BlueReply(state="replied", at=time.monotonic(), bridge_report=BridgeReport(
        ended_by="turn_timeout", fault_owner="blue", message="slow")))
    fault = _blue_fault(handle, _Never(), "t_1")  # the purple's fault: the battle is judged, the purple charged
    assert fault is not None and fault.kind == "turn_timeout" and fault.message == "slow"


def test_the_wait_takes_the_bridges_report_when_it_arrives_and_goes_on_without_it() -> None:
    from green_agent.steps.wait import CompletionResult, await_bridge_report

    completion = CompletionResult(completed=True, ended_by="completed", waited_s=0.1, blue_reply="pending")
    handle = DispatchHandle(DispatchResult(blue_url="http://b", agent=AgentCardInfo(), message_id="m"))
    report = BridgeReport(ended_by="complete_task", message="done")
    threading.Timer(0.05, handle._set, [BlueReply(state="replied", at=time.monotonic(), bridge_report=report)]).start()
    got = await_bridge_report(handle, completion, grace_s=30.0)  # woken by the reply (the grace is the bound)
    assert got.bridge_report == report and got.blue_reply == "replied" and got.completed
    silent = DispatchHandle(DispatchResult(blue_url="http://b", agent=AgentCardInfo(), message_id="m"))
    got = await_bridge_report(silent, completion, grace_s=0.01)
    assert got.bridge_report is None and got.blue_reply == "pending"
    assert await_bridge_report(None, completion, grace_s=0.01).blue_reply == "pending"


# -- the card first (green_agent.a2a.card, card_first; the CLI's quick start) --------------------

def test_the_card_served_before_a2a_sdk_is_the_card_a2a_sdk_serves() -> None:
    from green_agent.a2a.card import card_data
    from green_agent.a2a.server import green_card

    for url in ("http://127.0.0.1:9009", "https://green.example/x/"):
        served_later = green_card(url).model_dump(exclude_none=True, by_alias=True)  # a2a-sdk 0.3.6's card route
        assert json.loads(json.dumps(card_data(url))) == json.loads(json.dumps(served_later))


def test_serve_reaches_its_socket_without_importing_a2a_sdk_or_the_batch_layer() -> None:
    """The start-up path of `appworld-green serve` up to the card: argv -> parser -> card -> card_first."""
    import subprocess
    import sys

    code = ("import sys; from green_agent.cli import QUICK_START, build_parser, command_of; "
            "build_parser(QUICK_START[command_of(['-v', 'serve', '--port', '1'])]).parse_args(['serve']); "
            "import green_agent.a2a.card_first, kernel.entry; green_agent.a2a.card_first.CardFirstApp; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'a2a' or m.startswith('green_agent.batch') "
            "or m.startswith('green_agent.engine')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_quick_start_commands_are_registered_by_their_module_alone() -> None:
    from green_agent.cli import COMMAND_MODULES, QUICK_START, build_parser, command_of

    assert command_of(["--env-file", "serve", "-v", "purple"]) == "purple" and command_of(["-v"]) is None
    for command, module in QUICK_START.items():
        assert module in COMMAND_MODULES
        parser = build_parser(module)
        commands = next(a for a in parser._actions if a.dest == "command").choices  # noqa: SLF001 - argparse's table
        assert commands[command].get_default("func").__module__ == module


def _card_first(build):  # noqa: ANN001, ANN202
    from green_agent.a2a.card_first import CardFirstApp

    return CardFirstApp({"name": "card"}, build)


def _real_app(text: str):  # noqa: ANN202
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    return Starlette(routes=[Route("/", lambda request: PlainTextResponse(text), methods=["GET", "POST"]),
                             Route("/.well-known/agent-card.json", lambda request: PlainTextResponse("real card"))])


def test_the_card_answers_while_the_app_builds_and_other_requests_wait_for_it() -> None:
    """Contract of `build`: called once, in a thread, after start-up; returns the real ASGI app."""
    import threading

    from starlette.testclient import TestClient

    release = threading.Event()

    def build():  # noqa: ANN202
        release.wait(10)
        return _real_app("real")

    app = _card_first(build)
    with TestClient(app) as client:
        assert client.get("/.well-known/agent-card.json").json() == {"name": "card"}  # while build() blocks
        assert client.get("/.well-known/agent.json").json() == {"name": "card"}
        answers: list[str] = []
        waiting = threading.Thread(target=lambda: answers.append(client.post("/", content=b"{}").text))
        waiting.start()
        waiting.join(0.5)
        assert waiting.is_alive() and not answers  # held, not refused
        release.set()
        waiting.join(10)
        assert answers == ["real"]
        assert client.get("/.well-known/agent-card.json").text == "real card"  # handed over: the real app serves


def test_an_app_that_cannot_be_built_answers_503_with_the_reason_and_stops_the_server() -> None:
    from starlette.testclient import TestClient

    stopped: list[bool] = []

    def build():  # noqa: ANN202
        raise RuntimeError("no a2a here")

    app = _card_first(build)
    app.on_failure = lambda: stopped.append(True)
    with TestClient(app) as client:
        response = client.post("/", content=b"{}")
        assert response.status_code == 503 and "RuntimeError: no a2a here" in response.text
    assert stopped == [True] and app.error == "RuntimeError: no a2a here"


def test_a_port_in_use_is_one_clear_infrastructure_error() -> None:
    from green_agent.a2a.card_first import bind
    from kernel.errors import InfrastructureError

    held = bind("127.0.0.1", 0)
    try:
        with pytest.raises(InfrastructureError, match=r"cannot listen on 127\.0\.0\.1:\d+ .*--port"):
            bind("127.0.0.1", held.getsockname()[1])
    finally:
        held.close()


def test_the_bridge_reuses_a_purples_context_id_only_when_it_is_a_plain_id() -> None:
    """The purple's context id is purple text that reaches our logs and result.json: a forged one is not taken."""
    from a2a.types import Message, Part, Role, TextPart

    from green_agent.a2a.bridge.purple_client import PurpleConversation

    conversation = PurpleConversation("http://127.0.0.1:9", turn_timeout_s=5)
    ours = conversation.context_id

    def reply(context_id: str) -> None:
        conversation._reply_of(Message(role=Role.agent, message_id="m", context_id=context_id,
                                       parts=[Part(root=TextPart(text="hi"))]))

    reply("ctx\n2026-12-01 ERROR forged log line")
    reply("x" * 5000)
    assert conversation.context_id == ours
    reply("0b7c2a9e-4f1d-4a57-9d43-2f8e6c1a3b55")
    assert conversation.context_id == "0b7c2a9e-4f1d-4a57-9d43-2f8e6c1a3b55"
