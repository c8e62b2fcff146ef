"""Exclusive, non-blocking `fcntl` locks on files: the one primitive behind slot locks, run-directory locks and
the leases of code mode's sandbox uids (`mcp_gateway/code/battle_uid.py`).

The lock lives as long as the returned file descriptor (closing it, or the process ending, releases it),
so a crashed holder never leaves a lock behind; what the holder writes into the file is only a label.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def try_lock(path: Path) -> int | None:
    """Open (creating it and its folder) and exclusively lock `path`; the descriptor, or None if it is held."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def release(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
