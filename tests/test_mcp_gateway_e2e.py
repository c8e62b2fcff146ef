"""End-to-end: a real gateway subprocess (`python -m mcp_gateway`) against real AppWorld servers.

Generic over the world: the task is the first of the `dev` split (or of the first split there is),
the app is the first of the supervisor's accounts that has a `search_*` API. Covers both MCP
transports, the openai-agents SSE client, scope refusals, the completion long-poll, evaluation
seeing MCP-made state, credential redaction, two gateways sharing one log, and latency. MCP calls go
through a battle's token URL (or the launch URL where the battle allows it); the AppWorld servers are
guarded, so the test's own direct calls carry the slot's guard.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from green_agent.runtime.appworld_servers import AppWorldServers
from green_agent.runtime.processes import ManagedProcess
from kernel.ports import free_port
from kernel.world_data import TaskSpec, WorldData
from kernel.call_log_reader import read_call_log
from mcp_gateway.tools import build_tool_specs
from mcp_test_client import GatewayClient, GatewayControl, battle_url

pytestmark = pytest.mark.e2e
PREFERRED_APPS = ("simple_note", "todoist", "spotify", "gmail", "splitwise", "venmo", "amazon")


class RunningGateway:
    def __init__(self, process: ManagedProcess, url: str, log_path: Path, root: Path, control: GatewayControl) -> None:
        self.process, self.url, self.log_path, self.root, self.control = process, url, log_path, root, control

    def battle(self, battle_id: str, task_id: str | None, scope: list[str] | None = None,
               launch_url_allowed: bool = False, policy: str = "advise") -> str:
        """Set a battle; return its token URL."""
        state = asyncio.run(self.control.set_battle(battle_id, task_id, scope, launch_url_allowed, policy))
        return battle_url(self.url, state)


def start_gateway(apis_url: str, root: Path, log_path: Path, log_dir: Path) -> RunningGateway:
    port = free_port()
    argv = [sys.executable, "-m", "mcp_gateway", "--remote-apis-url", apis_url, "--port", str(port),
            "--appworld-root", str(root), "--log-path", str(log_path)]
    process = ManagedProcess(f"gateway :{port}", argv, log_dir / f"gateway-{port}.log").start()
    try:
        process.wait_ready(f"http://127.0.0.1:{port}/health", timeout_s=60)
        control = GatewayControl.for_slot(apis_url)  # read now: a second gateway on this APIs server rewrites it
    except BaseException:
        process.stop()
        raise
    return RunningGateway(process, f"http://127.0.0.1:{port}", log_path, root, control)


@pytest.fixture(scope="module")
def world(appworld_root: Path) -> WorldData:
    return WorldData(appworld_root)


@pytest.fixture(scope="module")
def task(world: WorldData) -> TaskSpec:
    split = "dev" if "dev" in world.splits() else world.splits()[0]
    return world.task(world.split(split)[0])


@pytest.fixture(scope="module")
def gateway(appworld_servers: AppWorldServers, appworld_root: Path,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    log_dir = tmp_path_factory.mktemp("gateway")
    running = start_gateway(appworld_servers.spec.apis_url, appworld_root, log_dir / "calls.jsonl", log_dir)
    try:
        yield running
    finally:
        running.process.stop()


@pytest.fixture(scope="module")
def active_task(appworld_servers: AppWorldServers, task: TaskSpec) -> Iterator[TaskSpec]:
    """The task initialized on the env server in remote-APIs mode (DB state lives in the APIs server)."""
    env, guard = appworld_servers.spec.env_url, appworld_servers.credentials
    reply = requests.post(f"{env}/initialize", timeout=120, headers=guard.guard_headers(), json={
        "task_id": task.task_id, "experiment_name": f"gateway_e2e_{task.task_id}",
        "remote_apis_url": guard.guarded_url(appworld_servers.spec.apis_url)})
    assert reply.status_code == 200, reply.text
    try:
        yield task
    finally:
        requests.post(f"{env}/close", json={"task_id": task.task_id}, headers=guard.guard_headers(), timeout=60)


def _listing_api(world: WorldData, accounts: dict[str, str]) -> tuple[str, str]:
    """An app the supervisor has an account in, and a paginated `search_*` API needing only the token."""
    for app in PREFERRED_APPS:
        for name, doc in world.api_docs.get(app, {}).items():
            required = {p["name"] for p in doc.parameters if p["required"]}
            if app in accounts and name.startswith("search_") and doc.is_paginated and required <= {"access_token"}:
                return app, name
    raise AssertionError(f"no app among {PREFERRED_APPS} with an account and a token-only search API: {sorted(accounts)}")


def _env(servers: AppWorldServers, endpoint: str, body: dict[str, Any]) -> Any:
    reply = requests.post(f"{servers.spec.env_url}/{endpoint}", json=body, headers=servers.credentials.guard_headers(),
                          timeout=120)
    assert reply.status_code == 200, f"/{endpoint}: {reply.status_code} {reply.text[:300]}"
    return reply.json()["output"]


def test_every_tool_is_listed_with_its_schema_on_both_transports(gateway: RunningGateway, world: WorldData) -> None:
    specs = build_tool_specs(world)
    url = gateway.battle(f"e2e-list-{time.time_ns()}", None)

    async def listing(transport: str) -> list[Any]:
        async with GatewayClient(url, transport=transport) as client:  # type: ignore[arg-type]
            return await client.list_tools()

    for transport in ("streamable_http", "sse"):
        tools = asyncio.run(listing(transport))
        assert [t.name for t in tools] == list(specs), transport
        for tool in tools:
            doc = world.api_docs[specs[tool.name].app_name][specs[tool.name].api_name]
            assert tool.description and tool.input_schema["type"] == "object"
            assert set(tool.input_schema["properties"]) == {p["name"] for p in doc.parameters}
            assert tool.input_schema.get("required", []) == [p["name"] for p in doc.parameters if p["required"]]
    assert "supervisor__complete_task" in specs and "admin__show_users" not in specs
    assert {n for n in specs if n.startswith("api_docs__")} == {  # AppWorld's docs tools, always offered
        "api_docs__show_app_descriptions", "api_docs__show_api_descriptions", "api_docs__show_api_doc"}


def test_login_list_complete_and_the_evaluation_sees_it(gateway: RunningGateway, active_task: TaskSpec,
                                                        appworld_servers: AppWorldServers, world: WorldData) -> None:
    battle_id = f"e2e-flow-{time.time_ns()}"
    task_id = active_task.task_id

    url = gateway.battle(battle_id, task_id)

    async def flow() -> dict[str, Any]:
        async with GatewayClient(url) as client:
            passwords = (await client.call_tool("supervisor__show_account_passwords", {}))["response"]
            profile = (await client.call_tool("supervisor__show_profile", {}))["response"]
            accounts = {p["account_name"]: p["password"] for p in passwords}
            app, search = _listing_api(world, accounts)
            login = await client.call_tool(f"{app}__login", {"username": profile["email"], "password": accounts[app]})
            token = login["response"]["access_token"]
            listed = await client.call_tool(f"{app}__{search}", {"access_token": token, "page_limit": 5})
            waiter = asyncio.create_task(gateway.control.wait_for_completion(battle_id, 30))
            await asyncio.sleep(0.3)
            assert not waiter.done()
            done = await client.call_tool("supervisor__complete_task", {})
            called = time.perf_counter()
            completion = await waiter
            return {"passwords": accounts, "profile": profile, "token": token, "listed": listed, "done": done,
                    "completion": completion, "wake_s": time.perf_counter() - called, "app": app, "search": search}

    out = asyncio.run(flow())
    assert out["profile"]["email"] == active_task.supervisor["email"]
    assert isinstance(out["listed"]["response"], list)
    assert out["done"] == {"response": {"message": "Marked the active task complete."}}
    assert out["completion"].completed and out["completion"].status == "success"
    assert out["wake_s"] < 1.0, f"completion long-poll woke {out['wake_s']:.3f} s after complete_task"

    # The env server sees the MCP-made state (remote-APIs mode), after persisting it (quirk B5).
    printed = _env(appworld_servers, "execute", {"task_id": task_id,
                                                 "code": "print(apis.supervisor.show_active_task()['status'])"})
    assert printed.strip() == "success"
    assert _env(appworld_servers, "task_completed", {"task_id": task_id}) is True
    evaluation = _env(appworld_servers, "evaluate", {"task_id": task_id, "suppress_errors": True})
    assert evaluation["num_tests"] >= 1 and len(evaluation["passes"]) + len(evaluation["failures"]) == evaluation["num_tests"]

    records = read_call_log(gateway.log_path, battle_id)
    assert [r.tool_name for r in records] == [
        "supervisor__show_account_passwords", "supervisor__show_profile", f"{out['app']}__login",
        f"{out['app']}__{out['search']}", "supervisor__complete_task"]
    assert all(r.success and r.in_scope and r.task_id == task_id and r.status_code == 200 for r in records)
    assert records[0].result_items == len(out["passwords"]) and records[3].result_items == len(out["listed"]["response"])
    text = gateway.log_path.read_text()
    assert out["token"] not in text
    assert not [pw for pw in out["passwords"].values() if pw in text], "a plaintext password reached the call log"


def test_enforced_scope_refusal_is_clear_and_logged(gateway: RunningGateway, active_task: TaskSpec) -> None:
    battle_id = f"e2e-scope-{time.time_ns()}"
    scope = ["supervisor__show_profile", "supervisor__complete_task"]

    url = gateway.battle(battle_id, active_task.task_id, scope, policy="enforce")

    async def scoped() -> tuple[list[str], list[str], dict[str, Any], dict[str, Any], int]:
        async with GatewayClient(url, transport="sse") as sse, GatewayClient(url) as http:
            names_sse = [t.name for t in await sse.list_tools()]
            names_http = [t.name for t in await http.list_tools()]
            refused = await http.call_tool("supervisor__show_account_passwords", {})
            allowed = await sse.call_tool("supervisor__show_profile", {})
            await gateway.control.clear_battle()
            return names_sse, names_http, refused, allowed, len(await sse.list_tools())

    names_sse, names_http, refused, allowed, after = asyncio.run(scoped())
    assert sorted(names_sse) == sorted(names_http) == sorted(scope)
    message = refused["response"]["message"]
    assert refused["response"]["is_error"] and "supervisor__show_account_passwords" in message
    assert "outside this battle's scope" in message
    assert "email" in allowed["response"] and after == 0  # the ended battle's open SSE session sees nothing
    records = read_call_log(gateway.log_path, battle_id)
    assert [(r.tool_name, r.in_scope, r.success) for r in records] == [
        ("supervisor__show_account_passwords", False, False), ("supervisor__show_profile", True, True)]


def test_advised_scope_serves_a_looked_up_api_through_call_api(gateway: RunningGateway,
                                                               active_task: TaskSpec) -> None:
    battle_id = f"e2e-advise-{time.time_ns()}"
    scope = ["supervisor__show_profile", "supervisor__complete_task"]

    async def advised() -> tuple[list[str], dict[str, Any], dict[str, Any]]:
        url = battle_url(gateway.url, await gateway.control.set_battle(battle_id, active_task.task_id, scope))
        async with GatewayClient(url) as http:  # advise is the default policy
            names = [t.name for t in await http.list_tools()]
            doc = await http.call_tool("api_docs__show_api_doc", {"app_name": "supervisor", "api_name": "show_addresses"})
            via = await http.call_tool("call_api", {"app_name": "supervisor", "api_name": "show_addresses"})
        await gateway.control.clear_battle()
        return names, doc, via

    names, doc, via = asyncio.run(advised())
    assert sorted(names) == sorted(["api_docs__show_app_descriptions", "api_docs__show_api_descriptions",
                                    "api_docs__show_api_doc", *scope, "call_api"]) and names[-1] == "call_api"
    assert "is_error" not in json.dumps(doc) and doc["response"]["api_name"] == "show_addresses"
    assert isinstance(via["response"], list) and via["response"]
    records = read_call_log(gateway.log_path, battle_id)
    assert [(r.tool_name, r.in_scope, r.success) for r in records] == [
        ("api_docs__show_api_doc", True, True), ("supervisor__show_addresses", False, True)]


@pytest.mark.parametrize("route", ["launch", "token"])
def test_openai_agents_sse_client_lists_and_calls(gateway: RunningGateway, active_task: TaskSpec, route: str) -> None:
    """The AgentBeats SDK attaches MCP servers with openai-agents' MCPServerSse, at its launch URL (allowed by
    the battle) or at a battle's token URL."""
    from agents.mcp import MCPServerSse

    url = gateway.battle(f"e2e-agents-{route}-{time.time_ns()}", active_task.task_id, launch_url_allowed=route == "launch")
    base = gateway.url if route == "launch" else url

    async def run() -> tuple[int, str]:
        server = MCPServerSse(params={"url": f"{base}/sse", "timeout": 5, "sse_read_timeout": 20},
                              cache_tools_list=True, client_session_timeout_seconds=20)
        await server.connect()
        try:
            tools = await server.list_tools()
            result = await server.call_tool("supervisor__show_profile", {})
            return len(tools), result.content[0].text
        finally:
            await server.cleanup()

    count, text = asyncio.run(run())
    assert count == len(build_tool_specs(WorldData(gateway.root)))
    assert json.loads(text)["response"]["email"] == active_task.supervisor["email"]


