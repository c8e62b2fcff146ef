"""The gateway's spare REPLs (`CodeRunner`), with real sandboxes: ready sooner, never shared, never starving.

A spare is a sandbox that has run no code, importing while earlier battles run. What must hold: each battle
gets a process no other battle had (nothing of one battle's code reaches the next), spares import at idle CPU
priority and the battle that claims one runs at normal priority (every thread of every process in its
sandbox), a spare that died is discarded for a fresh one, and shutdown leaves no process.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from mcp_gateway.code import priority
from mcp_gateway.code.session import ApiAnswer, ApiCall
from mcp_gateway.code_mode import CodeRunner
from mcp_gateway.models import BattleState
from sandbox_support import MECHANISMS, sandbox_of, unprivileged_work  # noqa: F401 - a fixture

pytestmark = pytest.mark.e2e
TASK_DATETIME = "2023-05-18T12:00:00"


def battle(n: int) -> BattleState:
    return BattleState(battle_id=f"spares-{n}", task_id="t", interaction="code", task_datetime=TASK_DATETIME,
                       set_at=datetime.now(timezone.utc))


def relay(call: ApiCall) -> ApiAnswer:
    return ApiAnswer(status_code=200, body={"api": call.api})


def policies(root_pid: int) -> set[int]:
    """The scheduling policy of every thread of `root_pid`'s process tree."""
    return {os.sched_getscheduler(task) for pid in priority._process_tree(root_pid) for task in priority._threads(pid)}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


@pytest.fixture(params=MECHANISMS)
def runner(request: pytest.FixtureRequest, tmp_path: Path, unprivileged_work: Path):  # noqa: F811
    sandbox = sandbox_of(request.param, unprivileged_work)
    code = CodeRunner({}, tmp_path / "calls.jsonl", python=sandbox.python, sandbox=request.param, spares=2)
    yield code
    code.shutdown()


def test_each_battle_gets_its_own_fresh_process_and_spares_are_topped_up(runner: CodeRunner) -> None:
    first, second = battle(1), battle(2)
    runner.start(first)
    runner.settle()  # spares are topped up in the background, off the battle's start
    assert len(runner._spares) == 2
    first_pid = runner._session.pid
    out = runner.execute(first, "secret = 'from battle 1'\nprint(secret)", relay)
    assert out is not None and out.output == "from battle 1\n"

    spare_pids = [spare.pid for spare in runner._spares]
    runner.start(second)
    assert runner._session.pid == spare_pids[0] != first_pid  # the oldest spare, never the old REPL
    assert not alive(first_pid)  # the first battle's sandbox is gone
    runner.settle()
    assert len(runner._spares) == 2 and runner._spares[0].pid == spare_pids[1]
    out = runner.execute(second, "print(secret)", relay)
    assert out is not None and "NameError" in out.output  # nothing of battle 1's code reached battle 2
    assert runner.execute(first, "print(1)", relay) is None  # the first battle has no REPL any more


def test_spares_import_at_idle_priority_and_the_claimed_one_runs_at_normal(runner: CodeRunner) -> None:
    runner.start(battle(1))
    runner.settle()
    spare_policy = os.SCHED_IDLE if priority.can_restore() else os.SCHED_OTHER  # idle only where restorable
    for spare in runner._spares:
        assert policies(spare.pid) == {spare_policy}
    runner.start(battle(2))
    assert policies(runner._session.pid) == {os.SCHED_OTHER}
    out = runner.execute(battle(2), "import math\nprint(math.sqrt(16))", relay)
    assert out is not None and out.output == "4.0\n"
    assert policies(runner._session.pid) == {os.SCHED_OTHER}  # after its imports and its code too


def test_a_dead_spare_is_discarded_and_shutdown_leaves_no_process(runner: CodeRunner) -> None:
    runner.start(battle(1))
    runner.settle()
    dead = runner._spares[0]
    os.killpg(dead.pid, 9)
    dead._process.wait()
    runner.start(battle(2))
    assert runner._session.pid not in (None, dead.pid)
    out = runner.execute(battle(2), "print('ok')", relay)
    assert out is not None and out.output == "ok\n"
    runner.settle()
    pids = [runner._session.pid] + [spare.pid for spare in runner._spares]
    runner.shutdown()
    assert not any(alive(pid) for pid in pids)


CLOCK_READS = ("import time\nprint(datetime.datetime.now(), datetime.date.today(), DateTime.now(), pendulum.now(), "
               "time.time(), time.gmtime(), time.strftime('%Y-%m-%d %H:%M'))")


