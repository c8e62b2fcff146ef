"""The one atomic file writer: a temporary file in the target's directory, then a rename.

A reader never sees half a file, and a crash leaves at most a stray `.name-*.tmp`. The temporary
file comes from `mkstemp`, so it is 0600 from its first byte (slot credentials rely on that).
A full disk (ENOSPC, EDQUOT) raises `DiskFullError` naming the path; the file is left as it was
(`append_text`: at most its last line is partial, which the readers of such logs skip).
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from kernel.errors import DiskFullError

NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


def atomic_write_text(path: Path, text: str) -> Path:
    """Write `text` to `path` (parents created) via a temporary file in the same directory and a rename."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        if exc.errno in NO_SPACE:
            raise _disk_full(exc, path) from exc
        raise
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in NO_SPACE:
            raise _disk_full(exc, path) from exc
        raise
    return path


def append_text(path: Path, text: str) -> None:
    """Append `text` to `path` in one write; a full disk raises `DiskFullError` naming the path."""
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        if exc.errno in NO_SPACE:
            raise _disk_full(exc, path) from exc
        raise


def _disk_full(exc: OSError, path: Path) -> DiskFullError:
    return DiskFullError(f"no space left on the device writing {path} ({os.strerror(exc.errno)}); "
                         f"{path.name} was left as it was: free space there, then rerun")
