"""AppWorld servers forked from one warm process, instead of each one importing AppWorld from scratch.

Every AppWorld server spends about 10 CPU-seconds importing the 12 apps' API modules before it can
answer; a world slot has two of them, so a 2-worker eval on a 2-core machine spent its first 20 s
importing the same code four times. A fork server (`world/serve.py forkserver`, protocol in its
docstring) imports it once and forks each server in about 0.3 CPU-seconds; the children also share
the imported code's memory pages.

- `fork_server(python, root, log_dir)`: the fork server for that AppWorld Python and root, started on
  first use (about 10 s) and shared by every slot and thread of this process; a dead one is replaced.
  Fork servers exit when this process exits (their stdin closes; `atexit` also waits for them).
- `ForkedProcess`: a `ManagedProcess` whose process comes from the fork server. It is not our child,
  so liveness is read by pid; it leads its own process group, so stopping it works as for any other.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Literal

import psutil

from kernel.errors import InfrastructureError
from green_agent.runtime.processes import (STOP_GRACE_S, ManagedProcess, interrupts_deferred, open_private_log,
                                          stop_process_group)
from kernel.scrubber import scrub_file
from kernel.settings import SCENARIO_DIR

SERVE_SCRIPT = SCENARIO_DIR / "world" / "serve.py"
FORK_SERVER_READY_TIMEOUT_S = 120.0
SPAWN_TIMEOUT_S = 30.0
ServerKind = Literal["apis", "environment"]


class ForkServer:
    """The Green's end of one `serve.py forkserver` process (thread-safe)."""

    def __init__(self, python: Path, root: Path, log_path: Path) -> None:
        self.python, self.root, self.log_path = Path(python), Path(root), Path(log_path)
        self.popen: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._lock = threading.Lock()

    def start(self, timeout_s: float = FORK_SERVER_READY_TIMEOUT_S) -> "ForkServer":
        with open_private_log(self.log_path) as log:
            self.popen = subprocess.Popen(
                [str(self.python), str(SERVE_SCRIPT), "forkserver"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=log, env={**os.environ, "APPWORLD_ROOT": str(self.root)}, cwd=self.root,
                start_new_session=True)
        try:
            reply = self._read_reply(timeout_s)
        except InfrastructureError:
            self.close()
            raise
        if not reply.get("ready"):
            self.close()
            raise InfrastructureError(f"the AppWorld fork server answered {reply!r} instead of ready; see {self.log_path}")
        return self

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def spawn(self, server: ServerKind, port: int, log_path: Path, guard: str) -> int:
        """Fork one server listening on 127.0.0.1:`port`, guarded by `guard`, logging to `log_path`; returns its pid."""
        # the fork server's working directory is the AppWorld root: a relative path would land (or fail) there
        request = json.dumps({"server": server, "port": port, "log_path": str(Path(log_path).resolve()),
                              "guard": guard}) + "\n"
        with self._lock:
            if not self.alive() or self.popen is None or self.popen.stdin is None:
                raise InfrastructureError(f"the AppWorld fork server is not running; see {self.log_path}")
            try:
                self.popen.stdin.write(request.encode())
                self.popen.stdin.flush()
            except OSError as exc:
                raise InfrastructureError(f"the AppWorld fork server stopped taking requests ({exc}); "
                                          f"see {self.log_path}") from None
            try:
                reply = self._read_reply(SPAWN_TIMEOUT_S)
            except InfrastructureError:
                self.close()  # a late answer would be read as the next request's: never reuse this one
                raise
        if "pid" not in reply:
            raise InfrastructureError(f"the AppWorld fork server could not start the {server} server: "
                                      f"{reply.get('error', reply)}")
        return int(reply["pid"])

    def close(self, timeout_s: float = 5.0) -> None:
        """Close its stdin (it exits), wait, then kill it. Servers it forked are not touched."""
        if self.popen is None:
            return
        try:
            if self.popen.stdin is not None:
                self.popen.stdin.close()
            self.popen.wait(timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired):
            stop_process_group(self.popen.pid, grace_s=1.0)
        finally:
            if self.popen.stdout is not None:
                self.popen.stdout.close()

    def _read_reply(self, timeout_s: float) -> dict[str, Any]:
        assert self.popen is not None and self.popen.stdout is not None
        fd = self.popen.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise InfrastructureError(f"the AppWorld fork server did not answer within {timeout_s:.0f} s; "
                                          f"see {self.log_path}")
            ready, _, _ = select.select([fd], [], [], min(remaining, 0.5))
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                code = self.popen.wait(timeout=5)
                raise InfrastructureError(f"the AppWorld fork server exited (code {code}); last log lines "
                                          f"({self.log_path}):\n{_tail(self.log_path)}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            raise InfrastructureError(f"the AppWorld fork server printed {line[:200]!r}; see {self.log_path}") from None


_FORK_SERVERS: dict[tuple[str, str], ForkServer] = {}
_FORK_SERVERS_LOCK = threading.Lock()


def fork_server(python: Path, root: Path, log_dir: Path) -> ForkServer:
    """The running fork server for (`python`, `root`), started now if there is none (or it died)."""
    key = (str(python), str(Path(root).resolve()))
    with _FORK_SERVERS_LOCK:  # held while starting: a second caller waits for the warm one
        server = _FORK_SERVERS.get(key)
        if server is None or not server.alive():
            if server is not None:
                server.close()
            server = ForkServer(python, root, Path(log_dir) / "appworld-forkserver.log").start()
            _FORK_SERVERS[key] = server
        return server


@atexit.register
def shutdown_fork_servers() -> None:
    """Stop every fork server of this process (the servers they forked are stopped by their owners)."""
    with _FORK_SERVERS_LOCK:
        servers = list(_FORK_SERVERS.values())
        _FORK_SERVERS.clear()
    for server in servers:
        server.close()


class ForkedProcess(ManagedProcess):
    """An AppWorld server forked by the fork server; see the module docstring."""

    def __init__(self, name: str, server: ServerKind, port: int, log_path: Path, python: Path, root: Path,
                 guard: str) -> None:
        super().__init__(name, [str(python), str(SERVE_SCRIPT), "forkserver", f"<{server} :{port}>"], log_path)
        self.server, self.port, self.python, self.root = server, port, python, root
        self._guard = guard
        self._pid: int | None = None

    @property
    def pid(self) -> int | None:
        return self._pid

    def start(self) -> "ForkedProcess":
        open_private_log(self.log_path).close()  # the fork server appends to it: created 0600 here
        server = fork_server(self.python, self.root, self.log_path.parent)
        with interrupts_deferred():  # between the request and its answer a Ctrl-C would orphan the child
            self._pid = server.spawn(self.server, self.port, self.log_path, self._guard)
        return self

    def is_running(self) -> bool:
        if self._pid is None:
            return False
        try:
            return psutil.Process(self._pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    def exit_description(self) -> str | None:
        return "exited" if self._pid is not None and not self.is_running() else None

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGINT its process group, SIGKILL after `grace_s`; a zombie counts as stopped. Safe to call twice.
        Then its log is scrubbed of every registered secret (the guard, in a traceback's URL)."""
        self._signal_stop(grace_s)
        if self._pid is not None:
            scrub_file(self.log_path)

    def _signal_stop(self, grace_s: float) -> None:
        if self._pid is None:
            return
        for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGKILL, 2.0)):
            try:
                os.killpg(self._pid, sig)
            except (ProcessLookupError, PermissionError):
                return
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline:
                if not self.is_running():
                    return
                time.sleep(0.05)


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
