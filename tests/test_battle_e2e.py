"""Battles end to end on real AppWorld servers, the real MCP gateway and real A2A Blues.

One world slot (APIs + env server + gateway on free ports) is shared by the module. Blues:
the shipped reference and no-op Blues (started by the builder), and stub A2A servers built here
with a2a-sdk 0.3.6: `idle` accepts the task and never completes it; `env_solver` solves the task
by POSTing the reference solution to the env server's /execute (bypassing the gateway, so
completion is seen through the /task_completed poll). After every battle the env server must
have no open world any more (/close was called): /task_completed for the task answers 500.
"""

from __future__ import annotations

import asyncio
import json
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentSkill
from a2a.utils import new_agent_text_message

from green_agent.models.result import BattleResult
from green_agent.engine.config import BattleChoices
from green_agent.runtime.slot_clients import slot_env_client
from green_agent.steps.archive import outputs_path
from green_agent.local_battle import open_blue, run_on_slot
from green_agent.cli import main
from kernel.errors import WrongActiveTaskError
from kernel.ports import free_port
from kernel.settings import Settings, load_settings
from green_agent.runtime.slot import SlotSpec, SlotUrls, WorldSlot
from kernel.task_message import parse_task_message
from kernel.world_data import WorldData

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def e2e_settings(tmp_path_factory: pytest.TempPathFactory, appworld_root: Path) -> Settings:
    tmp = tmp_path_factory.mktemp("battle-e2e")
    return load_settings().model_copy(update={"appworld_root": appworld_root, "runs_dir": tmp / "runs", "default_split": "dev",
                                   "agentbeats_mcp_log_path": tmp / "calls.jsonl", "openai_api_key": None})


@pytest.fixture(scope="module")
def slot(e2e_settings: Settings) -> Iterator[SlotUrls]:
    spec = SlotSpec(env_port=free_port(), apis_port=free_port(), gateway_port=free_port())
    runs = e2e_settings.runs_dir
    with WorldSlot(spec, appworld_root=e2e_settings.appworld_root, appworld_python=e2e_settings.appworld_python,
                   log_dir=runs / "slot-logs", mcp_log_path=e2e_settings.agentbeats_mcp_log_path,
                   lock_dir=runs / ".slot-locks") as world_slot:
        yield world_slot.urls


@pytest.fixture(scope="module")
def task_id(e2e_settings: Settings) -> str:
    """A non-question task (its reference solution changes state): the first of the split."""
    return WorldData(e2e_settings.appworld_root).split(e2e_settings.default_split)[0]


