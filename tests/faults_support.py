"""Shared helpers of the fault-injection and security suites (tests/test_faults_*, test_security_*,
test_hostile_input*).

Everything here is real: AppWorld servers and the MCP gateway run as processes on free loopback
ports (`start_slot`), Blues are real A2A servers (a2a-sdk 0.3.6, served in-process by uvicorn),
kills are real SIGKILLs of one server's process group. The only stand-ins are small loopback HTTP
servers that state their contract:

- `RecordingServer`: answers every request with a fixed status and records it. It stands for a
  service that must NOT be contacted (an env server, APIs server or Blue behind a rejected input)
  or for the AgentBeats backend (`POST /battles/{id}` -> 204).
- `a2a_error_app`: an A2A endpoint whose agent card is valid but which answers every JSON-RPC
  `message/send` with a JSON-RPC error object (A2A 0.3: `{"jsonrpc", "id", "error": {code, message}}`).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from blue_agent.a2a_server import build_app, make_card
from green_agent.appworld_client import AppWorldClient
from kernel.errors import WrongActiveTaskError
from green_agent.runtime.processes import ManagedProcess
from kernel.ports import free_port
from kernel.settings import Settings, load_settings
from green_agent.runtime.slot import SlotSpec, SlotUrls, WorldSlot
from kernel.slot_credentials import require_credentials
from kernel.world_data import WorldData

FAKE_OPENAI_KEY = "sk-test-SECRET-" + "f4k3k3y0123456789abcdef"


# -- the world ---------------------------------------------------------------------------------

def first_task(root: Path) -> str:
    """The first task of the dev split (a question task: amazon orders)."""
    return WorldData(root).split("dev")[0]


def fault_settings(tmp: Path, appworld_root: Path) -> Settings:
    """Settings on the built world, isolated under `tmp`: runs dir, call log (in a folder that does not
    exist yet), no OpenAI key."""
    return load_settings().model_copy(update={
        "appworld_root": appworld_root, "runs_dir": tmp / "runs", "default_split": "dev",
        "agentbeats_mcp_log_path": tmp / "calllogs" / "calls.jsonl", "openai_api_key": None,
        "scope_predictor": "none"})


@contextmanager
def start_slot(settings: Settings, log_dir: Path) -> Iterator[WorldSlot]:
    """A world slot (APIs + env server + gateway) on free ports; always stopped."""
    spec = SlotSpec(env_port=free_port(), apis_port=free_port(), gateway_port=free_port())
    with WorldSlot(spec, appworld_root=settings.appworld_root, appworld_python=settings.appworld_python,
                   log_dir=log_dir, mcp_log_path=settings.agentbeats_mcp_log_path,
                   lock_dir=settings.runs_dir / ".slot-locks") as slot:
        yield slot


def kill(process: ManagedProcess) -> None:
    """SIGKILL one server's process group (a crash, not a shutdown) and reap it."""
    assert process.pid is not None and process.is_running(), f"{process.name} is not running"
    os.killpg(os.getpgid(process.pid), signal.SIGKILL)
    if process.popen is not None:  # our child (exec'd): reap it; a forked server is reaped by the fork server
        process.popen.wait(timeout=10)
    deadline = time.monotonic() + 10
    while process.is_running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process.is_running(), f"{process.name} survived SIGKILL"


def revive_slot(slot: WorldSlot) -> None:
    """Bring back whichever AppWorld server a test killed.

    A dead APIs server poisons the env server (AppWorld 0.1.3: every later `/initialize` fails in
    `Requester.close_all`), so when the APIs server died both are restarted, in parallel.
    """
    servers = slot.servers
    assert servers is not None
    restart = [p for p in (servers.apis, servers.environment) if not p.is_running()]
    if servers.apis in restart and servers.environment not in restart:
        servers.environment.stop(grace_s=3)
        restart.append(servers.environment)
    for process in restart:
        process.start()
    urls = {servers.apis.name: slot.urls.apis_url, servers.environment.name: slot.urls.env_url}
    for process in restart:
        process.wait_ready(urls[process.name] + "/", timeout_s=120)


MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def mcp_call(i: int, name: str, arguments: dict) -> dict:
    """A JSON-RPC `tools/call` body (the gateway's Streamable HTTP endpoint is stateless: no handshake needed)."""
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def complete_through_gateway(text: str) -> dict:
    """Finish the task as a Blue does: `supervisor__complete_task` at the MCP endpoint of the task message."""
    mcp_url = next(line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("MCP endpoint (Streamable HTTP): "))
    reply = requests.post(mcp_url, json=mcp_call(1, "supervisor__complete_task", {}), headers=MCP_HEADERS, timeout=60)
    reply.raise_for_status()
    return reply.json()


def assert_no_open_world(urls: SlotUrls, task_id: str) -> None:
    """The env server holds no world for the task (0.1.3 answers 500 for an absent task, B1)."""
    try:
        AppWorldClient(urls.env_url, retries=1, credentials=require_credentials(urls.apis_url)).task_completed(task_id)
    except WrongActiveTaskError:
        return
    raise AssertionError(f"the env server at {urls.env_url} still has an open world for {task_id}")


