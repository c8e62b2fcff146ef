"""The gateway's call log: one `CallRecord` JSON line per tool call, appended atomically.

Each line is written with ONE `os.write` on a descriptor opened with `O_APPEND` (under an `flock`
shared by all writers, which also covers the torn-line check below), so lines from
threads of one gateway and from several gateway processes sharing the file never interleave
(the kernel positions and writes each append as a unit on local filesystems). The file is opened
per write, so a log that is moved or deleted is simply re-created. If the file ends in a torn line
(a writer killed mid-line elsewhere), the record starts on a new line instead of being glued to it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from pathlib import Path

from kernel.call_record import CallRecord

logger = logging.getLogger(__name__)


class CallLogWriter:
    """Appends call records to one JSONL file and numbers them (`seq`) per process."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._seq = 0

    def next_seq(self) -> int:
        """The next call number of this gateway process (1, 2, ...)."""
        with self._lock:
            self._seq += 1
            return self._seq

    def append(self, record: CallRecord) -> None:
        """Write `record` as one line. Errors are logged, never raised (a call never fails on logging)."""
        data = (record.model_dump_json() + "\n").encode("utf-8")
        try:
            append_line(self.path, data)
        except OSError as exc:
            logger.error("could not append to the call log %s: %s", self.path, exc)


def append_line(path: Path, data: bytes) -> None:
    """Append `data` (one full line) to `path` with a single write; create the file and its parents."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT
    try:
        fd = os.open(path, flags, 0o644)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # writers only: makes the torn-line check and the write one step
        if not _ends_with_newline(fd):  # a torn last line would swallow this record: start a fresh line
            data = b"\n" + data
        written = os.write(fd, data)
        if written != len(data):  # only on a full disk or a signal; say so rather than hide a torn line
            raise OSError(f"short write to {path}: {written} of {len(data)} bytes")
    finally:
        os.close(fd)  # closing releases the lock


def _ends_with_newline(fd: int) -> bool:
    """True if the file is empty or its last byte is a newline."""
    size = os.fstat(fd).st_size
    return size == 0 or os.pread(fd, 1, size - 1) == b"\n"
