"""SIGINT and SIGTERM to the CLI: every child process ends and nothing is left listening.

`appworld-green battle` attached to the shared slot with the built-in reference Blue (its child),
signalled once the Blue child listens; `appworld-green eval --slot-ports` on free ports (children:
APIs + env server, gateway, later the Blue), signalled while its slot starts. The CLI's whole
process tree is sampled with psutil until the signal, so children that start late are counted too.
`world up` is not driven here: it always starts slot 0 on the default ports 8000/9000/10000, which
tests must not use.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from faults_support import assert_no_open_world
from kernel.ports import free_port, port_is_free
from kernel.settings import Settings
from green_agent.runtime.slot import WorldSlot

pytest_plugins = ["faults_support"]
pytestmark = pytest.mark.e2e
EXIT_TIMEOUT_S = 60
READY_S = 300
"""A safety net, not a bound: how long a started process may take to be ready (a Blue's imports took over 90 s on
2 cores at load 14, beside the suite, two CPU burners and a code-mode eval)."""


def _cli(args: list[str], settings: Settings, out: Path) -> subprocess.Popen:
    env = {**os.environ, "APPWORLD_ROOT": str(settings.appworld_root), "RUNS_DIR": str(settings.runs_dir),
           "AGENTBEATS_MCP_LOG_PATH": str(settings.agentbeats_mcp_log_path), "DEFAULT_SPLIT": settings.default_split}
    env.pop("OPENAI_API_KEY", None)
    argv = [str(Path(sys.executable).parent / "appworld-green"), "--env-file", "/dev/null", *args]
    return subprocess.Popen(argv, env=env, stdout=open(out / "stdout.txt", "wb"), stderr=open(out / "stderr.txt", "wb"))


class Tree:
    """Every descendant of a process seen so far, and the ports they listened on."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)
        self.pids: dict[int, str] = {}
        self.ports: set[int] = set()

    def sample(self) -> None:
        try:
            children = self.root.children(recursive=True)
        except psutil.NoSuchProcess:
            return
        for child in children:
            try:
                self.pids.setdefault(child.pid, " ".join(child.cmdline())[:200])
                self.ports.update(c.laddr.port for c in child.net_connections(kind="inet") if c.status == "LISTEN")
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue

    def wait_for(self, predicate, timeout_s: float, what: str) -> None:  # noqa: ANN001
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.sample()
            if predicate(self):
                return
            assert self.root.is_running(), f"the CLI exited before {what}"
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; children seen: {list(self.pids.values())}")


def _assert_all_gone(process: subprocess.Popen, tree: Tree, out: Path, expected_code: int) -> None:
    code = process.wait(timeout=EXIT_TIMEOUT_S)
    stderr = (out / "stderr.txt").read_text(errors="replace")
    assert code == expected_code, stderr[-1500:]
    alive = [f"{pid}: {cmd}" for pid, cmd in tree.pids.items()
             if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert alive == [], f"children left running: {alive}"
    deadline = time.monotonic() + 5  # sockets of SIGKILLed processes close with them
    while time.monotonic() < deadline and not all(port_is_free(p) for p in tree.ports):
        time.sleep(0.1)
    assert [p for p in tree.ports if not port_is_free(p)] == [], "a port is still held"


def _is_blue(cmd: str) -> bool:
    return "blue_agent.reference" in cmd


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_to_battle_stops_its_blue_and_closes_the_world(sig: signal.Signals, shared_env: Settings,
                                                              shared_slot: WorldSlot, shared_task: str,
                                                              tmp_path: Path) -> None:
    urls = shared_slot.urls
    process = _cli(["battle", "--task-id", shared_task, "--blue", "reference", "--predictor", "none",
                    "--env-url", urls.env_url, "--apis-url", urls.apis_url, "--gateway-url", urls.gateway_url or "",
                    "--out", str(tmp_path / "run"), "--deadline", "60"], shared_env, tmp_path)
    tree = Tree(process.pid)
    try:
        tree.wait_for(lambda t: any(_is_blue(c) for c in t.pids.values()) and t.ports, READY_S,
                      "the Blue child to listen")
        process.send_signal(sig)
        _assert_all_gone(process, tree, tmp_path, 130)
    finally:
        if process.poll() is None:
            process.kill()
    assert "interrupted" in (tmp_path / "stderr.txt").read_text()
    assert_no_open_world(urls, shared_task)


def test_sigint_to_eval_while_its_slot_starts_stops_every_server(shared_env: Settings, shared_task: str,
                                                                 tmp_path: Path) -> None:
    ports = [free_port() for _ in range(3)]
    out = tmp_path / "eval"
    process = _cli(["eval", "--task-ids", shared_task, "--blue", "reference", "--predictor", "none", "--out", str(out),
                    "--slot-ports", ":".join(map(str, ports)), "--deadline", "60", "--max-infra-retries", "0"],
                   shared_env, tmp_path)
    tree = Tree(process.pid)
    try:
        tree.wait_for(lambda t: len(t.pids) >= 3, READY_S, "the slot's servers to start")
        time.sleep(1.0)  # let them get as far as importing AppWorld
        process.send_signal(signal.SIGINT)
        _assert_all_gone(process, tree, tmp_path, 130)
    finally:
        if process.poll() is None:
            process.kill()
    assert all(port_is_free(p) for p in ports)
    assert (out / "results.json").is_file()  # written from disk even after Ctrl-C