# -- in-process HTTP servers -------------------------------------------------------------------

class InProcessServer:
    """An ASGI app served by uvicorn on a free loopback port in a daemon thread (context manager)."""

    def __init__(self, app: Any, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> "InProcessServer":
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise AssertionError(f"in-process server on :{self.port} did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def blue_server(name: str, handler: Callable[[str], Awaitable[str]]) -> InProcessServer:
    """A real A2A Blue (the shipped offline Blues' wiring) running `handler` on each task message."""
    port = free_port()
    card = make_card(name, "fault-injection Blue", f"http://127.0.0.1:{port}/", "stub")
    return InProcessServer(build_app(card, handler), port)


def a2a_error_app(name: str = "A2A error Blue") -> Starlette:
    """Serves a valid agent card; answers every JSON-RPC request with a JSON-RPC error object."""
    async def card(request: Request) -> Response:
        base = str(request.base_url)
        return JSONResponse({"name": name, "description": "answers errors", "url": base, "version": "0",
                             "capabilities": {}, "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
                             "skills": []})

    async def rpc(request: Request) -> Response:
        body = json.loads(await request.body() or b"{}")
        return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"),
                             "error": {"code": -32603, "message": "Internal error: the blue exploded"}})

    return Starlette(routes=[Route("/.well-known/agent.json", card), Route("/.well-known/agent-card.json", card),
                             Route("/", rpc, methods=["POST"])])


class RecordingServer(InProcessServer):
    """Answers every request with `status` (JSON `{}` body unless 204) and records method, path and body."""

    def __init__(self, status: int = 204) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = status

        async def anything(request: Request) -> Response:
            self.requests.append({"method": request.method, "path": request.url.path,
                                  "body": (await request.body()).decode("utf-8", "replace")})
            return Response(status_code=self.status) if self.status == 204 else JSONResponse({}, self.status)

        methods = ["GET", "POST", "PUT", "DELETE", "PATCH"]
        super().__init__(Starlette(routes=[Route("/{path:path}", anything, methods=methods)]))


# -- secrets -----------------------------------------------------------------------------------

_PASSWORD_INSERT = re.compile(r"INSERT INTO account_passwords", re.IGNORECASE)


def world_passwords(root: Path) -> set[str]:
    """Every account password of the world: base DB tables with a `password` column and task DB inserts."""
    found: set[str] = set()
    for db in sorted((root / "data" / "base_dbs").glob("*.db")):
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            tables = [r[0] for r in connection.execute("select name from sqlite_master where type='table'")]
            for table in tables:
                columns = [r[1] for r in connection.execute(f'pragma table_info("{table}")')]
                if "password" in columns:
                    found.update(str(r[0]) for r in connection.execute(f'select password from "{table}"') if r[0])
        finally:
            connection.close()
    for path in (root / "data" / "tasks").glob("*/dbs/*.jsonl"):
        for line in path.read_text(errors="replace").splitlines():
            if _PASSWORD_INSERT.search(line):
                sql, params, _ = json.loads(line)
                columns = [c.strip() for c in sql.split("(", 1)[1].split(")", 1)[0].split(",")]
                found.add(str(params[columns.index("password")]))
    return {p for p in found if len(p) >= 6}


def leaks(texts: dict[str, str], secrets: set[str]) -> list[str]:
    """`where: secret` for every secret found in any of the named texts."""
    return [f"{where}: {secret[:6]}..." for where, text in texts.items() for secret in secrets if secret in text]


def files_text(directory: Path) -> dict[str, str]:
    """Every file under `directory` as text (binary files decoded leniently)."""
    return {str(p): p.read_bytes().decode("utf-8", "replace") for p in sorted(directory.rglob("*")) if p.is_file()}


def wait_until(predicate: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def answers(url: str) -> bool:
    try:
        requests.get(url, timeout=1)
    except requests.RequestException:
        return False
    return True


# -- shared fixtures (modules opt in with `pytest_plugins = ["faults_support"]`) -----------------

@pytest.fixture(scope="session")
def shared_env(tmp_path_factory: pytest.TempPathFactory, appworld_root: Path) -> Settings:
    """Isolated settings for the suites that share one healthy slot."""
    return fault_settings(tmp_path_factory.mktemp("faults-shared"), appworld_root)


@pytest.fixture(scope="session")
def shared_slot(shared_env: Settings) -> Iterator[WorldSlot]:
    """One healthy world slot for the Blue-fault, slot-lock and secrets suites (nobody kills it)."""
    with start_slot(shared_env, shared_env.runs_dir / "slot-logs") as slot:
        yield slot


@pytest.fixture(scope="session")
def shared_task(shared_env: Settings) -> str:
    return first_task(shared_env.appworld_root)
