"""The writer lock of a run directory: one process writes `eval --out DIR` (or regenerates its report) at a time.

Contract:
- `RunDirLock(out).acquire()` takes an exclusive, non-blocking `fcntl` lock on `DIR/run.lock` and
  writes a `RunLockHolder` record (pid, start time, command) into that file. The kernel drops the
  lock when the holder exits, however it exits, so a lock left by a dead process (a stale record
  naming a dead pid) is simply taken over and its record replaced.
- When a live process holds it, `acquire` raises `RunDirLockedError` (bad input, exit 2) naming the
  holder's pid and start time, before anything has been written to the directory.
- `release` (or leaving the `with` block) deletes the file, then unlocks: a clean run leaves no
  `run.lock`, so one that is there was left by a process that did not finish (killed, crashed).
  Taking such a lock over says so in one plain sentence (a warning: the run it names stopped
  mid-write; resume finishes it). Because a file can be deleted between another writer's `open` and
  its `flock`, `acquire` checks that the locked file is still the one at the path, else tries again.
  On a full disk the (re)created file may stay empty: the lock holds, the record is only a label.
"""

from __future__ import annotations

import errno
import logging
import os
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType

from pydantic import ValidationError

from kernel.errors import RunDirLockedError
from kernel.liveness import pid_alive
from kernel.file_lock import release, try_lock
from green_agent.models.eval_run import RunLockHolder

log = logging.getLogger(__name__)

LOCK_FILE = "run.lock"
MAX_ATTEMPTS = 5


def read_holder(path: Path) -> RunLockHolder | None:
    """The record in a lock file, or None if absent or unreadable (mid-write, foreign content)."""
    try:
        return RunLockHolder.model_validate_json(Path(path).read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


class RunDirLock:
    """Exclusive writer lock on one run directory; see the module docstring."""

    def __init__(self, out: Path, command: str = "eval") -> None:
        self.path = Path(out) / LOCK_FILE
        self.command = command
        self._fd: int | None = None

    def acquire(self) -> "RunDirLock":
        """Take the lock or raise RunDirLockedError naming the live holder."""
        fd = self._lock_current_file()
        previous = read_holder(self.path)
        if previous is not None and previous.pid != os.getpid() and not pid_alive(previous.pid):
            log.warning("%s was left by an earlier %s (pid %d, started %s) that did not finish, most likely "
                        "killed; that process is gone, so this one takes the directory over (`eval --resume` "
                        "keeps the results it had written)", self.path, previous.command or "writer", previous.pid,
                        previous.started_at.isoformat(timespec="seconds"))
        record = RunLockHolder(pid=os.getpid(), started_at=datetime.now(timezone.utc), command=self.command)
        os.ftruncate(fd, 0)
        try:
            os.pwrite(fd, record.model_dump_json().encode(), 0)
        except OSError as exc:  # a full disk: the lock holds without its label; the run's own writes say what failed
            if exc.errno != errno.ENOSPC:
                release(fd)
                raise
            log.debug("run lock %s holds without its holder record: %s", self.path, exc)
        self._fd = fd
        return self

    def _lock_current_file(self) -> int:
        for _ in range(MAX_ATTEMPTS):
            fd = try_lock(self.path)
            if fd is None:
                raise RunDirLockedError(self._busy_message())
            try:
                if os.fstat(fd).st_ino == os.stat(self.path).st_ino:
                    return fd
            except FileNotFoundError:
                pass
            release(fd)  # the holder deleted it on release after we opened it: lock the new one
        raise RunDirLockedError(f"{self.path} keeps changing hands: another writer is starting; try again")

    def _busy_message(self) -> str:
        holder = read_holder(self.path)
        who = (f"pid {holder.pid} ({holder.command or 'a writer'}), started at "
               f"{holder.started_at.isoformat(timespec='seconds')}" if holder else "another process")
        return (f"{self.path.parent} is being written by {who} (lock {self.path}): wait for it to finish, "
                "stop it, or choose another --out")

    def release(self) -> None:
        if self._fd is not None:
            try:
                self.path.unlink()  # while still locked: nobody can take a file we are deleting
            except FileNotFoundError:
                pass
            release(self._fd)
            self._fd = None

    def __enter__(self) -> "RunDirLock":
        return self.acquire()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