def test_a_spare_runs_at_its_battles_time_as_a_repl_started_at_it_does(runner: CodeRunner) -> None:
    # A spare builds its REPL and freezes its clock before any battle is known; the battle that claims it moves
    # the clock to the task's datetime. Every clock the code can read says what a REPL frozen there says.
    runner.start(battle(1))
    fresh = runner.execute(battle(1), CLOCK_READS, relay)
    assert fresh is not None and fresh.output.startswith("2023-05-18 12:00:00 2023-05-18 2023-05-18 12:00:00")
    later = battle(2).model_copy(update={"task_datetime": "2024-02-29T23:59:30"})
    runner.start(later)
    moved = runner.execute(later, CLOCK_READS, relay)
    runner.stop()
    runner.settle()
    runner.spares = 0
    while runner._spares:
        runner._spares.popleft().close()
    runner.start(later)  # no spare: a fresh REPL given the datetime in its init
    direct = runner.execute(later, CLOCK_READS, relay)
    assert moved is not None and direct is not None
    assert moved.output == direct.output and moved.output.startswith("2024-02-29 23:59:30 2024-02-29")


def test_spares_spawned_at_the_gateways_start_serve_the_first_battle(runner: CodeRunner) -> None:
    # A code run's gateway spawns its spares as it starts (`top_up`): its first battle claims the first, whose REPL
    # was built before any battle was known and has run nothing; the battle's own clock is in force.
    runner.top_up()
    ready = [spare.pid for spare in runner._spares]
    assert len(ready) == 2 and all(spare._awaits_clock for spare in runner._spares)
    # the first battle's REPL-to-be imports at normal priority (no battle runs yet); the others at idle
    assert policies(ready[0]) == {os.SCHED_OTHER}
    assert policies(ready[1]) == {os.SCHED_IDLE if priority.can_restore() else os.SCHED_OTHER}
    runner.start(battle(1))
    assert runner._session.pid == ready[0]
    out = runner.execute(battle(1), "print(datetime.datetime.now(), type(apis).__name__)", relay)
    assert out is not None and out.output == "2023-05-18 12:00:00 _CustomErrorMessageMunch\n"


def test_a_code_runs_gateway_readies_its_spares_before_it_serves(tmp_path: Path) -> None:
    # The flag travels: WorldSlot -> the gateway's command line -> GatewayConfig -> the app's start-up (lifespan).
    from starlette.testclient import TestClient

    from green_agent.runtime.slot import SlotSpec, WorldSlot
    from kernel.call_log import CallLogWriter
    from mcp_gateway.cli import add_arguments
    from mcp_gateway.forwarding import ApiForwarder
    from mcp_gateway.gateway import Gateway
    from mcp_gateway.server import build_app

    def command(code: bool) -> list[str]:
        slot = WorldSlot(SlotSpec(env_port=1, apis_port=2, gateway_port=3), appworld_root=tmp_path,
                         appworld_python=tmp_path, log_dir=tmp_path, mcp_log_path=tmp_path / "calls.jsonl",
                         lock_dir=tmp_path, code_spares_at_start=code)
        return slot.gateway.argv
    assert "--code-spares-at-start" in command(True) and "--code-spares-at-start" not in command(False)
    parser = __import__("argparse").ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args(["--code-spares-at-start"]).code_spares_at_start is True

    log = tmp_path / "calls.jsonl"
    for at_start, expected in ((False, 0), (True, 2)):
        code = CodeRunner({}, log, spares=2)
        gateway = Gateway({}, ApiForwarder("http://127.0.0.1:9"), CallLogWriter(log), code=code)
        try:
            with TestClient(build_app(gateway, spares_at_start=at_start)):
                assert len(code._spares) == expected  # a tools run keeps none
        finally:
            code.shutdown()


def test_the_code_spares_setting_sizes_each_gateways_pool_and_zero_still_runs_battles(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # CODE_SPARES travels: the environment -> Settings -> the gateway's command line -> GatewayConfig -> its
    # CodeRunner. With 0, a code run's gateway spawns none at its start, and each battle starts its own REPL.
    import argparse

    from pydantic import ValidationError

    from kernel.settings import Settings
    from mcp_gateway.cli import add_arguments, gateway_config
    from mcp_gateway.server import build_gateway

    (tmp_path / "data" / "api_docs" / "standard").mkdir(parents=True)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--code-spares-at-start", "--appworld-root", str(tmp_path), "--log-path",
                              str(tmp_path / "calls.jsonl")])
    monkeypatch.delenv("CODE_SPARES", raising=False)  # the default, whatever the shell running the tests set
    assert gateway_config(args, Settings()).code_spares == 2  # the default
    monkeypatch.setenv("CODE_SPARES", "0")
    config = gateway_config(args, Settings())
    assert config.code_spares == 0 and config.code_spares_at_start
    runner = build_gateway(config).code
    assert runner is not None and runner.spares == 0
    try:
        runner.top_up()
        assert not runner._spares
        runner.start(battle(1))
        out = runner.execute(battle(1), "print(datetime.datetime.now())", relay)
        assert out is not None and out.output == "2023-05-18 12:00:00\n" and not runner._spares
    finally:
        runner.shutdown()
    monkeypatch.setenv("CODE_SPARES", "-1")
    with pytest.raises(ValidationError, match="code_spares"):
        Settings()
