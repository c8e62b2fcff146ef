"""Fault injection: an AppWorld server dies before setup, during Blue's work, or during evaluation.

One world slot (APIs + env server + gateway on free ports) serves the module; a test SIGKILLs one
server's process group at the chosen moment and the `revived` fixture restarts it afterwards.
Moments: before the battle starts; from inside Blue's handler (Blue received the task and is
working); right before `/evaluate` (a thin `AppWorldClient` subclass runs the kill first, after the
archive step persisted the world). Every case must end the same way for the user: status and
outcome `infra_error`, no winner (Blue not charged; the AgentBeats winner is `draw`), cleanup
attempted and recorded, `result.json` written, and the error naming the dead service and its URL.
One deliberate exception: the APIs server dying after the archive step persisted the world leaves
`/evaluate` sound (it reads the persisted DBs), so that verdict is kept and the failed `/close`
names the dead server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from faults_support import (assert_no_open_world, blue_server, complete_through_gateway, fault_settings, first_task, kill,
                            revive_slot, start_slot)
from green_agent.agentbeats.result_post import winner_of
from green_agent.appworld_client import AppWorldClient
from green_agent.models.result import EvaluationRecord
from green_agent.gateway_client import GatewayClient
from kernel.slot_credentials import require_credentials
from green_agent.models.result import BattleResult
from green_agent.engine.config import BattleChoices, BattleConfig, BattleDeps, resolve_choices
from green_agent.engine.sequencer import run_battle
from kernel.settings import Settings
from green_agent.runtime.slot import WorldSlot
from kernel.world_data import WorldData

pytestmark = pytest.mark.e2e
DEADLINE_S = 8.0
_hooks: dict[str, Callable[[], None] | None] = {"on_task": None}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, appworld_root: Path) -> Settings:
    return fault_settings(tmp_path_factory.mktemp("faults-servers"), appworld_root)


@pytest.fixture(scope="module")
def slot(env: Settings) -> Iterator[WorldSlot]:
    with start_slot(env, env.runs_dir / "slot-logs") as world_slot:
        yield world_slot


@pytest.fixture(scope="module")
def task_id(env: Settings) -> str:
    return first_task(env.appworld_root)


@pytest.fixture(scope="module")
def blue(slot: WorldSlot) -> Iterator[str]:
    """A Blue that runs the test's hook when the task arrives, then completes it through the gateway."""
    async def handle(text: str) -> str:
        hook = _hooks["on_task"]
        if hook is not None:
            await asyncio.to_thread(hook)
            return "hook ran; not completing"
        await asyncio.to_thread(complete_through_gateway, text)
        return "completed"

    with blue_server("fault blue", handle) as server:
        yield server.url


@pytest.fixture
def revived(slot: WorldSlot) -> Iterator[None]:
    """After each test: restart whatever was killed; the hook is cleared."""
    try:
        yield
    finally:
        _hooks["on_task"] = None
        revive_slot(slot)


class KillBeforeEvaluate(AppWorldClient):
    """The real client; `before_evaluate` runs first (the fault hook for 'killed during evaluation')."""

    before_evaluate: Callable[[], None] = staticmethod(lambda: None)

    def evaluate(self, task_id: str) -> EvaluationRecord:
        self.before_evaluate()
        return super().evaluate(task_id)


def _battle(env: Settings, slot: WorldSlot, task_id: str, blue_url: str, name: str,
            client: AppWorldClient | None = None) -> BattleResult:
    run_dir = env.runs_dir / name
    choices = resolve_choices(BattleChoices(blue="fault", predictor="none", deadline_s=DEADLINE_S, reply_grace_s=1.0),
                              env)
    config = BattleConfig(battle_id=f"fault-{name}", task=task_id, choices=choices, blue_url=blue_url, run_dir=run_dir)
    credentials = require_credentials(slot.urls.apis_url)
    deps = BattleDeps(client=client or AppWorldClient(slot.urls.env_url, backoff_s=0.1, credentials=credentials),
                      apis_url=slot.urls.apis_url, settings=env, world=WorldData(env.appworld_root),
                      appworld_root=env.appworld_root,
                      gateway=GatewayClient.for_slot(slot.urls.gateway_url or "", slot.urls.apis_url, credentials),
                      call_log_path=env.agentbeats_mcp_log_path,
                      blue_session=requests.Session())
    return run_battle(config, deps)


