"""Checks of output paths before anything starts: a directory we will write into, a file we will append to.

Contract: each check returns the path when it is usable and otherwise raises `OutputPathError`
(bad input, exit 2) naming the flag, the path and what is wrong with it (exists as a file, a parent
is a file, cannot be created, not writable). A directory check creates the directory (it would be
created by the run anyway) and probes it with a temporary file; a file check creates nothing but
its parent directory and probes that the file can be opened for appending (and reading) if it exists.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from kernel.errors import OutputPathError


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _blocking_parent(path: Path) -> Path | None:
    """The nearest ancestor that exists but is not a directory (which makes `path` impossible)."""
    for parent in path.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def check_output_dir(path: Path, flag: str = "--out") -> Path:
    """`path` as a writable directory (created if missing), or OutputPathError."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputPathError(f"{flag} {path}: exists and is not a directory; choose a directory path")
    blocker = _blocking_parent(path)
    if blocker is not None:
        raise OutputPathError(f"{flag} {path}: cannot be created, {blocker} is a file, not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputPathError(f"{flag} {path}: not writable ({_why(exc)}); choose another directory") from None
    return path


def check_output_file(path: Path, what: str) -> Path:
    """`path` as a file we can append to and read back (parent created if missing), or OutputPathError."""
    path = Path(path)
    if path.exists() and not path.is_file():
        raise OutputPathError(f"{what} {path}: exists and is not a regular file (a directory?); "
                              "point it at a file path")
    blocker = _blocking_parent(path)
    if blocker is not None:
        raise OutputPathError(f"{what} {path}: cannot be created, {blocker} is a file, not a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            with open(path, "ab"), open(path, "rb"):
                pass
        else:
            fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=path.parent)
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise OutputPathError(f"{what} {path}: not writable or readable ({_why(exc)}); choose another path") from None
    return path