def test_two_gateways_share_one_log_with_correct_attribution(gateway: RunningGateway, active_task: TaskSpec,
                                                             appworld_servers: AppWorldServers, appworld_root: Path,
                                                             tmp_path: Path) -> None:
    second = start_gateway(appworld_servers.spec.apis_url, appworld_root, gateway.log_path, tmp_path)
    stamp = time.time_ns()
    plan = {gateway.url: (f"slot0-{stamp}", "supervisor__show_profile"),
            second.url: (f"slot1-{stamp}", "supervisor__show_addresses")}
    calls_each = 15

    gateways = {gateway.url: gateway, second.url: second}

    async def hammer(url: str) -> None:
        battle_id, tool = plan[url]
        control = gateways[url].control
        state = await control.set_battle(battle_id, f"task-of-{battle_id}", None)
        async with GatewayClient(battle_url(url, state)) as client:
            replies = await asyncio.gather(*(client.call_tool(tool, {}) for _ in range(calls_each)))
            assert all("is_error" not in json.dumps(r) for r in replies)
        await control.clear_battle()

    async def both() -> None:
        await asyncio.gather(*(hammer(url) for url in plan))

    try:
        asyncio.run(both())
    finally:
        second.process.stop()
    for battle_id, tool in plan.values():
        records = read_call_log(gateway.log_path, battle_id)  # parses every line of the shared file
        assert len(records) == calls_each
        assert {(r.tool_name, r.task_id) for r in records} == {(tool, f"task-of-{battle_id}")}
        assert len({r.seq for r in records}) == calls_each


