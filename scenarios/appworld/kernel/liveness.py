"""The one process-liveness probe: does a process (or a process group) still exist?

Signal 0 asks the kernel without delivering anything. A process of another user exists too
(`PermissionError`). A group whose leader is our zombie child is reaped once and asked again, so a
child that has exited but was not waited for does not count as alive.
"""

from __future__ import annotations

import os
from collections.abc import Callable


def _exists(send: Callable[[int, int], None], ident: int) -> bool:
    try:
        send(ident, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pid_alive(pid: int) -> bool:
    """True if a process with this pid exists (ours or another user's)."""
    return _exists(os.kill, pid)


def group_alive(pgid: int) -> bool:
    """True if a process group with this id still has a live member (a zombie leader of ours is reaped first)."""
    if not _exists(os.killpg, pgid):
        return False
    try:
        os.waitpid(-pgid, os.WNOHANG)
    except ChildProcessError:
        pass
    return _exists(os.killpg, pgid)