def _assert_infra_error(result: BattleResult, service: str, url: str, steps: tuple[str, ...]) -> None:
    assert (result.status, result.outcome, result.winner) == ("infra_error", "infra_error", None), result.reason
    assert winner_of(result) == "draw"  # Blue is not charged on the AgentBeats backend either
    assert result.error is not None and result.error.step in steps, result.error
    assert service in result.error.message and url in result.error.message, result.error.message
    assert result.cleanup is not None, "cleanup must run"
    if result.error.step != "setup":  # a world was opened: /close was attempted and its outcome recorded
        assert result.cleanup.closed is not None
    saved = json.loads((Path(result.run_dir or "") / "result.json").read_text())
    assert saved["status"] == "infra_error" and saved["winner"] is None and saved["cleanup"] is not None
    assert saved["error"]["message"] == result.error.message


SERVICES = {"env": ("environment", "env server"), "apis": ("apis", "APIs server")}


def _process(slot: WorldSlot, which: str):  # noqa: ANN202
    assert slot.servers is not None
    return slot.servers.environment if which == "env" else slot.servers.apis


def _url(slot: WorldSlot, which: str) -> str:
    return slot.urls.env_url if which == "env" else slot.urls.apis_url


CASES = [("apis", "before_setup"), ("apis", "during_blue_work"), ("apis", "after_state_persisted"),
         ("env", "before_setup"), ("env", "during_blue_work"), ("env", "during_evaluation")]
"""APIs cases first: each needs both servers restarted, the env ones only the env server."""


@pytest.mark.parametrize("which, moment", CASES, ids=[f"{w}-{m}" for w, m in CASES])
def test_server_killed(env: Settings, slot: WorldSlot, task_id: str, blue: str, which: str, moment: str,
                       revived: None) -> None:
    service, url, process = SERVICES[which][1], _url(slot, which), _process(slot, which)
    client = KillBeforeEvaluate(slot.urls.env_url, backoff_s=0.1, credentials=require_credentials(slot.urls.apis_url))
    if moment == "before_setup":
        kill(process)
    elif moment == "during_blue_work":
        _hooks["on_task"] = lambda: kill(process)
    else:
        client.before_evaluate = lambda: kill(process)
    result = _battle(env, slot, task_id, blue, f"{which}-{moment}", client=client)
    if moment == "after_state_persisted":
        # Decision: /evaluate reads the DBs the archive step persisted (B5), not the APIs server, so this
        # verdict is sound and kept; the failed /close is recorded and names the dead APIs server.
        assert (result.status, result.outcome, result.winner) == ("completed", "failed", "green_agent"), result.reason
        assert result.evaluation is not None and result.evaluation.num_tests >= 1
        assert result.cleanup is not None and not result.cleanup.ok
        assert any(service in e and url in e for e in result.cleanup.errors), result.cleanup.errors
        return
    steps = {"before_setup": ("setup",), "during_blue_work": ("wait", "archive", "metrics"),
             "during_evaluation": ("metrics",)}[moment]
    _assert_infra_error(result, service, url, steps)
    if moment == "before_setup":
        assert result.completion is None and result.blue_agent_name is None  # Blue was never contacted
    else:
        assert result.blue_agent_name == "fault blue"  # Blue got the task; it is still not charged
    if moment == "during_evaluation":
        assert result.completion is not None and result.completion.completed and result.evaluation is None


def test_slot_serves_a_normal_battle_after_the_faults(env: Settings, slot: WorldSlot, task_id: str,
                                                      blue: str) -> None:
    """The revived slot is healthy again: a completing Blue gets a judged battle and the world is closed."""
    result = _battle(env, slot, task_id, blue, "after-faults")
    assert result.status == "completed" and result.winner is not None, result.reason
    assert_no_open_world(slot.urls, task_id)
