"""Fault injection on the Blue side, the backend reporter, and slot sharing, on one healthy slot.

Blues are real A2A servers (the offline Blues' a2a-sdk wiring) running a test handler:
- unreachable: a free port nobody listens on;
- A2A error: a valid agent card, every `message/send` answered with a JSON-RPC error object (the Blue's
  own fault after it was given the task: judged and charged);
- idle: accepts the task and never calls `complete_task` (holds the request a while);
- flood: hundreds of concurrent MCP `tools/call`s through the gateway (forwarded, unknown-tool and
  invalid-argument calls mixed), then `complete_task`;
- completer: completes the task through the env server's `/execute`.
The AgentBeats backend is the real `BackendReporter` posting to a dead loopback port.
"""

from __future__ import annotations

import asyncio
import json
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from faults_support import (MCP_HEADERS, InProcessServer, a2a_error_app, answers, assert_no_open_world, blue_server,
                            complete_through_gateway, mcp_call, wait_until)
from green_agent.engine.config import BattleChoices
from green_agent.agentbeats.reporter import BackendReporter
from green_agent.local_battle import BattleRequest, run_battle_request, run_on_slot
from green_agent.cli import main
from kernel.errors import SlotBusyError
from green_agent.models.result import BattleResult
from kernel.ports import free_port
from kernel.settings import Settings
from green_agent.runtime.slot import WorldSlot
from kernel.task_message import parse_task_message

pytest_plugins = ["faults_support"]
pytestmark = pytest.mark.e2e
FLOOD_CALLS = 600
FLOOD_CONCURRENCY = 16
_idle_started = threading.Event()
_tool_call = mcp_call


FLOOD_MIX = (("supervisor__show_profile", {}), ("nope__not_a_tool", {}),
             ("supervisor__show_profile", {"no_such_argument": 1}))
"""Forwarded to the APIs server; refused as unknown (out of scope); refused by the schema."""


async def _flood(mcp_url: str) -> int:
    sem = asyncio.Semaphore(FLOOD_CONCURRENCY)
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=FLOOD_CONCURRENCY)) as client:
        async def one(i: int) -> int:
            name, arguments = FLOOD_MIX[i % len(FLOOD_MIX)]
            async with sem:
                reply = await client.post(mcp_url, json=_tool_call(i, name, arguments), headers=MCP_HEADERS)
            return reply.status_code

        codes = await asyncio.gather(*(one(i) for i in range(FLOOD_CALLS)))
        done = await client.post(mcp_url, json=_tool_call(FLOOD_CALLS, "supervisor__complete_task", {}),
                                 headers=MCP_HEADERS)
    return sum(code == 200 for code in codes) + (done.status_code == 200)


@pytest.fixture(scope="module")
def blues(shared_slot: WorldSlot) -> Iterator[dict[str, str]]:
    flood_stats: dict[str, float] = {}

    async def idle(text: str) -> str:
        _idle_started.set()
        await asyncio.sleep(6)
        return "still thinking"

    async def flood(text: str) -> str:
        started = time.monotonic()
        flood_stats["answered"] = await _flood(parse_task_message(text).mcp_url)
        flood_stats["seconds"] = time.monotonic() - started
        return "flooded"

    async def completer(text: str) -> str:
        await asyncio.to_thread(complete_through_gateway, text)
        return "done"

    servers = {"idle": blue_server("idle blue", idle), "flood": blue_server("flood blue", flood),
               "completer": blue_server("completer blue", completer), "a2a_error": InProcessServer(a2a_error_app())}
    for server in servers.values():
        server.__enter__()
    try:
        urls = {name: server.url for name, server in servers.items()}
        urls["_flood_stats"] = flood_stats  # type: ignore[assignment]
        yield urls
    finally:
        for server in servers.values():
            server.__exit__(None, None, None)


def _battle(env: Settings, slot: WorldSlot, task_id: str, blue_url: str, name: str, deadline_s: float = 30,
            reporters: list | None = None) -> BattleResult:
    choices = BattleChoices(blue=name, predictor="none", deadline_s=deadline_s)
    return run_on_slot(task_id, choices, env, slot.urls, blue_url, env.runs_dir / name, f"blue-fault-{name}", reporters)


