"""`appworld-green assess SCENARIO.toml`: the platform's local scenario runner, for our Green or any other.

The scenario format is the platform's (`agentbeats-run`): `[green_agent] endpoint, cmd`,
`[[participants]] role, endpoint, cmd [, agentbeats_id]`, `[config]`. Each `cmd` is started (a
leading `appworld-green` runs this interpreter's CLI, so no PATH set-up is needed) with its log in the run
folder's `logs/agent-<k>.log` and `RUNS_DIR` set to the run folder, so what our Green writes (its assessment's run
folder) lands there too and two assessments never share a file; every endpoint's
agent card is awaited (`CARD_WAIT_S`), then the request `{"participants", "config"}` is sent
streaming with a plain a2a-sdk client; every update is printed with a progress line, and at
`completed` the artifacts' data (DataParts, and TextParts that parse as JSON) are collected. With
`--out` they are written as the platform's results file `{"participants": {role: id}, "results": [...]}`
with the final `status` beside them, so the file is also what the platform's gateway serves for one shard
(`{"status", "results"}`, the leaderboard workflow's input). An update without a message prints what its
A2A state means (`STATE_MEANING`), never an empty line; the score line (TGC with its interval) is the
caller's to format (`score_line`: the CLI formats it as `eval`'s summary does). Whatever was started is
stopped at the end, also on Ctrl-C.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import tomllib
import uuid
from contextlib import ExitStack
from pathlib import Path
from collections.abc import Callable
from typing import Any

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import DataPart, Message, Part, Role, TaskArtifactUpdateEvent, TextPart
from pydantic import BaseModel, Field, ValidationError

from green_agent.a2a.purple_http import split_credentials
from green_agent.runtime.processes import ManagedProcess
from kernel.atomic import atomic_write_text
from kernel.errors import BadInputError, InfrastructureError

CARD_WAIT_S = 60.0
STREAM_TIMEOUT_S = 600.0
STATE_MEANING = {
    "submitted": "the Green accepted the request and has not started it yet",
    "working": "the Green is running the assessment",
    "input-required": "the Green waits for more input from the requester",
    "auth-required": "the Green needs credentials before it goes on",
    "completed": "the assessment finished; its results are the task's artifacts",
    "failed": "the assessment stopped on an error (the message says which)",
    "canceled": "the assessment was cancelled",
    "rejected": "the Green refused the request (the message says why)",
}
"""What each A2A task state means here, printed when an update carries no message of its own."""
ScoreLine = Callable[[dict[str, Any]], str]


def plain_score_line(item: dict[str, Any]) -> str:
    return (f"TGC {item['tgc']:.1f} ({item['score']}/{item['max_score']} tasks passed)"
            + (" - incomplete" if item.get("incomplete") else ""))


class AgentEntry(BaseModel):
    endpoint: str
    cmd: str | None = None
    role: str | None = None
    agentbeats_id: str | None = None


class Scenario(BaseModel):
    green_agent: AgentEntry
    participants: list[AgentEntry] = Field(default_factory=list)
    config: dict[str, Any] = Field(default_factory=dict)


def load_scenario(path: Path) -> Scenario:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BadInputError(f"cannot read the scenario {path}: {exc}") from None
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise BadInputError(f"scenario {path}: {'.'.join(map(str, error['loc']))}: {error['msg']}") from None
    if any(not p.role for p in scenario.participants):
        raise BadInputError(f"scenario {path}: every [[participants]] needs a role")
    return scenario


def run_scenario_file(path: Path, out: Path | None, run_dir: Path, score_line: ScoreLine = plain_score_line) -> int:
    """Run the scenario (see the module docstring) in the run folder `run_dir`; 0 iff the assessment completed."""
    scenario = load_scenario(path)
    env = {**os.environ, "RUNS_DIR": str(Path(run_dir).resolve())}
    with ExitStack() as stack:
        for index, entry in enumerate([scenario.green_agent, *scenario.participants]):
            if entry.cmd:
                stack.enter_context(_started(entry, Path(run_dir) / "logs", index, env))
        for entry in [scenario.green_agent, *scenario.participants]:
            _wait_card(entry.endpoint)
        state, results = asyncio.run(send_request(scenario, score_line))
    if out is not None:
        roles = {p.role: p.agentbeats_id or split_credentials(p.endpoint).url for p in scenario.participants}
        atomic_write_text(out, json.dumps({"status": state, "participants": roles, "results": results}, indent=2))
        print(f"results written to {out}")
    return 0 if state == "completed" else 1


class _started:
    """A scenario cmd as a managed process (stopped on exit)."""

    def __init__(self, entry: AgentEntry, log_dir: Path, index: int, env: dict[str, str]) -> None:
        argv = shlex.split(entry.cmd or "")
        if argv and argv[0] == "appworld-green":
            argv = [sys.executable, "-m", "green_agent.cli", *argv[1:]]
        log_dir.mkdir(parents=True, exist_ok=True)
        self.process = ManagedProcess(entry.role or "green", argv, log_dir / f"agent-{index}.log", env=env)

    def __enter__(self) -> ManagedProcess:
        return self.process.start()

    def __exit__(self, *exc: object) -> None:
        self.process.stop()


def _wait_card(endpoint: str) -> None:
    import time

    import requests

    deadline = time.monotonic() + CARD_WAIT_S
    while time.monotonic() < deadline:
        try:
            if requests.get(endpoint.rstrip("/") + "/.well-known/agent-card.json", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.25)
    raise InfrastructureError(f"no agent card at {endpoint} within {CARD_WAIT_S:.0f} s; is the agent starting?")


async def send_request(scenario: Scenario, score_line: ScoreLine = plain_score_line) -> tuple[str, list[Any]]:
    """Send the assessment request streaming, print every update; (final state, collected data)."""
    request = {"participants": {p.role: p.endpoint for p in scenario.participants}, "config": scenario.config}
    message = Message(role=Role.user, parts=[Part(root=TextPart(text=json.dumps(request)))],
                      message_id=uuid.uuid4().hex)
    state, results = "unknown", []
    async with httpx.AsyncClient(timeout=httpx.Timeout(STREAM_TIMEOUT_S, connect=10)) as http:
        card = await A2ACardResolver(http, scenario.green_agent.endpoint).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
        async for event in client.send_message(message):
            if isinstance(event, Message):
                print(_texts(event.parts))
                continue
            task, update = event
            state = task.status.state.value
            if isinstance(update, TaskArtifactUpdateEvent):
                print(f"[artifact] {update.artifact.name or ''}", flush=True)
                continue
            status_text = _texts(task.status.message.parts) if task.status.message else ""
            print(f"[{state}] {status_text.strip() or STATE_MEANING.get(state, 'no message')}", flush=True)
            if state == "completed":
                results = [d for artifact in task.artifacts or [] for d in _data(artifact.parts)]
    for item in results:
        if isinstance(item, dict) and "tgc" in item:
            print(score_line(item))
    return state, results


def _texts(parts: list[Part]) -> str:
    return " ".join(p.root.text for p in parts if isinstance(p.root, TextPart))


def _data(parts: list[Part]) -> list[Any]:
    found = []
    for part in parts:
        if isinstance(part.root, DataPart):
            found.append(part.root.data)
        elif isinstance(part.root, TextPart):
            try:
                found.append(json.loads(part.root.text))
            except ValueError:
                pass
    return found
