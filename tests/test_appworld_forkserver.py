"""The AppWorld fork server (world/serve.py forkserver + green_agent.runtime.forkserver), on the real world.

Each test uses its own fork server (not the session's shared one), so killing or closing it here
cannot disturb other tests.
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import requests

from green_agent.runtime.forkserver import ForkedProcess, ForkServer, fork_server
from green_agent.runtime.appworld_servers import AppWorldServers, AppWorldServerSpec
from kernel.errors import InfrastructureError
from kernel.ports import free_port, port_is_free
from kernel.settings import Settings
from kernel.world_data import WorldData

pytestmark = pytest.mark.e2e
GUARD = "g" * 43
GUARDED = {"X-AppWorld-Guard": GUARD}


@pytest.fixture()
def server(settings: Settings, appworld_root: Path, tmp_path: Path) -> Iterator[ForkServer]:
    forks = ForkServer(settings.appworld_python, appworld_root, tmp_path / "forkserver.log").start()
    try:
        yield forks
    finally:
        forks.close()


def _serve(forks: ForkServer, kind: str, port: int, log: Path) -> int:
    pid = forks.spawn(kind, port, log, GUARD)  # type: ignore[arg-type]
    return pid


def _wait_answering(url: str, pid: int) -> None:
    process = ForkedProcess("probe", "apis", 0, Path("/dev/null"), Path("."), Path("."), GUARD)
    process._pid = pid  # noqa: SLF001 - reuse the readiness loop on a pid we got by hand
    process.wait_ready(url, timeout_s=60)


def test_forked_pair_serves_a_task_and_each_server_is_its_own_session(server: ForkServer, appworld_root: Path,
                                                                      tmp_path: Path) -> None:
    env_port, apis_port = free_port(), free_port()
    apis_pid = _serve(server, "apis", apis_port, tmp_path / "apis.log")
    env_pid = _serve(server, "environment", env_port, tmp_path / "env.log")
    try:
        for pid, port in ((apis_pid, apis_port), (env_pid, env_port)):
            _wait_answering(f"http://127.0.0.1:{port}/", pid)
            assert os.getpgid(pid) == pid  # its own process group: stopping it stops nothing else
            assert psutil.Process(pid).ppid() == server.popen.pid  # type: ignore[union-attr]
        task_id = WorldData(appworld_root).split("dev")[0]
        reply = requests.post(f"http://127.0.0.1:{env_port}/initialize", headers=GUARDED, json={
            "task_id": task_id, "experiment_name": "forkserver_test",
            "remote_apis_url": f"http://127.0.0.1:{apis_port}/_guard/{GUARD}"}, timeout=120)
        assert reply.status_code == 200, (reply.text[:500], (tmp_path / "env.log").read_text()[-2000:])
        assert reply.json()["output"]["task_id"] == task_id
        profile = requests.get(f"http://127.0.0.1:{apis_port}/supervisor/profile", headers=GUARDED, timeout=30)
        assert profile.status_code == 200 and "@" in profile.json()["email"]
        assert requests.get(f"http://127.0.0.1:{apis_port}/supervisor/profile", timeout=30).status_code == 404
        assert requests.post(f"http://127.0.0.1:{env_port}/close", json={"task_id": task_id}, headers=GUARDED,
                             timeout=60).ok
    finally:
        for pid in (apis_pid, env_pid):
            os.killpg(pid, signal.SIGINT)
    for pid in (apis_pid, env_pid):
        psutil.wait_procs([p for p in [_process(pid)] if p], timeout=15)
    assert port_is_free(env_port) and port_is_free(apis_port)


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None


def test_bad_requests_are_refused_and_the_fork_server_keeps_serving(server: ForkServer, tmp_path: Path) -> None:
    with pytest.raises(InfrastructureError, match="could not start the nonsense server: bad request"):
        server.spawn("nonsense", free_port(), tmp_path / "x.log", GUARD)  # type: ignore[arg-type]
    with pytest.raises(InfrastructureError, match="bad request: ValueError: the guard secret must have at least"):
        server.spawn("apis", free_port(), tmp_path / "x.log", "short")
    assert server.alive()
    port = free_port()
    pid = server.spawn("apis", port, tmp_path / "apis.log", GUARD)
    _wait_answering(f"http://127.0.0.1:{port}/", pid)
    os.killpg(pid, signal.SIGINT)


def test_a_relative_log_path_means_the_callers_directory_not_the_fork_servers(
        server: ForkServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `eval --out runs/x` hands relative log paths down; the fork server runs in the AppWorld root
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    port = free_port()
    pid = server.spawn("apis", port, Path("logs") / "apis.log", GUARD)
    try:
        _wait_answering(f"http://127.0.0.1:{port}/", pid)
        assert (tmp_path / "logs" / "apis.log").is_file()
    finally:
        os.killpg(pid, signal.SIGINT)


def test_a_server_that_cannot_bind_fails_start_up_with_its_log(settings: Settings, appworld_root: Path,
                                                               tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = ForkedProcess("AppWorld APIs server", "apis", port, tmp_path / "apis.log", settings.appworld_python,
                                appworld_root, GUARD).start()
        with pytest.raises(InfrastructureError, match=r"exited during start-up(.|\n)*address already in use"):
            process.wait_ready(f"http://127.0.0.1:{port}/__never__", timeout_s=60)
        assert not process.is_running()


def test_slot_servers_come_from_one_shared_fork_server_and_stop_cleanly(settings: Settings, appworld_root: Path,
                                                                        tmp_path: Path) -> None:
    specs = [AppWorldServerSpec(appworld_root=appworld_root, appworld_python=settings.appworld_python,
                                env_port=free_port(), apis_port=free_port(), log_dir=tmp_path / f"slot{i}")
             for i in range(2)]
    with AppWorldServers(specs[0]) as first, AppWorldServers(specs[1]) as second:
        parents = {psutil.Process(p.pid).ppid() for p in (first.apis, first.environment, second.apis,  # type: ignore[arg-type]
                                                         second.environment)}
        shared = fork_server(settings.appworld_python, appworld_root, tmp_path)
        assert parents == {shared.popen.pid}  # type: ignore[union-attr]
        pids = [first.apis.pid, second.environment.pid]
    assert all(_process(pid) is None or _process(pid).status() == psutil.STATUS_ZOMBIE for pid in pids)  # type: ignore[union-attr]
    assert all(port_is_free(p) for s in specs for p in (s.env_port, s.apis_port))


def test_a_dead_fork_server_is_reported_and_replaced(settings: Settings, appworld_root: Path, tmp_path: Path) -> None:
    forks = ForkServer(settings.appworld_python, appworld_root, tmp_path / "forkserver.log").start()
    os.kill(forks.popen.pid, signal.SIGINT)  # type: ignore[union-attr]
    assert forks.alive()  # a terminal's Ctrl-C is for its owner, which stops the servers it asked for
    forks.popen.kill()  # type: ignore[union-attr]
    forks.popen.wait(timeout=10)  # type: ignore[union-attr]
    with pytest.raises(InfrastructureError, match="fork server is not running"):
        forks.spawn("apis", free_port(), tmp_path / "apis.log", GUARD)
    forks.close()

    shared = fork_server(settings.appworld_python, appworld_root, tmp_path)
    shared.popen.kill()  # type: ignore[union-attr]  # servers it forked earlier keep running: they are not its group
    shared.popen.wait(timeout=10)  # type: ignore[union-attr]
    replacement = fork_server(settings.appworld_python, appworld_root, tmp_path)
    assert replacement is not shared and replacement.alive()



FREEZE_PROBE = """
import gc, importlib.util, sys
spec = importlib.util.spec_from_file_location("serve", sys.argv[1])
serve = importlib.util.module_from_spec(spec)
spec.loader.exec_module(serve)
held = [[i] for i in range(100_000)]  # tracked objects, as an import leaves behind
serve.share_with_children()
print(gc.get_freeze_count(), sum(gc.get_count()))
"""


def test_the_fork_server_freezes_what_it_holds_before_forking() -> None:
    """`share_with_children` (called before the first fork) moves every tracked object into the permanent
    generation, which a forked server's collections never visit (so never copy); bench_capacity measures
    what it buys (docs/eval.md)."""
    import subprocess
    import sys

    from green_agent.runtime.forkserver import SERVE_SCRIPT

    done = subprocess.run([sys.executable, "-c", FREEZE_PROBE, str(SERVE_SCRIPT)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    frozen, still_collectable = map(int, done.stdout.split())
    assert frozen > 100_000 and still_collectable < 100, done.stdout