def _saved(result: BattleResult) -> dict:
    return json.loads((Path(result.run_dir or "") / "result.json").read_text())


def test_unreachable_blue_is_infra_error_and_the_world_is_closed(shared_env: Settings, shared_slot: WorldSlot,
                                                                 shared_task: str) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    result = _battle(shared_env, shared_slot, shared_task, dead, "unreachable")
    assert (result.status, result.winner, result.outcome) == ("infra_error", None, "infra_error")
    assert result.error is not None and result.error.step == "dispatch" and dead in result.error.message
    assert "unreachable" in result.error.message
    assert result.cleanup is not None and result.cleanup.ok and result.cleanup.closed is True
    assert _saved(result)["status"] == "infra_error"
    assert_no_open_world(shared_slot.urls, shared_task)


def test_blue_answering_with_an_a2a_error_is_judged_and_charged(shared_env: Settings, shared_slot: WorldSlot,
                                                                shared_task: str, blues: dict[str, str]) -> None:
    result = _battle(shared_env, shared_slot, shared_task, blues["a2a_error"], "a2a-error")
    assert (result.status, result.winner, result.outcome) == ("blue_error", "green_agent", "blue_error")
    assert result.error is None and result.blue_fault is not None and result.blue_fault.kind == "error_reply"
    assert "A2A error -32603" in result.blue_fault.message and "the blue exploded" in result.blue_fault.message
    assert result.evaluation is not None  # judged on the world as it stands
    assert result.timings["wait"] < 10  # noticed when the error arrived, not at the deadline
    assert result.cleanup is not None and result.cleanup.closed is True
    assert_no_open_world(shared_slot.urls, shared_task)


def test_blue_that_never_completes_times_out_and_the_world_is_still_evaluated(
        shared_env: Settings, shared_slot: WorldSlot, shared_task: str, blues: dict[str, str]) -> None:
    result = _battle(shared_env, shared_slot, shared_task, blues["idle"], "idle", deadline_s=4)
    assert (result.status, result.winner, result.outcome) == ("timeout", "green_agent", "timeout")
    assert result.completion is not None and result.completion.ended_by == "deadline"
    assert 4 <= result.completion.waited_s < 7
    assert result.evaluation is not None and not result.evaluation.success
    assert _saved(result)["evaluation"]["num_tests"] == result.evaluation.num_tests
    assert_no_open_world(shared_slot.urls, shared_task)


def test_flooding_blue_leaves_an_intact_log_and_exact_counts(shared_env: Settings, shared_slot: WorldSlot,
                                                            shared_task: str, blues: dict[str, str]) -> None:
    result = _battle(shared_env, shared_slot, shared_task, blues["flood"], "flood", deadline_s=240)
    stats = blues["_flood_stats"]  # type: ignore[index]
    sent = FLOOD_CALLS + 1
    assert stats["answered"] == sent, stats
    assert result.status == "completed" and result.trajectory is not None, result.reason
    per_kind = FLOOD_CALLS // len(FLOOD_MIX)
    trajectory = result.trajectory.model_dump()
    assert trajectory["total_calls"] == sent and trajectory["malformed_lines"] == 0
    assert trajectory["calls_per_tool"] == {"supervisor__show_profile": 2 * per_kind, "nope__not_a_tool": per_kind,
                                            "supervisor__complete_task": 1}
    assert trajectory["out_of_scope_calls"] == per_kind
    shared_log = shared_env.agentbeats_mcp_log_path.read_bytes().split(b"\n")
    assert shared_log[-1] == b""
    records = [json.loads(line) for line in shared_log[:-1]]  # every line of the shared log is valid JSON
    ours = [r for r in records if r["battle_id"] == result.battle_id]
    assert len(ours) == sent and sorted(r["seq"] for r in ours) == sorted(set(r["seq"] for r in ours))
    # the APIs server survived the parallel calls (the gateway forwards one at a time): no 5xx, slot still usable
    assert [r["status_code"] for r in ours if (r["status_code"] or 0) >= 500] == []
    assert Counter(r["tool_name"] for r in ours) == Counter(trajectory["calls_per_tool"])
    copied = (Path(result.run_dir or "") / "mcp_calls.jsonl").read_text().splitlines()
    assert len(copied) == sent
    print(f"flood: {sent} calls in {stats['seconds']:.1f} s ({sent / stats['seconds']:.0f} calls/s)")


