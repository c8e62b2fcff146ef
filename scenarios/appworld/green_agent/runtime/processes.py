"""Start and stop the long-running child processes we own (AppWorld servers, gateway, agents).

Each process is started in its own session (process group), so stopping it also stops anything
it spawned. Its log is 0600 while it runs and scrubbed of every registered secret once it stopped
(`kernel.scrubber.scrub_file`): the logs live in the run directory. A readiness probe polls a URL
until it answers or a deadline passes; a process that exits early is reported with the tail of its log.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import requests

from kernel.errors import InfrastructureError
from kernel.entry import TERMINATING
from kernel.liveness import group_alive
from kernel.scrubber import scrub_file

DEFAULT_READY_TIMEOUT_S = 90.0
STOP_GRACE_S = 10.0
DEFERRED_SIGNALS = (signal.SIGINT, *TERMINATING)


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP back while a child process is being created, then deliver them.

    A KeyboardInterrupt raised between the fork and the moment we hold the child's pid would leave a
    server running that nobody can stop (seen: `world up` interrupted while starting left an env
    server that bound its port seconds later). Off the main thread (where handlers cannot be set) it
    does nothing: the main thread is the one that gets the signal.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, frame: held.append(signum)) for sig in DEFERRED_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sig in held:
            signal.raise_signal(sig)


class ManagedProcess:
    """A child process with a log file, a readiness URL and a reliable stop."""

    def __init__(self, name: str, argv: Sequence[str], log_path: Path, env: Mapping[str, str] | None = None,
                 cwd: Path | None = None) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.popen: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def start(self) -> "ManagedProcess":
        log = open_private_log(self.log_path)
        try:
            with interrupts_deferred():  # a Ctrl-C inside Popen would orphan the child we could not name
                self.popen = subprocess.Popen(
                    self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    env=self.env, cwd=self.cwd, start_new_session=True,
                )
        finally:
            log.close()
        return self

    def wait_ready(self, url: str, timeout_s: float = DEFAULT_READY_TIMEOUT_S) -> float:
        """Poll `url` until it answers; return the seconds it took. Raises InfrastructureError."""
        started = time.monotonic()
        while time.monotonic() - started < timeout_s:
            exited = self.exit_description()
            if exited is not None:
                raise InfrastructureError(
                    f"{self.name} {exited} during start-up; last log lines ({self.log_path}):\n{self.log_tail()}"
                )
            try:
                requests.get(url, timeout=2)
                return time.monotonic() - started
            except requests.RequestException:
                time.sleep(0.1)
        self.stop()
        raise InfrastructureError(f"{self.name} did not answer at {url} within {timeout_s:.0f} s; see {self.log_path}")

    def is_running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def exit_description(self) -> str | None:
        """None while the process runs (or was never started), else how it ended."""
        if self.popen is None or self.popen.poll() is None:
            return None
        return f"exited with code {self.popen.returncode}"

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGINT the process group, then SIGKILL it after `grace_s`. Safe to call twice."""
        if self.popen is None:
            return
        stop_process_group(self.popen.pid, grace_s)
        try:
            self.popen.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
        scrub_file(self.log_path)

    @contextlib.contextmanager
    def running(self, ready_url: str, timeout_s: float = DEFAULT_READY_TIMEOUT_S) -> Iterator["ManagedProcess"]:
        """Started and answering at `ready_url` inside the block; stopped on the way out, whatever happened."""
        try:
            self.start()
            self.wait_ready(ready_url, timeout_s=timeout_s)
            yield self
        finally:
            self.stop()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def open_private_log(path: Path):  # noqa: ANN201 - a binary file object
    """`path` opened for appending, created 0600 (made 0600 if it was not): a child's log may print a
    secret (a guarded URL in a traceback, the battle's endpoint) until `scrub_file` runs at its stop."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, "ab")


def stop_process_group(pid: int, grace_s: float = STOP_GRACE_S) -> None:
    """Stop a process group led by `pid`: SIGINT, wait, then SIGKILL."""
    try:
        pgid = os.getpgid(pid)
    except ProcessLookupError:
        return
    for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGKILL, 2.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if not group_alive(pgid):
                return
            time.sleep(0.05)
