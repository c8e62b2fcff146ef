"""What the A2A end-to-end tests share: `appworld-green serve` and our purples as real processes, a plain a2a-sdk
client sending the platform's request (streaming or not), and readers of the run it leaves.

Fixtures (module-scoped, imported by the test modules that use them): `env` (a runs folder of the module's
own, no OpenAI key), `green` (one `serve` on two world slots of free ports), `purples` (our reference and no-op
purples).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import DataPart, Message, Part, Role, TextPart

from green_agent.models.result import BattleResult
from green_agent.runtime.processes import ManagedProcess
from kernel.ports import free_port
from kernel.world_data import WorldData

CLI = str(Path(sys.executable).parent / "appworld-green")
DEAD_URL = "http://127.0.0.1:9"


class Server(NamedTuple):
    url: str
    runs: Path
    card_s: float
    slot_ports: str
    pid: int


def slot_ports(count: int) -> str:
    """Free ports for `count` world slots (a shared machine's slots 0..7 may be busy with other runs)."""
    return ",".join(":".join(str(free_port()) for _ in range(3)) for _ in range(count))


def start(argv: list[str], env: dict[str, str], log: Path) -> tuple[ManagedProcess, str, float]:
    port = free_port()
    process = ManagedProcess(argv[0], [CLI, *argv, "--port", str(port)], log, env=env)
    url = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    process.start()
    process.wait_ready(f"{url}/.well-known/agent-card.json", timeout_s=30)
    return process, url, time.monotonic() - started


@pytest.fixture(scope="module")
def env(appworld_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    runs = tmp_path_factory.mktemp("a2a") / "runs"
    return {**os.environ, "APPWORLD_ROOT": str(appworld_root), "RUNS_DIR": str(runs), "OPENAI_API_KEY": ""}


@pytest.fixture(scope="module")
def green(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    ports = slot_ports(2)
    process, url, card_s = start(["serve", "--heartbeat", "1", "--slot-ports", ports], env,
                                 tmp_path_factory.mktemp("g") / "green.log")
    try:
        yield Server(url, Path(env["RUNS_DIR"]), card_s, ports, process.pid)
    finally:
        process.stop()


@pytest.fixture(scope="module")
def purples(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    started = [start(["purple", "--kind", kind], env, tmp_path_factory.mktemp(kind) / "purple.log")
               for kind in ("reference", "noop")]
    try:
        yield {"reference": started[0][1], "noop": started[1][1]}
    finally:
        for process, _, _ in started:
            process.stop()


class Outcome(NamedTuple):
    state: str
    statuses: list[str]
    data: dict[str, Any] | None
    texts: list[str]


async def _assess(url: str, request: Any, streaming: bool) -> Outcome:
    text = request if isinstance(request, str) else json.dumps(request)
    message = Message(role=Role.user, parts=[Part(root=TextPart(text=text))], message_id=uuid.uuid4().hex)
    statuses: list[str] = []
    last = None
    async with httpx.AsyncClient(timeout=600) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card)
        async for event in client.send_message(message):
            last = event
            task = event[0] if isinstance(event, tuple) else None
            if task is not None and task.status.message is not None:
                statuses.append(" ".join(p.root.text for p in task.status.message.parts
                                         if isinstance(p.root, TextPart)))
    task = last[0]
    parts = [p.root for a in task.artifacts or [] for p in a.parts]
    data = next((p.data for p in parts if isinstance(p, DataPart)), None)
    return Outcome(task.status.state.value, statuses, data, [p.text for p in parts if isinstance(p, TextPart)])


def assess(url: str, request: Any, streaming: bool = True) -> Outcome:
    return asyncio.run(_assess(url, request, streaming))


def first(appworld_root: Path, count: int) -> list[str]:
    return WorldData(appworld_root).split("dev")[:count]


def result_of(data: dict[str, Any], task_id: str) -> BattleResult:
    return BattleResult.model_validate_json((Path(data["run_dir"]) / "tasks" / task_id / "result.json").read_text())