def test_latency_through_gateway_vs_direct(gateway: RunningGateway, active_task: TaskSpec,
                                           appworld_servers: AppWorldServers) -> None:
    rounds = 40
    session = requests.Session()
    session.trust_env = False
    session.headers.update(appworld_servers.credentials.guard_headers())
    url = gateway.battle(f"e2e-latency-{time.time_ns()}", active_task.task_id)
    direct: list[float] = []
    for _ in range(rounds):
        started = time.perf_counter()
        assert session.get(f"{appworld_servers.spec.apis_url}/supervisor/profile", timeout=10).status_code == 200
        direct.append((time.perf_counter() - started) * 1000)

    async def through(transport: str) -> list[float]:
        timings = []
        async with GatewayClient(url, transport=transport) as client:  # type: ignore[arg-type]
            for _ in range(rounds):
                started = time.perf_counter()
                reply = await client.call_tool("supervisor__show_profile", {})
                timings.append((time.perf_counter() - started) * 1000)
                assert "email" in reply["response"]
        return timings

    streamable, sse = asyncio.run(through("streamable_http")), asyncio.run(through("sse"))
    p50 = {name: statistics.median(values) for name, values in
           (("direct_http", direct), ("gateway_streamable_http", streamable), ("gateway_sse", sse))}
    print(f"\nshow_profile p50 over {rounds} calls (ms): " + ", ".join(f"{k}={v:.1f}" for k, v in p50.items()))
    assert p50["gateway_streamable_http"] < p50["direct_http"] + 150
    assert p50["gateway_sse"] < p50["direct_http"] + 150
