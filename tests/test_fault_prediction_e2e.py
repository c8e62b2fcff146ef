"""A Blue that predicts the fault plan from the published seed scores like one that does not (issue 56).

The red team's dodger: a Blue that never retries, knows the run's spec (rate, seed, kinds: published in results.json
and the artifact) and the plan's published algorithm (`mcp_gateway.faults.plan`), counts its faultable calls as
the gateway does and spends each position it predicts faulted on a harmless read, so its real calls land on
positions it predicts clear. When the plan was a function of the seed alone it dodged every fault (TGC 100 where
the plain reference Blue scored 28.6 at rate 0.3). The plan now also draws on the run's secret, which nothing the
agent can reach holds while the run goes on: its predictions are guesses, and it loses like the plain Blue.

Real AppWorld servers, the real gateway; the plain reference Blue as shipped, the dodger an in-process A2A Blue
(`faults_support.blue_server`) replaying the same reference solutions. Both face the same plan (one fixed secret,
as a published run has), on the first dev tasks, in tools mode.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from blue_agent.apis_shim import run_solution
from blue_agent.gateway_client import GatewaySession
from faults_support import blue_server
from green_agent.engine.config import BattleChoices
from green_agent.local_battle import open_blue, run_on_slot
from green_agent.models.result import BattleResult
from green_agent.runtime.slot import SlotSpec, WorldSlot
from kernel.fault_spec import FaultSpec, parse_fault_spec
from kernel.ports import free_port
from kernel.settings import Settings, load_settings
from kernel.task_ids import TaskRef
from kernel.task_message import parse_task_message
from kernel.world_data import WorldData
from mcp_gateway.faults.plan import admitted_kinds, draw, is_faultable
from mcp_gateway.tools import ToolSpec, build_tool_specs

pytestmark = pytest.mark.e2e

PUBLISHED = "rate=0.3,seed=1,timeout_s=1"
"""What the dodger knows of the run: the spec as results.json publishes it (without the secret)."""
SALT = "9c2e5b7d4a1f08e63b5c7d9e2f4a6b8c0d1e3f5a7b9c2d4e6f8a0b1c3d5e7f90"
TASKS = 4
HARMLESS = ("phone__get_current_date_and_time", "spotify__show_genres", "amazon__show_prime_plans",
            "spotify__show_premium_plans")
"""Reads with no arguments that change nothing: where the dodger spends a position it predicts faulted. More than
one, because a read answered 429 is answered 429 again within its retry-after without taking a position (the
published rule, tools mode): the dodger then takes another one."""
RETRY_AFTER_S = 1.1


class Dodger:
    """The dodger's call wrapper for one battle (module docstring)."""

    def __init__(self, spec: FaultSpec, task_id: str, specs: dict[str, ToolSpec], session: GatewaySession) -> None:
        self.spec, self.task_id, self.specs, self.session = spec, task_id, specs, session
        self.position = 0
        self.dodged = 0
        self.held: dict[str, float] = {}

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        tool = self.specs[name]
        if is_faultable(tool):
            while draw(self.spec, self.task_id, 1, self.position + 1, admitted_kinds(self.spec, tool)) is not None:
                self.position += 1
                self.dodged += 1
                self._harmless_read()
            self.position += 1
        return self.session.call_tool(name, arguments)

    def _harmless_read(self) -> None:
        """One harmless read, of an API no 429 holds back (so it takes a position of the plan)."""
        if all(self.held.get(n, 0.0) > time.monotonic() for n in HARMLESS):
            time.sleep(max(0.0, min(self.held.values()) - time.monotonic()))
        now = time.monotonic()
        name = next(n for n in HARMLESS if self.held.get(n, 0.0) <= now)
        answer = self.session.call_tool(name, {})
        if "HTTP 429" in json.dumps(answer):
            self.held[name] = time.monotonic() + RETRY_AFTER_S


