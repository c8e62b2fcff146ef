"""The AgentBeats glue without real processes: battle_start parsing, [appworld] config, markdown,
the backend reporter, and battle sessions driven tool by tool in any order.

Mocked contracts:
- backend `POST {backend}/battles/{id}` -> 204 (400 once the battle is finished);
- env server: `GET /tasks/{id}` -> {"output": TaskInfo}; `POST /initialize`
  -> {"output": TaskInfo}; `POST /task_completed` -> {"output": bool}; `POST /execute` -> {"output": str};
  `POST /save_logs`, `POST /close` -> {"output": null}; `POST /evaluate` -> {"output": EvaluationRecord};
- Blue (A2A 0.3): `GET /.well-known/agent.json` -> card; `POST /` message/send -> JSON-RPC result.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
import requests
import responses

from green_agent.runtime.slot import SLOT_LOCK_DIR, SlotUrls, WorldSlot
from green_agent.agentbeats import executor_hook, registry
from green_agent.agentbeats.battle_start import parse_battle_start
from green_agent.agentbeats.result_post import render_markdown
from green_agent.agentbeats.reporter import BackendReporter
from green_agent.agentbeats.scenario_config import load_scenario_config, resolve
from kernel.errors import BadInputError, InfrastructureError
from green_agent.models.result import BattleResult, EvaluationRecord, EvalTestRecord, VersionsRecord
from kernel.settings import SCENARIO_DIR, load_settings

BACKEND, ENV, APIS, BLUE = "http://127.0.0.1:18002", "http://127.0.0.1:18000", "http://127.0.0.1:19000", "http://127.0.0.1:21000"
TASK = "7c1a0e2_1"
TASK_INFO = {"task_id": TASK, "instruction": "Create a note.", "datetime": "2023-05-18T12:00:00",
             "supervisor": {"first_name": "Ava", "last_name": "Lopez", "email": "ava@x.com", "phone_number": "555"}}
SUCCESS = {"success": True, "difficulty": 1, "num_tests": 1, "passes": [{"requirement": "r", "label": "no_op_fail"}],
           "failures": []}


def start_message(battle_id: str = "b-1", task_config: str = "", **changes: object) -> str:
    message = {"type": "battle_start", "battle_id": battle_id,
               "green_battle_context": {"battle_id": battle_id, "backend_url": BACKEND, "agent_name": "AppWorld Green",
                                        "task_config": task_config},
               "red_battle_contexts": {BLUE: {"battle_id": battle_id}},
               "opponent_infos": [{"name": "blue_agent", "agent_url": BLUE}]}
    message.update(changes)
    return json.dumps(message)


# --- battle_start -----------------------------------------------------------------------------

def test_battle_start_parses_and_strips_the_task_description_prefix() -> None:
    start = parse_battle_start(start_message(task_config="Task description: 7c1a0e2_1"))
    assert (start.battle_id, start.backend_url, start.blue.agent_url, start.task_config) == ("b-1", BACKEND, BLUE, TASK)
    assert parse_battle_start(start_message(task_config="")).task_config is None
    assert parse_battle_start(start_message(task_config="Task description: ")).task_config is None


@pytest.mark.parametrize("text, expected", [
    ("not json at all", "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    (json.dumps({"type": "battle_start", "battle_id": "b"}), "green_battle_context: Field required"),
    (start_message(opponent_infos="http://x"), "opponent_infos: Input should be a valid list"),
    (start_message(opponent_infos=[]), "opponent_infos: List should have at least 1 item"),
    (start_message(battle_id=7), "battle_id: Input should be a valid string"),
    (start_message(opponent_infos=[{"name": "b", "agent_url": "file:///etc/passwd"}]), "not an http(s) URL"),
    ("{" + " " * 300_000 + "}", "too large"),
])
def test_malformed_battle_start_is_refused_with_a_clear_message(text: str, expected: str) -> None:
    with pytest.raises(BadInputError) as info:
        parse_battle_start(text)
    assert expected in str(info.value)
    assert len(str(info.value)) < 400


# --- [appworld] config ------------------------------------------------------------------------

def test_scenario_config_reads_the_table_and_battle_start_wins(tmp_path: Path) -> None:
    path = tmp_path / "scenario.toml"
    path.write_text('[scenario]\nname = "x"\n[appworld]\ntask = 3\nsplit = "dev"\ngreen_mode = "deterministic"\n'
                    'runs_dir = "runs"\ndeadline_s = 90\n')
    config = load_scenario_config(path)
    assert config.task == "3" and config.runs_dir == tmp_path / "runs"
    settings = load_settings()
    resolved = resolve(config, settings, None, blue="b")
    assert (resolved.task, resolved.task_source, resolved.choices.deadline_s, resolved.green_mode) == (
        "3", "scenario", 90, "deterministic")
    assert resolved.choices.predictor is None  # the Settings default is filled by build_battle, like every driver's
    assert resolve(config, settings, TASK, blue="b").task == TASK
    assert resolve(config, settings, TASK, blue="b").task_source == "battle_start"


@pytest.mark.parametrize("table, expected", [
    ('green_mod = "llm"', "green_mod: Extra inputs are not permitted"),
    ('green_mode = "fast"', "green_mode: Input should be 'llm' or 'deterministic'"),
    ("deadline_s = -1", "deadline_s: Input should be greater than 0"),
])
def test_scenario_config_typos_are_refused(tmp_path: Path, table: str, expected: str) -> None:
    path = tmp_path / "scenario.toml"
    path.write_text(f"[appworld]\n{table}\n")
    with pytest.raises(BadInputError) as info:
        load_scenario_config(path)
    assert expected in str(info.value) and str(path) in str(info.value)


def test_shipped_scenarios_have_valid_tables_and_matching_card_ports() -> None:
    import tomllib

    for directory in (SCENARIO_DIR, SCENARIO_DIR / "offline"):
        data = tomllib.loads((directory / "scenario.toml").read_text())
        load_scenario_config(directory / "scenario.toml")
        green = [a for a in data["agents"] if a.get("is_green")]
        assert len(green) == 1 and green[0]["battle_timeout"] > data["appworld"]["deadline_s"]
        for agent in data["agents"]:
            card = tomllib.loads((directory / agent["card"]).read_text())
            assert card["url"] == f"http://127.0.0.1:{agent['agent_port']}/", agent["name"]
            for tool in agent.get("tools", []):
                assert (directory / tool).is_file()


# --- markdown + reporter ----------------------------------------------------------------------

def sample_result(winner: str | None = "blue_agent") -> BattleResult:
    return BattleResult(
        battle_id="b-1", task_id=TASK, blue=BLUE, status="completed" if winner else "infra_error", winner=winner,
        outcome="passed" if winner else "infra_error", reason="1/1 tests | passed",
        evaluation=EvaluationRecord(success=True, num_tests=1, passes=[EvalTestRecord(requirement="note exists")]),
        timings={"setup": 0.5, "wait": 2.0}, versions=VersionsRecord(appworld_green="0.1.0"),
        started_at=datetime(2025, 1, 1, tzinfo=timezone.utc), finished_at=datetime(2025, 1, 1, 0, 1, tzinfo=timezone.utc))


def test_markdown_summary_opens_with_the_verdict() -> None:
    text = render_markdown(sample_result())
    assert text.startswith("**Blue wins**: every requirement of the task is met") and "• **Tests:** 1 of 1 tests passed" in text
    assert "• 2 setup: 0.50 s" in text and "• **Duration:** 60.0 s" in text


@responses.activate
def test_reporter_posts_progress_and_one_result() -> None:
    responses.post(f"{BACKEND}/battles/b-1", status=204)
    reporter = BackendReporter("b-1", BACKEND)
    assert reporter.progress("Step 1: task id", {"task_id": TASK})
    reporter.report(sample_result())
    reporter.report(sample_result())  # a model retry: not posted again
    bodies = [json.loads(c.request.body) for c in responses.calls]
    assert [b["is_result"] for b in bodies] == [False, True]
    result = bodies[1]
    assert result["winner"] == "blue_agent" and result["reported_by"] == "Blue won"
    assert result["detail"]["tests_passed"] == "1/1" and "• **Tests:** 1 of 1 tests passed" in result["markdown_content"]
    assert result["message"].splitlines()[:2] == ["Blue wins: every requirement of the task is met.", f"Task {TASK}: (instruction not recorded)"]
    assert result["timestamp"].endswith("Z")


@responses.activate
def test_reporter_draw_for_infra_error_and_clear_error_when_refused() -> None:
    responses.post(f"{BACKEND}/battles/b-1", status=400, json={"detail": "not in a valid state: finished"})
    reporter = BackendReporter("b-1", BACKEND)
    assert reporter.progress("x") is False  # progress never raises
    with pytest.raises(InfrastructureError, match="already finished"):
        reporter.report(sample_result(winner=None))
    assert json.loads(responses.calls[-1].request.body)["winner"] == "draw"
    assert not reporter.result_posted


# --- sessions: the tools in any order ---------------------------------------------------------

def env_mocks(completed: bool = True) -> None:
    responses.get(f"{ENV}/tasks/{TASK}", json={"output": TASK_INFO})
    responses.post(f"{ENV}/initialize", json={"output": TASK_INFO})
    responses.post(f"{ENV}/task_completed", json={"output": completed})
    responses.post(f"{ENV}/execute", json={"output": "Execution successful."})
    responses.post(f"{ENV}/save_logs", json={"output": None})
    responses.post(f"{ENV}/evaluate", json={"output": SUCCESS})
    responses.post(f"{ENV}/close", json={"output": None})
    responses.get(f"{BLUE}/.well-known/agent.json", json={"name": "stub blue", "url": BLUE + "/", "version": "1"})
    responses.post(BLUE, json={"jsonrpc": "2.0", "id": "1", "result": {"kind": "message", "parts": []}})
    responses.post(f"{BACKEND}/battles/b-1", status=204)


def calls(method: str, prefix: str) -> list[responses.Call]:
    return [c for c in responses.calls if c.request.method == method and c.request.url.rstrip("/").startswith(prefix)]


@pytest.fixture
def scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    registry.clear()
    (tmp_path / "scenario.toml").write_text(
        f'[appworld]\ntask = "{TASK}"\npredictor = "none"\ndeadline_s = 5\nenv_url = "{ENV}"\napis_url = "{APIS}"\n'
        f'gateway_url = ""\nruns_dir = "runs"\nreply_grace_s = 30\ngreen_mode = "llm"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("APPWORLD_ROOT", str(tmp_path / "no-world"))
    monkeypatch.setenv("APPWORLD_PYTHON", str(tmp_path / "no-python"))
    monkeypatch.setenv("RUNS_DIR", str(tmp_path / "runs"))
    yield tmp_path
    registry.clear()


def load_tools() -> dict:
    spec = importlib.util.spec_from_file_location("orchestration_tools", SCENARIO_DIR / "green_agent" / "orchestration_tools.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@responses.activate
def test_tools_are_idempotent_and_report_first_runs_the_plan(scenario: Path) -> None:
    env_mocks()
    tools = load_tools()
    registry.open_session(parse_battle_start(start_message()))
    report = json.loads(asyncio.run(tools.report_battle_result("b-1")))
    assert report["ok"] and report["posted"] and report["winner"] == "blue_agent"
    again = [json.loads(asyncio.run(f("b-1"))) for f in (tools.dispatch_task_to_blue, tools.report_battle_result,
                                                         tools.run_appworld_evaluator)]
    assert all(out["repeated"] for out in again)
    assert json.loads(asyncio.run(tools.get_complete_task_metrics("")))["winner"] == "blue_agent"
    closed = json.loads(asyncio.run(tools.close_appworld_environment("b-1")))
    assert closed["ok"] and json.loads(asyncio.run(tools.close_appworld_environment("b-1")))["repeated"]
    assert len(calls("POST", BLUE)) == 1 and len(calls("POST", f"{ENV}/evaluate")) == 1
    assert len(calls("POST", f"{ENV}/close")) == 1
    events = [json.loads(c.request.body) for c in calls("POST", f"{BACKEND}/battles/b-1")]
    assert [e["winner"] for e in events if e["is_result"]] == ["blue_agent"]
    # steps up to the wait report themselves, the result summarizes the rest; nothing is posted after the result
    assert [e["message"].split(":")[0] for e in events if e["message"].startswith("Step ")] == [f"Step {k}" for k in range(1, 7)]
    assert events[-1]["is_result"]
    assert "• **Cleanup:** ok" in events[-1]["markdown_content"]  # the posted result includes the cleanup
    saved = json.loads((scenario / "runs" / "b-1" / "result.json").read_text())
    assert saved["winner"] == "blue_agent" and saved["cleanup"]["closed"] is True
    unknown = json.loads(asyncio.run(tools.setup_appworld_environment("nope")))
    assert not unknown["ok"] and "b-1" in unknown["error"]


@responses.activate
def test_unknown_task_is_a_draw_without_touching_the_world(scenario: Path) -> None:
    env_mocks()
    session = registry.open_session(parse_battle_start(start_message(task_config="Task description: ../../etc/passwd")))
    summary = session.run_all()
    assert summary["bad_input"] and "invalid task id" in summary["bad_input"]
    assert not calls("POST", f"{ENV}/initialize") and not calls("POST", BLUE)
    events = [json.loads(c.request.body) for c in calls("POST", f"{BACKEND}/battles/b-1")]
    assert [e["winner"] for e in events if e["is_result"]] == ["draw"]
    assert events[-1]["is_result"] and "invalid task id" in events[-1]["detail"]["error"]


@responses.activate
def test_env_server_down_is_a_draw_and_blue_is_never_contacted(scenario: Path) -> None:
    responses.get(f"{ENV}/tasks/{TASK}", body=requests.ConnectionError("refused"))
    responses.post(f"{BACKEND}/battles/b-1", status=204)
    session = registry.open_session(parse_battle_start(start_message()))
    session.battle.deps.client.backoff_s = 0.0
    summary = session.run_all()
    assert (summary["status"], summary["winner"]) == ("infra_error", "draw")
    assert not calls("POST", BLUE)
    final = [json.loads(c.request.body) for c in calls("POST", f"{BACKEND}/battles/b-1")]
    assert [e["winner"] for e in final if e["is_result"]] == ["draw"]
    assert any("FAILED" in e["message"] for e in final)


# --- executor hook ----------------------------------------------------------------------------

def test_hook_answers_a_malformed_battle_start_with_an_error() -> None:
    async def model() -> str:
        raise AssertionError("the model must not run")

    reply = asyncio.run(executor_hook.on_battle_start('{"type": "battle_start", "battle_id": 3}', model))
    assert reply.startswith("Error: invalid battle_start") and "battle_id" in reply


@responses.activate
def test_a_gateway_slot_that_is_not_up_is_a_draw_not_a_crash(scenario: Path) -> None:
    # a gateway URL whose slot has no credentials here (nobody ran `world up`): reported, never a loss
    responses.post(f"{BACKEND}/battles/b-1", json={})
    text = (scenario / "scenario.toml").read_text().replace('gateway_url = ""', 'gateway_url = "http://127.0.0.1:1"')
    (scenario / "scenario.toml").write_text(text)

    async def model() -> str:
        raise AssertionError("the model must not run")

    reply = asyncio.run(executor_hook.on_battle_start(start_message(), model))
    assert reply.startswith("Battle not run:") and "world up" in reply
    final = [json.loads(c.request.body) for c in calls("POST", f"{BACKEND}/battles/b-1")]
    assert [e["winner"] for e in final if e["is_result"]] == ["draw"]
    assert not calls("POST", BLUE)


@responses.activate
def test_deterministic_mode_never_runs_the_model(scenario: Path) -> None:
    env_mocks()
    text = (scenario / "scenario.toml").read_text().replace('green_mode = "llm"', 'green_mode = "deterministic"')
    (scenario / "scenario.toml").write_text(text)

    async def model() -> str:
        raise AssertionError("the model must not run in deterministic mode")

    reply = asyncio.run(executor_hook.on_battle_start(start_message(), model))
    assert "winner blue_agent" in reply and not reply.startswith("Error")
    assert len(calls("POST", BLUE)) == 1


@responses.activate
def test_llm_mode_finishes_what_the_model_left_undone(scenario: Path) -> None:
    env_mocks()
    tools = load_tools()

    async def model() -> str:  # a model that dispatches, then gives up
        await tools.setup_appworld_environment("b-1")
        await tools.dispatch_task_to_blue("b-1")
        raise RuntimeError("MaxTurnsExceeded")

    reply = asyncio.run(executor_hook.on_battle_start(start_message(), model))
    assert "winner blue_agent" in reply and not reply.startswith("Error")
    assert len(calls("POST", BLUE)) == 1 and len(calls("POST", f"{ENV}/close")) == 1
    events = [json.loads(c.request.body) for c in calls("POST", f"{BACKEND}/battles/b-1")]
    assert any("model stopped" in e["message"] for e in events) and events[-1]["is_result"]


@responses.activate
def test_a_slot_held_by_a_cli_battle_is_an_infra_error_not_a_loss(scenario: Path) -> None:
    env_mocks()
    session = registry.open_session(parse_battle_start(start_message()))
    # the lock `appworld-green battle`/`eval` take when attached to the same env server (WorldSlot.attach)
    holder = WorldSlot.attach(SlotUrls(env_url=ENV, apis_url=APIS, gateway_url=None), lock_dir=SLOT_LOCK_DIR).lock
    assert holder.path == session.slot_lock.path  # one machine-wide lock directory for every driver
    holder.acquire()
    try:
        summary = session.run_all()
    finally:
        holder.release()
    assert (summary["status"], summary["winner"]) == ("infra_error", "draw")
    assert not calls("POST", f"{ENV}/initialize") and not calls("POST", BLUE)
    assert session.battle.build_result().error.type == "SlotBusyError"


def test_compat_start_battle_waits_for_agent_cards() -> None:
    """The compat layer's readiness wait (run_scenario otherwise registers after a blind 10 s sleep)."""
    from green_agent.agentbeats_compat.hook import wait_for_agent_cards

    class FakeRequests:  # stands for `requests.get(card_url)`: refused twice, then 200
        answers = [requests.ConnectionError("refused"), requests.ConnectionError("refused")]

        def get(self, url: str, timeout: float) -> object:
            if self.answers:
                raise self.answers.pop()
            return type("R", (), {"status_code": 200})()

    assert wait_for_agent_cards(FakeRequests(), [("127.0.0.1", 1)], timeout_s=5, poll_s=0.01)
    assert not wait_for_agent_cards(type("Down", (), {"get": lambda self, url, timeout: 1 / 0})(), [("0.0.0.0", 1)],
                                    timeout_s=0.05, poll_s=0.01)


def test_shipped_agent_names_fit_a_chip_of_the_web_ui() -> None:
    """Every name a shipped card or scenario file gives an agent is <= 20 characters (the UI's chips cut longer ones)."""
    import tomllib
    root = Path(__file__).resolve().parents[1] / "scenarios" / "appworld"
    names: list[str] = []
    for path in [*root.rglob("*card.toml"), *root.rglob("scenario.toml")]:
        data = tomllib.loads(path.read_text())
        names += [data["name"]] if "name" in data and path.name.endswith("card.toml") else []
        names += [agent["name"] for agent in data.get("agents", [])]
    assert names and all(len(name) <= 20 for name in names), [n for n in names if len(n) > 20]