class StubBlue(AgentExecutor):
    """A2A executor: `idle` never completes; `env_solver` tries to run the reference solution through the env
    server's /execute, bypassing the gateway (the env server is guarded: it records the status it got)."""

    def __init__(self, mode: str, env_url: str, world: WorldData) -> None:
        self.mode, self.env_url, self.world = mode, env_url, world
        self.statuses: list[int] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        if self.mode == "env_solver":
            task_id = parse_task_message(text).task_id
            code = self.world.solution_source(task_id) + "\nsolution(apis, requester)\n"
            for path, body in (("/execute", {"task_id": task_id, "code": code}),
                               ("/task_completed", {"task_id": task_id})):
                reply = await asyncio.to_thread(requests.post, f"{self.env_url}{path}", json=body, timeout=60)
                self.statuses.append(reply.status_code)
        await event_queue.enqueue_event(new_agent_text_message(f"{self.mode} blue done"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


@pytest.fixture(scope="module")
def stub_blue(slot: SlotUrls, e2e_settings: Settings) -> Iterator[dict[str, Any]]:
    """Two stub Blues on free ports, served in-process by uvicorn (URL by mode, and `executors`); stopped at teardown."""
    servers, urls, executors = [], {}, {}
    world = WorldData(e2e_settings.appworld_root)
    for mode in ("idle", "env_solver"):
        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        card = AgentCard(name=f"stub {mode} blue", description="test Blue", url=url, version="0",
                         capabilities=AgentCapabilities(), default_input_modes=["text"], default_output_modes=["text"],
                         skills=[AgentSkill(id=mode, name=mode, description=mode, tags=["test"])])
        executors[mode] = StubBlue(mode, slot.env_url, world)
        handler = DefaultRequestHandler(agent_executor=executors[mode], task_store=InMemoryTaskStore())
        app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        servers.append((server, thread))
        urls[mode] = url.rstrip("/")
    try:
        for url in urls.values():
            _wait_for(f"{url}/.well-known/agent.json")
        yield {**urls, "executors": executors}
    finally:
        for server, thread in servers:
            server.should_exit = True
            thread.join(timeout=10)


def _wait_for(url: str, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=1)
            return
        except requests.RequestException:
            time.sleep(0.05)
    raise AssertionError(f"{url} never answered")


def _assert_closed(slot: SlotUrls, task_id: str) -> None:
    """/close was called: the env server has no world for the task (0.1.3 answers 500, B1)."""
    with pytest.raises(WrongActiveTaskError):
        slot_env_client(slot.env_url, slot.apis_url).task_completed(task_id)


def _battle(settings: Settings, slot: SlotUrls, task_id: str, blue: str, blue_url: str, name: str,
            predictor: str = "ground_truth", deadline_s: float = 60):
    choices = BattleChoices(blue=blue, predictor=predictor, deadline_s=deadline_s)
    return run_on_slot(task_id, choices, settings, slot, blue_url, settings.runs_dir / name, f"e2e-{name}")


def test_reference_blue_wins(e2e_settings: Settings, slot: SlotUrls, task_id: str) -> None:
    with open_blue("reference", e2e_settings, slot, e2e_settings.runs_dir / "blue-logs") as blue_url:
        result = _battle(e2e_settings, slot, task_id, "reference", blue_url, "reference")
    assert (result.status, result.winner, result.outcome) == ("completed", "blue_agent", "passed"), result.reason
    assert result.evaluation is not None and result.evaluation.success
    assert result.completion is not None and result.completion.detected_via == "gateway"
    assert result.completion.detection_latency_s is not None and result.completion.detection_latency_s < 0.5
    assert result.trajectory is not None and result.trajectory.total_calls >= 2
    assert result.scope is not None and result.scope.predictor == "ground_truth" and result.scope.recall == 1.0
    assert len(result.timings) == 11 and result.cleanup is not None and result.cleanup.ok
    assert result.versions.appworld and result.versions.appworld.startswith("0.1.3")
    run_dir = Path(result.run_dir or "")
    assert (run_dir / "result.json").is_file() and (run_dir / "appworld" / "dbs").is_dir()
    assert (run_dir / "mcp_calls.jsonl").read_text().count('"battle_id":"e2e-reference"') == result.trajectory.total_calls
    _assert_no_world_passwords(e2e_settings, result.experiment_name or "", task_id, run_dir)
    _assert_closed(slot, task_id)


def _assert_no_world_passwords(settings: Settings, experiment: str, task_id: str, run_dir: Path) -> None:
    """The supervisor's account passwords (from AppWorld's own outputs) appear nowhere in the run directory."""
    source = outputs_path(settings.appworld_root, experiment, task_id) / "dbs" / "supervisor.jsonl"
    passwords = [json.loads(line)[1][-1] for line in source.read_text().splitlines() if "account_passwords" in line]
    assert passwords, "expected the task DB to seed account passwords"
    for path in run_dir.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert not [p for p in passwords if p in text], f"password leaked into {path}"


def test_noop_blue_loses_with_failed(e2e_settings: Settings, slot: SlotUrls, task_id: str) -> None:
    with open_blue("noop", e2e_settings, slot, e2e_settings.runs_dir / "blue-logs") as blue_url:
        result = _battle(e2e_settings, slot, task_id, "noop", blue_url, "noop", predictor="lexical")
    assert (result.status, result.winner, result.outcome) == ("completed", "green_agent", "failed"), result.reason
    assert result.evaluation is not None and not result.evaluation.success
    on_disk = BattleResult.model_validate_json((Path(result.run_dir) / "result.json").read_text())
    assert on_disk.explanation is not None and on_disk.explanation.headline.startswith("Green wins")
    assert len(on_disk.explanation.failed_requirements) == len(result.evaluation.failures) > 0  # what the CLI prints
    _assert_closed(slot, task_id)


def test_the_noop_battles_only_call_is_call_1_on_a_slot_that_served_others(
        e2e_settings: Settings, slot: SlotUrls, task_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The gateway numbers every call of its process (`seq`); the page and the terminal number the battle's own."""
    with open_blue("noop", e2e_settings, slot, e2e_settings.runs_dir / "blue-logs") as blue_url:
        _battle(e2e_settings, slot, task_id, "noop", blue_url, "noop-before", predictor="lexical")
        result = _battle(e2e_settings, slot, task_id, "noop", blue_url, "noop-after", predictor="lexical")
    run_dir = Path(result.run_dir or "")
    [call] = [json.loads(line) for line in (run_dir / "mcp_calls.jsonl").read_text().splitlines()]
    assert call["seq"] >= 2  # the slot's gateway served the battle before
    page = (run_dir / "trace.html").read_text()
    assert page.count("Call #") == 1 and "Call #1 <code>supervisor__complete_task</code>" in page
    capsys.readouterr()
    assert main(["--env-file", "/dev/null", "trace", str(run_dir)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("call #") == 1 and "call #1 supervisor__complete_task" in printed


def test_blue_cannot_solve_through_the_env_server(e2e_settings: Settings, slot: SlotUrls, task_id: str,
                                                 stub_blue: dict[str, Any]) -> None:
    """The env server is guarded: a Blue that knows its port and paths gets 404 and changes nothing."""
    result = _battle(e2e_settings, slot, task_id, "env_solver", stub_blue["env_solver"], "env-solver",
                     predictor="none", deadline_s=5)
    assert stub_blue["executors"]["env_solver"].statuses == [404, 404]
    assert (result.status, result.winner) == ("timeout", "green_agent"), result.reason
    assert result.evaluation is not None and not result.evaluation.success  # the world was not touched
    _assert_closed(slot, task_id)


def test_blue_that_never_completes_times_out(e2e_settings: Settings, slot: SlotUrls, task_id: str,
                                             stub_blue: dict[str, str]) -> None:
    started = time.monotonic()
    result = _battle(e2e_settings, slot, task_id, "idle", stub_blue["idle"], "idle", deadline_s=5)
    assert (result.status, result.winner, result.outcome) == ("timeout", "green_agent", "timeout")
    assert result.evaluation is not None  # the world is still evaluated
    assert 5 <= result.timings["wait"] < 8 and time.monotonic() - started < 30
    _assert_closed(slot, task_id)


def _cli(argv: list[str], settings: Settings, monkeypatch: pytest.MonkeyPatch) -> int:
    for key, value in {"APPWORLD_ROOT": settings.appworld_root, "RUNS_DIR": settings.runs_dir,
                       "DEFAULT_SPLIT": settings.default_split,
                       "AGENTBEATS_MCP_LOG_PATH": settings.agentbeats_mcp_log_path}.items():
        monkeypatch.setenv(key, str(value))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    previous = signal.getsignal(signal.SIGTERM)
    try:
        return main(["--env-file", "/dev/null", *argv])
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_stopped_env_server_is_infra_error_exit_3(e2e_settings: Settings, task_id: str, stub_blue: dict[str, str],
                                                  monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens: the env server is stopped
    code = _cli(["battle", "--task-id", task_id, "--blue", stub_blue["idle"], "--env-url", dead, "--apis-url", dead,
                 "--out", str(tmp_path / "run"), "--deadline", "5"], e2e_settings, monkeypatch)
    assert code == 3
    saved = json.loads((tmp_path / "run" / "result.json").read_text())
    assert (saved["status"], saved["winner"], saved["outcome"]) == ("infra_error", None, "infra_error")
    assert saved["error"]["step"] == "setup" and dead in saved["error"]["message"]
    assert saved["cleanup"]["closed"] is not True  # close was attempted against the dead server


def test_unknown_task_id_exit_2_names_the_id(e2e_settings: Settings, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code = _cli(["battle", "--task-id", "zzz9999_7", "--blue", "http://127.0.0.1:9"], e2e_settings, monkeypatch)
    assert code == 2 and "zzz9999_7" in capsys.readouterr().err
    code = _cli(["battle", "--task-id", "../../etc/passwd", "--blue", "noop"], e2e_settings, monkeypatch)
    assert code == 2 and "invalid task id" in capsys.readouterr().err
