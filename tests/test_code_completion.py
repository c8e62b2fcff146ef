"""Where a code-mode execution completes the task, with the real APIs server, sandbox and control routes.

AppWorld's step is an execution: the episode ends when the execution that completed the task ends. So the
Green ending the episode on completion (`POST /control/battle/end?completed=1`, what the engine sends once the
wait saw the completion) waits for that execution, which returns its own output (it used to be killed under
it: "Execution failed ... its battle ended"); an `execute` queued behind it is refused. Every call record
belongs to its battle: one refused after the episode carries its battle id (and counts in its calls), and a
late call presenting an ended battle's token is that battle's, not the next battle's foreign refusal.
"""

from __future__ import annotations

import asyncio
import json
import os

import httpx
import pytest
from starlette.applications import Starlette

from green_agent.trajectory import analyze_log
from kernel.world_data import WorldData
from mcp_gateway.gateway import Gateway
from mcp_gateway.models import BattleScope
from mcp_gateway.server import control_routes
from test_code_differential import TOKEN, diff_settings, initialize, world  # noqa: F401 - fixtures

pytestmark = pytest.mark.e2e
SLOW_TAIL = "x = 0\nwhile x < 10**6:\n    x += 1\nprint('finished after completing')"


@pytest.fixture()
def task(world, diff_settings):  # noqa: F811, ANN001, ANN201
    client, gateway, apis_url = world
    task_id = WorldData(diff_settings.appworld_root).split("dev")[0]
    initialize(client, apis_url, task_id, f"completion-{os.urandom(3).hex()}")
    yield gateway, task_id
    gateway.code.stop()
    gateway.scope.clear_battle()
    client.close(task_id)


def set_battle(gateway: Gateway, task_id: str, interaction: str = "code", token: str = TOKEN) -> str:
    battle_id = f"cm-{os.urandom(3).hex()}"
    state = gateway.scope.set_battle(BattleScope(battle_id=battle_id, token=token, task_id=task_id,
                                                 interaction=interaction, task_datetime="2023-05-18T12:00:00"))
    if interaction == "code":
        gateway.code.start(state)
    return battle_id


def output_of(result) -> str:  # noqa: ANN001
    structured = result.structured_content or {}
    return structured["output"] if "output" in structured else result.content[0].text


async def completing_while_the_green_ends_it(gateway: Gateway, battle_id: str) -> tuple[str, str, dict]:
    """Run an execution that completes the task and then works on; end the episode as the engine does the moment
    the completion is seen; send a second `execute` meanwhile. Their outputs and the control reply."""
    control = httpx.AsyncClient(transport=httpx.ASGITransport(app=Starlette(routes=control_routes(gateway))),
                                base_url="http://control")
    async with control:
        first = asyncio.create_task(gateway.call_tool(
            "execute", {"code": "apis.supervisor.complete_task()\n" + SLOW_TAIL}, TOKEN))
        while not gateway.scope.completion(battle_id).completed and not first.done():
            await asyncio.sleep(0.005)
        assert not first.done(), output_of(first.result())
        queued = asyncio.create_task(gateway.call_tool("execute", {"code": "print('queued')"}, TOKEN))
        reply = await control.post("/control/battle/end", params={"battle_id": battle_id, "completed": "1"},
                                   timeout=300)
        return output_of(await first), output_of(await queued), reply.json()


def test_the_completing_execution_ends_on_its_own_and_returns_its_output(task) -> None:  # noqa: ANN001
    gateway, task_id = task
    battle_id = set_battle(gateway, task_id)
    first, queued, reply = asyncio.run(completing_while_the_green_ends_it(gateway, battle_id))
    assert first == "finished after completing\n", first
    assert "episode is over" in queued, queued
    assert reply["ended"] and reply["drained"], reply
    assert gateway.scope.episode_is_over(gateway.scope.generation)


def test_refused_calls_after_the_episode_are_the_battles(task) -> None:  # noqa: ANN001
    gateway, task_id = task
    battle_id = set_battle(gateway, task_id, interaction="tools")
    assert not asyncio.run(gateway.call_tool("supervisor__complete_task", {}, TOKEN)).is_error
    refused = asyncio.run(gateway.call_tool("supervisor__show_profile", {}, TOKEN))
    assert refused.is_error and "episode is over" in refused.content[0].text
    records = [json.loads(line) for line in gateway.log.path.read_text().splitlines()]
    mine = [r for r in records if r.get("battle_id") == battle_id]
    assert [(r["tool_name"], r.get("refused")) for r in mine] == [("supervisor__complete_task", None),
                                                                  ("supervisor__show_profile", "episode_over")]
    assert analyze_log(gateway.log.path, battle_id=battle_id).total_calls == 2


def test_a_late_call_of_an_ended_battle_is_that_battles(task) -> None:  # noqa: ANN001
    gateway, task_id = task
    earlier = set_battle(gateway, task_id, interaction="tools", token="a" * 40)
    gateway.scope.clear_battle()
    later = set_battle(gateway, task_id, interaction="tools", token="b" * 40)
    late = asyncio.run(gateway.call_tool("supervisor__show_profile", {}, "a" * 40))
    assert late.is_error
    last = json.loads(gateway.log.path.read_text().splitlines()[-1])
    assert last["battle_id"] == earlier and last["refused"] == "battle_ended", last
    assert gateway.scope.battle.battle_id == later and "wrong_token" not in gateway.scope.battle.refused
    stranger = asyncio.run(gateway.call_tool("supervisor__show_profile", {}, "c" * 40))
    assert stranger.is_error and gateway.scope.battle.refused.get("wrong_token") == 1
    assert json.loads(gateway.log.path.read_text().splitlines()[-1])["battle_id"] is None
