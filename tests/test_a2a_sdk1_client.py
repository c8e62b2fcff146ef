"""An a2a-sdk 1.x client talks to our a2a-sdk 0.3 assessment server (docs/a2a.md, "Clients").

The 1.x client runs in its own virtualenv (`.venv-a2a1`, made by `make venvs` from requirements-a2a1.txt;
1.x and 0.3 cannot share an interpreter) through tests/a2a1_client.py. Its resolver maps our 0.3 card,
its factory picks the 0.3 compatibility transport, and it posts `message/stream` (streaming) or
`message/send` with `A2A-Version: 0.3`. The checks are the 0.3 client's: the request is accepted, the
stream carries the working updates, the task ends `completed` with one DataPart whose figures equal
those the 0.3 client gets for the same request, and a non-JSON text summary.
Versions tested: a2a-sdk 1.3.0 (client) against our a2a-sdk 0.3.6 (server).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from green_agent.a2a.local_runner import AgentEntry, Scenario, send_request
from green_agent.runtime.processes import ManagedProcess
from kernel.ports import free_port
from kernel.settings import REPO_ROOT
from kernel.world_data import WorldData

pytestmark = pytest.mark.e2e
CLI = str(Path(sys.executable).parent / "appworld-green")
A2A1_PYTHON = REPO_ROOT / ".venv-a2a1" / "bin" / "python"
FIGURES = ("score", "max_score", "tgc", "sgc", "task_rewards", "outcomes", "battles", "battles_passed")


@pytest.fixture(scope="module")
def agents(appworld_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    tmp = tmp_path_factory.mktemp("a2a1")
    env = {**os.environ, "APPWORLD_ROOT": str(appworld_root), "RUNS_DIR": str(tmp / "runs"), "OPENAI_API_KEY": ""}
    slots = ":".join(str(free_port()) for _ in range(3))
    green_port, purple_port = free_port(), free_port()
    green = ManagedProcess("green", [CLI, "serve", "--port", str(green_port), "--slot-ports", slots], tmp / "g.log",
                           env=env)
    purple = ManagedProcess("purple", [CLI, "purple", "--kind", "reference", "--port", str(purple_port)],
                            tmp / "p.log", env=env)
    with green.running(f"http://127.0.0.1:{green_port}/.well-known/agent-card.json", timeout_s=60), \
            purple.running(f"http://127.0.0.1:{purple_port}/.well-known/agent-card.json", timeout_s=60):
        yield f"http://127.0.0.1:{green_port}", f"http://127.0.0.1:{purple_port}"


def client_1x(url: str, request: dict[str, Any], tmp_path: Path, streaming: bool) -> dict[str, Any]:
    assert A2A1_PYTHON.is_file(), f"{A2A1_PYTHON} is missing: run `make venvs` (it creates .venv-a2a1)"
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request))
    argv = [str(A2A1_PYTHON), str(REPO_ROOT / "tests" / "a2a1_client.py"), url, str(path)]
    done = subprocess.run(argv + ([] if streaming else ["--no-streaming"]), capture_output=True, text=True,
                          timeout=300, env={"PATH": os.environ.get("PATH", "")})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("streaming", [True, False])
def test_an_a2a_sdk_1x_client_gets_what_the_03_client_gets(agents: tuple[str, str], appworld_root: Path,
                                                           tmp_path: Path, streaming: bool) -> None:
    green, purple = agents
    tasks = WorldData(appworld_root).split("dev")[:2]
    request = {"participants": {"agent": purple}, "config": {"task_ids": tasks, "predictor": "ground_truth"}}
    got = client_1x(green, request, tmp_path, streaming)
    assert got["a2a_sdk"].startswith("1.")
    assert got["card"]["interfaces"][0]["protocolVersion"].startswith("0.3")  # our 0.3 card, mapped by 1.x
    method = "message/stream" if streaming else "message/send"
    assert got["posted"] == [{"method": method, "a2a_version": "0.3"}]
    assert got["state"] == "completed"
    if streaming:  # the working updates arrive as they happen
        assert any(s.startswith("assessment started: 2 task(s)") for s in got["statuses"])
        assert sum("running TGC" in s for s in got["statuses"]) == 2
    assert len(got["data"]) == 1 and len(got["texts"]) == 1
    with pytest.raises(ValueError):
        json.loads(got["texts"][0])  # the summary is never JSON (the gateway would take it for data)
    scenario = Scenario(green_agent=AgentEntry(endpoint=green),
                        participants=[AgentEntry(endpoint=purple, role="agent")],
                        config=request["config"])
    state, results = asyncio.run(send_request(scenario))  # the 0.3 client, as the gateway and `assess` use it
    assert state == "completed" and len(results) == 1
    data_1x, data_03 = got["data"][0], results[0]
    assert set(data_1x) == set(data_03)
    assert {k: data_1x[k] for k in FIGURES} == {k: data_03[k] for k in FIGURES}  # JSON numbers: 1 == 1.0
    assert data_1x["tgc"] == 100.0
