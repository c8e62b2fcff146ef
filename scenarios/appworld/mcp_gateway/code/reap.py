"""Killing what agent code left running, within a bound, whatever it keeps starting.

After each execution the session kills the processes the code started (AppWorld's REPL allows no subprocess)
and keeps the REPL; at teardown it kills everything. Both are our work, so both have a fixed bound whatever the
code does: a thread of the REPL that forks all the time must not stretch them (it made executions take up to
178 s when each pass waited for the zombies it had made). The means, best first:
- a cgroup with a freezer (`sandbox.Cgroup`): freeze it, kill every task but the REPL (none can fork while
  frozen), thaw: one pass;
- otherwise `kill_strays` here: stop the REPL (SIGSTOP: none of its threads forks meanwhile), kill every stray
  listed, list again, until none is left or the deadline passed, then continue the REPL. A process with SIGKILL
  pending can no longer fork, so each pass leaves only what was born during it. The lists come from the battle's
  uid (landlock, `battle_uid.py`) or the sandbox's pid namespace (bubblewrap without a cgroup,
  `namespace_strays`). Zombies are not waited for (their parent, the REPL, may never reap them).
When the bound passes with strays left, the caller ends the whole sandbox at once (the REPL included).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import psutil

PASS_PAUSE_S = 0.005


def _signal(pid: int, number: int) -> bool:
    try:
        os.kill(pid, number)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def kill_strays(strays: Callable[[], list[int]], repl: int | None, deadline: float) -> bool:
    """SIGKILL every pid `strays()` lists (never `repl`, which is stopped meanwhile) until it lists none; False if
    `deadline` (time.monotonic) passed first."""
    stopped = repl is not None and _signal(repl, signal.SIGSTOP)
    try:
        while True:
            found = [pid for pid in strays() if pid != repl]
            if not found:
                return True
            for pid in found:
                _signal(pid, signal.SIGKILL)
            if time.monotonic() >= deadline:
                return False
            time.sleep(PASS_PAUSE_S)
    finally:
        if stopped and repl is not None:
            _signal(repl, signal.SIGCONT)


def nspid(pid: int) -> list[str]:
    """`pid`'s ids in each pid namespace it is in, outermost first ([] if it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return []
    return next((line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), [])


def is_sandbox_core(pid: int) -> bool:
    """bubblewrap itself, its init (pid 1 of the sandbox's namespace) or the REPL (pid 2): never a stray."""
    ids = nspid(pid)
    return len(ids) <= 1 or ids[-1] in ("1", "2")


def namespace_strays(outer: int) -> list[int]:
    """The live processes of the bubblewrap sandbox whose outer process is `outer`, but its core: everything in its
    pid namespace descends from it (an orphan is re-parented to the namespace's init)."""
    try:
        children = psutil.Process(outer).children(recursive=True)
    except psutil.Error:
        return []
    found = []
    for child in children:
        try:
            if child.status() != psutil.STATUS_ZOMBIE and not is_sandbox_core(child.pid):
                found.append(child.pid)
        except psutil.Error:
            continue
    return found


def namespace_repl(outer: int) -> int | None:
    """The host pid of the REPL (pid 2 of the namespace) of the bubblewrap sandbox `outer`, if it runs."""
    try:
        children = psutil.Process(outer).children(recursive=True)
    except psutil.Error:
        return None
    return next((child.pid for child in children if nspid(child.pid)[-1:] == ["2"]), None)
