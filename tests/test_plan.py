"""The battle engine (`engine.sequencer`) against mocked endpoints: every path ends judged or infra_error, cleanup always runs.

Mocked contracts (AppWorld's env server; the gateway control API in green_agent.gateway_client;
A2A 0.3 JSON-RPC for Blue):
- env `GET /tasks/{id}` -> {"output": TaskInfo} | 500 unknown; `POST /initialize` -> {"output": TaskInfo};
  `POST /task_completed` -> {"output": bool}; `POST /execute` -> {"output": str}; `POST /save_logs`,
  `POST /close` -> {"output": null}; `POST /evaluate` -> {"output": EvaluationRecord}.
- gateway control listener (bearer secret): `PUT/DELETE /control/battle` -> {};
  `GET /control/completion` -> {"battle_id","completed","at","status"} (`mcp_gateway.models.CompletionReply`);
  `POST /control/battle/end` -> {"battle_id","ended","drained","in_flight"} (`EpisodeEndedReply`).
- Blue `GET /.well-known/agent.json` -> agent card; `POST /` message/send -> {"jsonrpc","id","result"|"error"}.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests
import responses

from green_agent.appworld_client import AppWorldClient
from kernel.errors import UnknownTaskError
from green_agent.gateway_client import GatewayClient
from green_agent.engine.config import BattleChoices, BattleConfig, BattleDeps, resolve_choices
from green_agent.engine.sequencer import STEPS, run_battle
from kernel.settings import load_settings
from kernel.world_data import WorldData

ENV, APIS, GW, BLUE = "http://127.0.0.1:18000", "http://127.0.0.1:19000", "http://127.0.0.1:20000", "http://127.0.0.1:21000"
CONTROL, CONTROL_SECRET = "http://127.0.0.1:20001", "control-secret-" + "x" * 30
TASK = "7c1a0e2_1"
TASK_INFO = {"task_id": TASK, "instruction": "Create a note.", "datetime": "2023-05-18T12:00:00",
             "supervisor": {"first_name": "Ava", "last_name": "Lopez", "email": "ava@x.com", "phone_number": "555"}}
SUCCESS = {"success": True, "difficulty": 1, "num_tests": 1, "passes": [{"requirement": "r", "label": "no_op_fail"}],
           "failures": []}
FAILURE = {"success": False, "difficulty": 1, "num_tests": 1, "passes": [],
           "failures": [{"requirement": "r", "label": "no_op_fail", "trace": "t"}]}
CARD = {"name": "stub blue", "url": BLUE + "/", "version": "1"}
REPLY = {"jsonrpc": "2.0", "id": "1", "result": {"kind": "message", "role": "agent", "messageId": "m", "parts": []}}


EPISODE_ENDED = {"battle_id": "b-1", "ended": True, "drained": True, "in_flight": 0}


def env_mocks(completed: list[bool], evaluation: dict | None = SUCCESS) -> None:
    responses.get(f"{ENV}/tasks/{TASK}", json={"output": TASK_INFO})
    responses.post(f"{ENV}/initialize", json={"output": TASK_INFO})
    for value in completed:  # answered in order, the last one repeats
        responses.post(f"{ENV}/task_completed", json={"output": value})
    responses.post(f"{ENV}/execute", json={"output": "Execution successful."})
    responses.post(f"{ENV}/save_logs", json={"output": None})
    if evaluation is not None:
        responses.post(f"{ENV}/evaluate", json={"output": evaluation})
    responses.post(f"{ENV}/close", json={"output": None})


def blue_mocks(reply: dict | None = None) -> None:
    responses.get(f"{BLUE}/.well-known/agent.json", json=CARD)
    responses.post(f"{BLUE}", json=reply or REPLY)


def setup(tmp_path: Path, gateway: bool = False, deadline_s: float = 5.0, task: str = TASK):
    settings = load_settings(appworld_root=tmp_path / "world", runs_dir=tmp_path / "runs",
                             appworld_python=tmp_path / "no-python")
    choices = resolve_choices(BattleChoices(blue="stub", predictor="none", deadline_s=deadline_s, reply_grace_s=60),
                              settings)
    config = BattleConfig(battle_id="b-1", task=f"Task description: {task}", choices=choices, blue_url=BLUE,
                          run_dir=tmp_path / "run", fallback_poll_s=0.05, authority_every_s=0.2)
    deps = BattleDeps(client=AppWorldClient(ENV, backoff_s=0.0), apis_url=APIS, settings=settings, world=None,
                      appworld_root=tmp_path / "world", gateway=GatewayClient(GW, CONTROL, CONTROL_SECRET) if gateway else None,
                      call_log_path=tmp_path / "calls.jsonl")
    return config, deps


def calls_to(path: str) -> list[responses.Call]:
    return [c for c in responses.calls if c.request.url.split("?")[0].endswith(path)]


@responses.activate
def test_winning_battle_through_the_gateway(tmp_path: Path) -> None:
    env_mocks(completed=[False, True])
    blue_mocks()
    (tmp_path / "calls.jsonl").write_text(json.dumps({"battle_id": "earlier", "tool_name": "x"}) + "\n")

    def set_battle(request: Any) -> tuple[int, dict, str]:
        """The gateway's contract: a battle's calls are appended to the shared log after it was set."""
        with open(tmp_path / "calls.jsonl", "a") as log:
            log.write(json.dumps({"battle_id": "b-1", "tool_name": "supervisor__complete_task"}) + "\n"
                      + json.dumps({"battle_id": "other", "tool_name": "x"}) + "\n")
        return 200, {}, "{}"

    responses.add_callback(responses.PUT, f"{CONTROL}/control/battle", callback=set_battle)
    responses.delete(f"{CONTROL}/control/battle", json={"cleared": "b-1", "battle": {"refused": {"wrong_token": 2}}})
    responses.get(f"{CONTROL}/control/completion", json={"battle_id": "b-1", "completed": True, "at": "2023-05-18T12:00:01Z", "status": "success"})
    responses.post(f"{CONTROL}/control/battle/end", json=EPISODE_ENDED)
    config, deps = setup(tmp_path, gateway=True)
    result = run_battle(config, deps)
    assert (result.status, result.winner, result.outcome) == ("completed", "blue_agent", "passed")
    assert result.completion is not None and result.completion.detected_via == "gateway"
    assert list(result.timings) == list(STEPS)
    put = json.loads(calls_to("/control/battle")[0].request.body)
    token = put.pop("token")
    assert put == {"battle_id": "b-1", "task_id": TASK, "scope": None, "policy": "advise", "launch_url_allowed": False,
                   "interaction": "tools", "task_datetime": "2023-05-18T12:00:00", "secrets": [], "faults": None,
                   "trial": 1, "instruction": None}
    assert len(token) >= 32 and all(c.request.headers["Authorization"] == f"Bearer {CONTROL_SECRET}"
                                    for c in responses.calls if c.request.url.startswith(CONTROL))
    message = json.loads([c for c in responses.calls if c.request.method == "POST" and c.request.url.startswith(BLUE)][0].request.body)
    text = message["params"]["message"]["parts"][0]["text"]
    assert f"AppWorld task id: {TASK}" in text and f"MCP endpoint (SSE): {GW}/b/{token}/sse" in text
    assert [json.loads(c.request.body)["code"] for c in calls_to("/execute")] == ["pass"]  # B5 before evaluate
    assert len(calls_to("/evaluate")) == 1 and len(calls_to("/close")) == 1
    assert [c.request.method for c in calls_to("/control/battle")] == ["PUT", "DELETE"]
    order = [c.request.url.split("?")[0].rsplit("/", 1)[-1] for c in responses.calls]
    assert order.index("end") < order.index("execute")  # the episode ended before the state was persisted
    assert result.cleanup is not None and result.cleanup.ok and result.cleanup.closed
    assert result.cleanup.refused_calls == {"wrong_token": 2}
    assert result.archive is not None and result.archive.call_records == 1
    saved = json.loads((tmp_path / "run" / "result.json").read_text())
    assert saved["winner"] == "blue_agent" and saved["versions"]["appworld_green"]


@responses.activate
def test_blue_that_never_completes_times_out_and_world_is_still_evaluated(tmp_path: Path) -> None:
    env_mocks(completed=[False], evaluation=FAILURE)
    blue_mocks()
    config, deps = setup(tmp_path, deadline_s=0.5)
    result = run_battle(config, deps)
    assert (result.status, result.winner, result.outcome) == ("timeout", "green_agent", "timeout")
    assert result.evaluation is not None and result.evaluation.num_tests == 1
    assert 0.5 <= result.timings["wait"] < 2.0
    assert len(calls_to("/close")) == 1


@responses.activate
def test_evaluate_failure_is_infra_error_and_closes(tmp_path: Path) -> None:
    env_mocks(completed=[True], evaluation=None)
    responses.post(f"{ENV}/evaluate", body="Internal Server Error", status=500)
    blue_mocks()
    result = run_battle(*setup(tmp_path))
    assert (result.status, result.winner, result.outcome) == ("infra_error", None, "infra_error")
    assert result.error is not None and result.error.step == "metrics" and result.error.type == "WorldChangedError"
    assert len(calls_to("/close")) == 1 and (tmp_path / "run" / "result.json").is_file()


@responses.activate
def test_env_server_down_is_infra_error_naming_the_url(tmp_path: Path) -> None:
    responses.get(f"{ENV}/tasks/{TASK}", body=requests.ConnectionError("refused"))
    responses.post(f"{ENV}/close", body=requests.ConnectionError("refused"))
    result = run_battle(*setup(tmp_path))
    assert result.status == "infra_error" and result.winner is None
    assert result.error is not None and result.error.step == "task_id" and ENV in result.error.message
    assert result.cleanup is not None and result.cleanup.closed is None  # nothing was initialized


@responses.activate
def test_setup_failure_still_tries_close(tmp_path: Path) -> None:
    responses.get(f"{ENV}/tasks/{TASK}", json={"output": TASK_INFO})
    responses.post(f"{ENV}/initialize", body="Internal Server Error", status=500)
    responses.post(f"{ENV}/close", body="Internal Server Error", status=500)  # no world opened: 500 (B1)
    result = run_battle(*setup(tmp_path))
    assert result.error is not None and result.error.step == "setup"
    assert len(calls_to("/close")) == 1 and result.cleanup is not None and result.cleanup.ok


@responses.activate
def test_unreachable_blue_is_infra_error_not_a_loss(tmp_path: Path) -> None:
    env_mocks(completed=[False])
    responses.get(f"{BLUE}/.well-known/agent.json", body=requests.ConnectionError("refused"))
    result = run_battle(*setup(tmp_path))
    assert (result.status, result.winner) == ("infra_error", None)
    assert result.error is not None and result.error.step == "dispatch" and result.error.type == "BlueUnreachableError"
    assert len(calls_to("/close")) == 1 and not calls_to("/evaluate")


@responses.activate
def test_a2a_error_reply_is_noticed_judged_and_charged_to_the_blue(tmp_path: Path) -> None:
    env_mocks(completed=[False])
    blue_mocks({"jsonrpc": "2.0", "id": "1", "error": {"code": -32603, "message": "agent crashed"}})
    result = run_battle(*setup(tmp_path, deadline_s=10))
    assert result.error is None and (result.status, result.outcome, result.winner) == ("blue_error", "blue_error",
                                                                                      "green_agent")
    assert result.blue_fault is not None and result.blue_fault.kind == "error_reply"
    assert "agent crashed" in result.blue_fault.message and result.evaluation is not None  # judged as it stands
    assert result.timings["wait"] < 2.0  # noticed at once, not at the deadline
    assert len(calls_to("/close")) == 1


@responses.activate
def test_unknown_task_raises_after_cleanup_without_initialize(tmp_path: Path) -> None:
    responses.get(f"{ENV}/tasks/zz_9", body="Internal Server Error", status=500)
    with pytest.raises(UnknownTaskError, match="zz_9"):
        run_battle(*setup(tmp_path, task="zz_9"))
    assert not calls_to("/initialize") and not calls_to("/close")


@responses.activate
def test_interrupted_battle_cleans_up_writes_an_unscored_result_and_re_raises(tmp_path: Path) -> None:
    env_mocks(completed=[], evaluation=SUCCESS)

    def ctrl_c(request: object) -> tuple[int, dict, str]:
        raise KeyboardInterrupt

    responses.add_callback(responses.POST, f"{ENV}/task_completed", callback=ctrl_c)
    blue_mocks()
    config, deps = setup(tmp_path, deadline_s=30)
    with pytest.raises(KeyboardInterrupt):
        run_battle(config, deps)
    saved = json.loads((tmp_path / "run" / "result.json").read_text())
    assert (saved["status"], saved["winner"], saved["outcome"]) == ("infra_error", None, "infra_error")
    assert saved["error"]["type"] == "Interrupted" and saved["error"]["step"] == "wait"
    assert "not scored" in saved["error"]["message"]
    assert len(calls_to("/close")) == 1 and not calls_to("/evaluate")
    assert saved["cleanup"]["closed"] is True


@responses.activate
def test_a_call_log_that_cannot_be_read_is_a_report_problem_not_a_zero_call_trajectory(tmp_path: Path) -> None:
    env_mocks(completed=[False, True])
    blue_mocks()
    responses.put(f"{CONTROL}/control/battle", json={})
    responses.delete(f"{CONTROL}/control/battle", json={})
    responses.post(f"{CONTROL}/control/battle/end", json=EPISODE_ENDED)
    responses.get(f"{CONTROL}/control/completion", json={"battle_id": "b-1", "completed": True,
                                                          "at": "2023-05-18T12:00:01Z", "status": "success"})
    (tmp_path / "calls.jsonl").mkdir()  # the configured call log is a directory
    config, deps = setup(tmp_path, gateway=True)
    result = run_battle(config, deps)
    assert result.outcome == "passed"  # the verdict is AppWorld's; the missing evidence is reported beside it
    assert result.trajectory is None and "calls.jsonl" in (result.trajectory_error or "")
    assert any("call log" in p and "not a regular file" in p for p in result.report_problems)
    assert result.archive is not None and result.archive.call_log is None


@responses.activate
def test_a_setup_failure_on_a_damaged_task_folder_names_the_fault(tmp_path: Path) -> None:
    task_dir = tmp_path / "world" / "data" / "tasks" / TASK
    task_dir.mkdir(parents=True)
    (task_dir / "specs.json").write_text(json.dumps({"instruction": "Create a note."}))  # no dbs/, no ground truth
    responses.post(f"{ENV}/initialize", body="Internal Server Error", status=500)
    responses.post(f"{ENV}/close", body="Internal Server Error", status=500)
    config, deps = setup(tmp_path)
    deps.world = WorldData(tmp_path / "world")
    result = run_battle(config, deps)
    assert result.error is not None and result.error.step == "setup"
    assert result.error.message.startswith(f"task {TASK} in the world at") and "dbs/ is missing" in result.error.message
