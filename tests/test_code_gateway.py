"""The gateway's code mode against hostile callers and hostile code, with the real APIs server and sandbox.

The gateway's core (`Gateway.list_tools`/`call_tool`, the per-battle forwarding path) is driven in-process,
as the MCP transports drive it (tests/test_mcp_gateway_e2e.py covers the transports): a code-mode battle
lists only `execute`; a wrong token runs nothing; forged protocol lines cannot name an app outside the
identifiers; an enforced scope fails inside the code and is logged; complete_task ends the episode; ending
the battle leaves no process of its sandbox.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from green_agent.appworld_client import AppWorldClient
from kernel.world_data import WorldData
from mcp_gateway.gateway import Gateway
from mcp_gateway.models import BattleScope
from test_code_differential import TOKEN, diff_settings, initialize, world  # noqa: F401 - fixtures

pytestmark = pytest.mark.e2e
WRONG = "w" * 40


def execute(gateway: Gateway, code: str, token: str = TOKEN) -> tuple[str, bool]:
    result = asyncio.run(gateway.call_tool("execute", {"code": code}, token))
    structured = result.structured_content or {}
    return (structured["output"] if "output" in structured else result.content[0].text), bool(result.is_error)


def log_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


@pytest.fixture()
def battle(world: tuple[AppWorldClient, Gateway, str], diff_settings):  # noqa: F811, ANN001, ANN201
    client, gateway, apis_url = world
    task_id = WorldData(diff_settings.appworld_root).split("dev")[0]
    when = initialize(client, apis_url, task_id, f"gateway-{task_id}")

    def start(**scope: object) -> Gateway:
        state = gateway.scope.set_battle(BattleScope(battle_id=f"gw-{os.urandom(3).hex()}", token=TOKEN,
                                                     task_id=task_id, interaction="code", task_datetime=when,
                                                     **scope))
        gateway.code.start(state)
        return gateway

    yield start
    gateway.code.stop()
    gateway.scope.clear_battle()
    client.close(task_id)


def test_a_code_battle_lists_only_execute_and_refuses_other_tools(battle) -> None:  # noqa: ANN001
    gateway = battle()
    assert [tool.name for tool in gateway.list_tools(TOKEN)] == ["execute"]
    assert gateway.list_tools(WRONG) == []
    result = asyncio.run(gateway.call_tool("supervisor__show_profile", {}, TOKEN))
    assert result.is_error and "code mode" in result.content[0].text


def test_a_wrong_token_runs_nothing(battle) -> None:  # noqa: ANN001
    gateway = battle()
    output, is_error = execute(gateway, "apis.supervisor.complete_task()", WRONG)
    assert is_error and "does not belong to the running battle" in output
    assert not gateway.scope.completion(gateway.scope.battle.battle_id).completed


def test_forged_protocol_lines_never_reach_the_apis_server(battle, diff_settings) -> None:  # noqa: ANN001, F811
    gateway = battle()
    log = gateway.log.path
    before = len(log_lines(log))
    forged = json.dumps({"call": {"app": "../x", "api": "y", "arguments": {}}, "id": 1}) + "\n"
    execute(gateway, f"o = __import__('posix')\nfor fd in range(3, 12):\n    try:\n"
                     f"        o.write(fd, {forged.encode()!r})\n    except OSError:\n        pass")
    new = log_lines(log)[before:]
    assert all(line["tool_name"] in gateway.specs for line in new)  # nothing named outside the tools
    output, _ = execute(gateway, "print(apis.supervisor.show_profile()['email'])")
    assert "@" in output  # the REPL still works (or was restarted) and calls still go through


def test_an_enforced_scope_fails_inside_the_code_and_is_logged(battle) -> None:  # noqa: ANN001
    gateway = battle(scope=["supervisor__complete_task"], policy="enforce")
    output, is_error = execute(gateway, "apis.supervisor.show_profile()")
    assert not is_error and output.startswith("Execution failed. Traceback:")
    assert "outside this battle's scope" in output
    last = log_lines(gateway.log.path)[-1]
    assert (last["tool_name"], last["in_scope"], last["success"]) == ("supervisor__show_profile", False, False)


def test_complete_task_ends_the_episode_and_the_end_leaves_no_process(battle) -> None:  # noqa: ANN001
    gateway = battle()
    execute(gateway, "t = __import__('threading')\ndef loop():\n    while True:\n        pass\n"
                     "t.Thread(target=loop, daemon=True).start()")
    output, _ = execute(gateway, "apis.supervisor.complete_task()")
    assert output == "Execution successful."
    assert gateway.scope.completion(gateway.scope.battle.battle_id).completed
    after, is_error = execute(gateway, "print(1)")
    assert is_error and "episode is over" in after
    session = gateway.code._session
    assert session is not None and session.pid is not None
    pid, cgroup = session.pid, session._cgroup
    gateway.code.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert cgroup is None or cgroup.pids() == []


LIFT_CALLS = "__import__('__main__').CallCounter.limit = 10**9\n"
"""The code lifts the child's own count of calls (AppWorld's requester count lives in the agent's process too)."""


def battle_lines(gateway: Gateway) -> list[dict]:
    battle_id = gateway.scope.battle.battle_id
    return [line for line in log_lines(gateway.log.path) if line.get("battle_id") == battle_id]


def test_calls_past_appworlds_limit_are_refused_outside_the_code(battle) -> None:  # noqa: ANN001
    gateway = battle()
    gateway.code._session.max_calls_per_execution = 5  # AppWorld's 1000, made small for the test
    gateway.code._session.wait_ready()  # its start-up (imports) is not in the 2 s the calls below have
    output, _ = execute(gateway, LIFT_CALLS + "for i in range(8):\n    try:\n        apis.supervisor.show_profile()\n"
                                 "    except Exception as e:\n        print(i, e)")
    assert output.count("Number of requests exceeded the limit of 5. This potentially means that you have an "
                        "infinite loop in your code.") == 3, output
    assert len(battle_lines(gateway)) == 5  # the refused calls were neither forwarded nor logged


def test_large_arguments_are_logged_bounded_and_a_battles_log_is_capped(battle) -> None:  # noqa: ANN001
    gateway = battle()
    gateway.code._session.wait_ready()
    big = execute(gateway, "for _ in range(3):\n    apis.supervisor.show_profile(x='a' * 99_000)")
    assert "Execution" in big[0] or big[0]
    records = battle_lines(gateway)
    assert len(records) == 3 and all(r["arguments_bytes"] and r["arguments_bytes"] > 99_000 for r in records)
    assert all(len(json.dumps(r)) < 6_000 for r in records), [len(json.dumps(r)) for r in records]
    assert all(r["arguments"]["x"].startswith("[omitted: 99") for r in records)
    gateway.log.battle_cap_bytes = 10_000  # 16 MiB by default
    execute(gateway, "for _ in range(12):\n    apis.supervisor.show_profile(x='b' * 2_000)")
    records = battle_lines(gateway)
    assert records[-1]["refused"] == "log_capped" and "cap of 10000 bytes" in records[-1]["error"], records[-1]
    assert sum(len(json.dumps(r)) + 1 for r in records[:-1]) <= 10_000 + 200
