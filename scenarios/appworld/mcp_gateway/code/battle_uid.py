"""The unprivileged uid of one battle's fallback sandbox (`landlock`): leased, never shared, its processes killable.

`BattleUid.lease()` picks a uid of `UID_RANGE` that no other battle holds (on this machine, across processes:
an exclusive `flock` on `<LEASE_DIR>/<uid>.lock`, held for the battle and released by the kernel if its
holder dies) and that no account owns (`pwd`), and makes its scratch dir (`<LEASE_DIR>/<uid>/`: HOME, TMPDIR and
the working directory of the battle's REPL; a tmpfs of `SCRATCH_BYTES`, the uid's, or not writable where we may
not mount: `scratch.py`, `writable`). The uid's gid is the same number, with no supplementary groups. Because
the uid is the battle's alone:
- `RLIMIT_NPROC` (set in the child) caps the battle's processes and threads together;
- `kill_all` ends every process of the battle at once, wherever it forked or double-forked to: a helper
  switched to the uid sends `kill(-1, SIGKILL)` (every process it may signal, i.e. of that uid; one with
  SIGKILL pending can no longer fork) until none is left or its deadline passed;
- `kill_strays` kills all but the REPL after an execution, within a deadline (`reap.kill_strays`);
- `release()` (the battle's teardown) kills them all, removes the scratch dir and frees the uid.

A gateway killed without its teardown leaves its lock free: `sweep_abandoned()` kills the processes and removes
the scratch dir of every uid of the range whose lock nobody holds. The next lease runs it before it picks a
uid, and so does the slot reaper (`green_agent/runtime/reaper.py`) once the slot owner it watched is gone.
"""

from __future__ import annotations

import os
import pwd
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import psutil

from kernel import file_lock
from kernel.errors import InfrastructureError
from mcp_gateway.code import reap
from mcp_gateway.code.scratch import SCRATCH_BYTES, make_scratch, remove_scratch

UID_RANGE = range(62000, 62512)
"""Below 65536 (a rootless container maps only that many uids), above Debian's normal users (1000-59999)."""
LEASE_DIR = Path(tempfile.gettempdir()) / "appworld-green-code"
TRUE = "/usr/bin/true"
KILL_ALL_S = 10.0


class NoFreeUid(InfrastructureError):
    """Every uid of the range is held by a running battle (more than `len(UID_RANGE)` at once)."""


def _lease_dir() -> Path:
    LEASE_DIR.mkdir(mode=0o711, exist_ok=True)
    found = LEASE_DIR.lstat()
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid():  # in /tmp: anyone could have made it first
        raise InfrastructureError(f"{LEASE_DIR} is not a directory of ours: remove it (code mode's sandbox uids)")
    os.chmod(LEASE_DIR, 0o711)  # others may pass through to their own scratch dir, never list it
    return LEASE_DIR


def live_processes(uids: range | set[int]) -> list[psutil.Process]:
    """The running (not zombie) processes whose real uid is in `uids`."""
    found = []
    for proc in psutil.process_iter(["uids"]):  # the status only of those that match: a scan costs ~4 ms
        uids_of = proc.info.get("uids")
        if uids_of is not None and uids_of.real in uids:
            try:
                if proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(proc)
            except psutil.Error:
                continue
    return found


def uids_in_use() -> set[int]:
    """The uids of `UID_RANGE` that some running process has as its real uid now."""
    return {proc.info["uids"].real for proc in live_processes(UID_RANGE)}


def _kill_every_other_process_of_mine() -> None:  # run as the uid, between fork and exec
    for _ in range(3):  # one kill(-1) reaches all: a process with SIGKILL pending can no longer fork
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return


def kill_all(uid: int, deadline: float | None = None) -> bool:
    """SIGKILL every process of `uid`: a helper with that uid (and no privilege) kills all it may signal, until none
    is left; False if some were still there at `deadline` (time.monotonic; default: in `KILL_ALL_S`)."""
    deadline = time.monotonic() + KILL_ALL_S if deadline is None else deadline
    while True:
        try:
            subprocess.run([TRUE], user=uid, group=uid, extra_groups=[], preexec_fn=_kill_every_other_process_of_mine,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={},
                           cwd="/", check=False, timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        if not live_processes({uid}):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def kill_strays(uid: int, keep: int | None, deadline: float) -> bool:
    """SIGKILL every process of `uid` but `keep` (the REPL, stopped meanwhile): what its code started. False if some
    were still there at `deadline` (the caller then ends the whole sandbox)."""
    return reap.kill_strays(lambda: [proc.pid for proc in live_processes({uid})], keep, deadline)


class BattleUid:
    """One leased uid and its scratch dir (module docstring)."""

    def __init__(self, uid: int, lock_fd: int, scratch: Path, writable: bool) -> None:
        self.uid, self._lock_fd, self.scratch, self.writable = uid, lock_fd, scratch, writable

    @classmethod
    def lease(cls, scratch_bytes: int = SCRATCH_BYTES) -> "BattleUid":
        """A uid no other battle holds, with a fresh scratch dir (a tmpfs of `scratch_bytes` where we may mount);
        raises NoFreeUid if there is none."""
        base = _lease_dir()
        in_use = sweep_abandoned()
        for uid in UID_RANGE:
            if uid in in_use or _has_account(uid):
                continue
            fd = _try_lock(base, uid)
            if fd is None:
                continue
            scratch = base / str(uid)
            try:
                writable = make_scratch(scratch, uid, scratch_bytes)
            except BaseException:
                file_lock.release(fd)
                raise
            return cls(uid, fd, scratch, writable)
        raise NoFreeUid(f"all {len(UID_RANGE)} sandbox uids ({UID_RANGE.start}-{UID_RANGE.stop - 1}) are in use")

    def release(self, deadline: float | None = None) -> None:
        """Kill every process of the uid (by `deadline`), remove its scratch dir, free the uid. Idempotent."""
        if self._lock_fd < 0:
            return
        try:
            kill_all(self.uid, deadline)
            remove_scratch(self.scratch)
        finally:
            file_lock.release(self._lock_fd)
            self._lock_fd = -1


def _try_lock(base: Path, uid: int) -> int | None:
    return file_lock.try_lock(base / f"{uid}.lock")


def sweep_abandoned() -> set[int]:
    """Kill the processes and remove the scratch dir of every uid of the range whose lock nobody holds (its battle's
    gateway died without teardown); returns the uids still in use (by running battles)."""
    if not LEASE_DIR.is_dir():
        return uids_in_use()
    in_use = uids_in_use()
    for uid in sorted(in_use | {int(p.name) for p in LEASE_DIR.iterdir() if p.name.isdigit()}):
        fd = _try_lock(LEASE_DIR, uid) if uid in UID_RANGE else None
        if fd is None:
            continue
        try:
            kill_all(uid)
            remove_scratch(LEASE_DIR / str(uid))
            in_use.discard(uid)
        finally:
            file_lock.release(fd)
    return in_use


def _has_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True