def dodger_handler(settings: Settings, known: FaultSpec, dodges: dict[str, int]):  # noqa: ANN201 - a BlueHandler
    """The dodger, predicting with what it `known`s of the spec: the published part, or (the control) the secret too."""
    world = WorldData(settings.appworld_root)
    specs = build_tool_specs(world, list(world.api_docs))

    def replay(text: str) -> None:
        task = parse_task_message(text)
        with GatewaySession(task.mcp_url) as session:
            dodger = Dodger(known, task.task_id, specs, session)
            try:
                run_solution(world.solution_source(task.task_id), dodger.call)
            finally:
                dodges[task.task_id] = dodger.dodged

    async def handle(text: str) -> str:
        await asyncio.to_thread(replay, text)
        return "done"

    return handle


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, appworld_root: Path) -> Iterator[dict[str, list[BattleResult]]]:
    tmp = tmp_path_factory.mktemp("dodger")
    settings = load_settings().model_copy(update={"appworld_root": appworld_root, "runs_dir": tmp / "runs",
                                                  "agentbeats_mcp_log_path": tmp / "calls.jsonl",
                                                  "openai_api_key": None})
    dodges: dict[str, dict[str, int]] = {"dodger": {}, "insider": {}}
    spec = parse_fault_spec(f"{PUBLISHED},salt={SALT}")
    tasks = WorldData(appworld_root).split("dev")[:TASKS]
    with ExitStack() as stack:
        world = stack.enter_context(WorldSlot(
            SlotSpec(env_port=free_port(), apis_port=free_port(), gateway_port=free_port()),
            appworld_root=appworld_root, appworld_python=settings.appworld_python, log_dir=tmp / "slot-logs",
            mcp_log_path=settings.agentbeats_mcp_log_path, lock_dir=tmp / ".slot-locks"))
        blues = {"reference": stack.enter_context(open_blue("reference", settings, world.urls, tmp / "blue-logs")),
                 "dodger": stack.enter_context(blue_server("Dodger", dodger_handler(
                     settings, parse_fault_spec(PUBLISHED), dodges["dodger"]))).url,
                 "insider": stack.enter_context(blue_server("Insider", dodger_handler(  # the control: knows the secret
                     settings, spec, dodges["insider"]))).url}
        found: dict[str, list[BattleResult]] = {name: [] for name in blues}
        for task in tasks:
            for name, url in blues.items():
                choices = BattleChoices(blue=name, predictor="all", faults=spec)
                found[name].append(run_on_slot(TaskRef(task_id=task, source="id"), choices, settings, world.urls,
                                               url, tmp / "runs" / f"{name}-{task}", f"dodge-{name}-{task}"))
        assert sum(dodges["insider"].values()) > 0, dodges  # the plan had faults to dodge
        yield found


def _passed(results: list[BattleResult]) -> int:
    return sum(r.outcome == "passed" for r in results)


def test_a_blue_that_predicts_the_plan_from_the_published_seed_scores_like_the_plain_one(
        runs: dict[str, list[BattleResult]]) -> None:
    plain, dodger, insider = runs["reference"], runs["dodger"], runs["insider"]
    assert all(r.status != "infra_error" for r in plain + dodger + insider), [  # judged, the Blue's own faults too
        (r.blue, r.task_id, r.status, r.reason) for r in plain + dodger + insider]
    assert _passed(insider) == TASKS  # the dodging works where the plan is known: the secret is all that stops it
    assert _passed(plain) <= TASKS - 2  # the faults bite a Blue that never retries
    assert _passed(dodger) <= _passed(plain) + 1, ([r.outcome for r in plain], [r.outcome for r in dodger])
    harmless = {name.replace("__", ".") for name in HARMLESS}
    hit = [r for r in dodger if r.trajectory and any(c.api not in harmless for c in r.trajectory.faulted_calls)]
    assert len(hit) >= TASKS - 1  # its real calls were faulted where it predicted them clear
