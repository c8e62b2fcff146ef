"""Reap what a slot owner leaves running when it dies without stopping its slot (SIGKILL, OOM, a lost node agent).

Every run that starts slots uses it: a Ray slot actor, and `battle` and local `eval` (`reaped_if_killed`).

A slot's servers, gateway and Blue run in sessions of their own, so neither Ray's per-worker process
group cleanup nor a signal to the actor reaches them. `start_reaper(pid)` starts
`python -m green_agent.runtime.reaper <pid> <tag>` in a session of its own, after putting `<tag>` in
the actor's environment (`TAG_ENV`), which every process the slot starts inherits. Every `POLL_S` it
notes the actor's descendants (pid and start time, so a reused pid is never hit); once the actor is
gone it sends SIGTERM to every noted process still running, their current descendants and every
process that carries the tag (a server whose parent died first is no one's descendant any more),
SIGKILL to those left after `GRACE_S`, removes the actor's scratch directory if it was given one (a
killed actor never ran its own cleanup), sweeps the code-mode sandbox uids its gateways left (the landlock
fallback's processes run as a uid of their own, with a cleared environment and perhaps no parent of ours:
`battle_uid.sweep_abandoned`, which touches only uids no live battle holds), and exits. An actor that
stopped its slot leaves nothing to kill.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import psutil

POLL_S = 0.5
GRACE_S = 3.0
TAG_ENV = "APPWORLD_GREEN_SLOT_TAG"


def start_reaper(pid: int, scratch: str | os.PathLike[str] | None = None) -> subprocess.Popen:
    """Tag this process's environment and watch `pid` from a process of its own session (it outlives the
    actor's process group). Call it before the slot starts anything; `scratch` is removed once `pid` is gone."""
    # always a tag of its own: an inherited one (a parent that ran a reaper itself) would make this reaper,
    # once `pid` dies, end every process the parent tagged: other runs' slots, not only this one's
    tag = os.environ[TAG_ENV] = f"{pid}-{uuid.uuid4().hex}"
    extra = [os.fspath(scratch)] if scratch is not None else []
    return subprocess.Popen([sys.executable, "-m", "green_agent.runtime.reaper", str(pid), tag, *extra],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


@contextlib.contextmanager
def reaped_if_killed() -> Iterator[None]:
    """For a command that starts slots and Blues (`battle`, local `eval`): a reaper watches this process
    while the block runs; the block's own cleanup stops everything, so on leaving it the reaper is ended
    too. Only a SIGKILL (no cleanup) leaves the reaper to end what the process had started."""
    inherited = os.environ.get(TAG_ENV)
    reaper = start_reaper(os.getpid())
    try:
        yield
    finally:
        reaper.terminate()
        try:
            reaper.wait(timeout=5)
        except subprocess.TimeoutExpired:
            reaper.kill()
        # leave the environment as it was: a caller that goes on starting processes (a test, a driver running
        # several commands in one process) must not tag them with a reaper that is gone
        if inherited is None:
            os.environ.pop(TAG_ENV, None)
        else:
            os.environ[TAG_ENV] = inherited


def tagged(tag: str, skip: set[int]) -> dict[int, float]:
    """pid -> start time of every process whose environment (as it was exec'd) carries `tag`."""
    needle = f"{TAG_ENV}={tag}".encode()
    found = {}
    for proc in psutil.process_iter(["pid"]):
        if proc.pid in skip:
            continue
        try:
            with open(f"/proc/{proc.pid}/environ", "rb") as handle:
                if needle in handle.read().split(b"\0"):
                    found[proc.pid] = proc.create_time()
        except (OSError, psutil.Error):
            continue
    return found


def descendants(pid: int, skip: int) -> dict[int, float]:
    """pid -> start time of every descendant of `pid` but `skip` (this reaper)."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return {}
    noted = {}
    for child in children:
        try:
            if child.pid != skip:
                noted[child.pid] = child.create_time()
        except psutil.Error:
            continue
    return noted


def still_running(noted: dict[int, float]) -> list[psutil.Process]:
    """The noted processes that still run (same pid, same start time), with their current descendants."""
    alive: dict[int, psutil.Process] = {}
    for pid, started in noted.items():
        try:
            proc = psutil.Process(pid)
            if proc.create_time() != started:
                continue
            alive[pid] = proc
            for child in proc.children(recursive=True):
                alive.setdefault(child.pid, child)
        except psutil.Error:
            continue
    return list(alive.values())


def reap(noted: dict[int, float]) -> None:
    procs = still_running(noted)
    for proc in procs:
        try:
            proc.terminate()
        except psutil.Error:
            continue
    _, left = psutil.wait_procs(procs, timeout=GRACE_S)
    for proc in left:
        try:
            proc.kill()
        except psutil.Error:
            continue


def watch(pid: int, tag: str, scratch: str | None = None) -> None:
    me = psutil.Process()
    noted: dict[int, float] = {}
    try:
        actor = psutil.Process(pid)
        started = actor.create_time()
    except psutil.Error:  # it died before this reaper looked: what carries its tag (ours alone) is still reaped
        _finish(noted, tag, {me.pid, pid}, scratch)
        return
    while True:
        try:
            if not actor.is_running() or actor.create_time() != started or actor.status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.Error:
            break
        noted = descendants(pid, me.pid) or noted
        time.sleep(POLL_S)
    _finish(noted, tag, {me.pid, pid}, scratch)


def _finish(noted: dict[int, float], tag: str, skip: set[int], scratch: str | None) -> None:
    reap({**noted, **tagged(tag, skip=skip)})
    if scratch:
        shutil.rmtree(scratch, ignore_errors=True)
    from mcp_gateway.code.battle_uid import sweep_abandoned  # here: the reaper starts with every run, lean
    sweep_abandoned()


if __name__ == "__main__":
    watch(int(sys.argv[1]), sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