def test_backend_unreachable_result_still_written_and_failure_stated(shared_env: Settings, shared_slot: WorldSlot,
                                                                      shared_task: str, blues: dict[str, str]) -> None:
    dead_backend = f"http://127.0.0.1:{free_port()}"
    reporter = BackendReporter("backend-down", dead_backend, timeout_s=2)
    result = _battle(shared_env, shared_slot, shared_task, blues["completer"], "backend-down", reporters=[reporter])
    assert result.status == "completed" and result.winner is not None, result.reason
    assert not reporter.result_posted
    assert len(result.report_problems) == 1 and "unreachable" in result.report_problems[0]
    assert dead_backend in result.report_problems[0] and "still in the run directory" in result.report_problems[0]
    saved = _saved(result)
    assert saved["winner"] == result.winner and saved["report_problems"] == result.report_problems


def test_backend_failure_is_stated_even_when_the_battle_failed_early(shared_env: Settings, shared_slot: WorldSlot,
                                                                      shared_task: str) -> None:
    reporter = BackendReporter("backend-down-2", f"http://127.0.0.1:{free_port()}", timeout_s=2)
    result = _battle(shared_env, shared_slot, shared_task, f"http://127.0.0.1:{free_port()}", "backend-down-early",
                     reporters=[reporter])
    assert result.status == "infra_error" and result.archive is None
    assert _saved(result)["report_problems"] and "unreachable" in _saved(result)["report_problems"][0]


def _attached(slot: WorldSlot, task_id: str, blue_url: str, deadline_s: float) -> BattleRequest:
    return BattleRequest(task=task_id, choices=BattleChoices(blue=blue_url, predictor="none", deadline_s=deadline_s),
                         env_url=slot.urls.env_url, apis_url=slot.urls.apis_url, gateway_url=slot.urls.gateway_url)


def test_second_battle_on_a_busy_slot_is_refused_never_interleaved(
        shared_env: Settings, shared_slot: WorldSlot, shared_task: str, blues: dict[str, str],
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    first: dict[str, BattleResult] = {}
    request = _attached(shared_slot, shared_task, blues["idle"], deadline_s=5)
    _idle_started.clear()
    thread = threading.Thread(target=lambda: first.update(r=run_battle_request(
        request.model_copy(update={"out": shared_env.runs_dir / "busy-first"}), shared_env)))
    thread.start()
    try:
        wait_until(_idle_started.is_set, 60, "the first battle to reach its Blue")
        calls_before = shared_env.agentbeats_mcp_log_path.read_bytes().count(b"\n")
        second_out = tmp_path / "second"
        other_runs = shared_env.model_copy(update={"runs_dir": tmp_path / "other-runs"})  # another RUNS_DIR, same slot
        for settings in (shared_env, other_runs):
            with pytest.raises(SlotBusyError, match="running another battle"):
                run_battle_request(request.model_copy(update={"out": second_out}), settings)
        for key, value in {"RUNS_DIR": tmp_path / "cli-runs", "APPWORLD_ROOT": shared_env.appworld_root}.items():
            monkeypatch.setenv(key, str(value))
        previous = signal.getsignal(signal.SIGTERM)
        try:
            code = main(["--env-file", "/dev/null", "battle", "--task-id", shared_task, "--blue", blues["completer"],
                         "--env-url", shared_slot.urls.env_url, "--apis-url", shared_slot.urls.apis_url,
                         "--gateway-url", shared_slot.urls.gateway_url or "", "--out", str(second_out)])
        finally:
            signal.signal(signal.SIGTERM, previous)
        assert code == 3 and "running another battle" in capsys.readouterr().err
        # the refused battles wrote nothing (the output check may have created the empty folder) and touched nothing
        assert not [p for p in second_out.rglob("*") if p.is_file()]
        assert shared_env.agentbeats_mcp_log_path.read_bytes().count(b"\n") == calls_before
    finally:
        thread.join(timeout=120)
    result = first["r"]
    assert result.status == "timeout" and result.evaluation is not None, result.reason  # undisturbed
    assert answers(shared_slot.urls.env_url)
