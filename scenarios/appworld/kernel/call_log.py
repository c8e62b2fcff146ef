"""The gateway's call log: one `CallRecord` JSON line per tool call, appended atomically.

Each line is written with ONE `os.write` on a descriptor opened with `O_APPEND` (under an `flock`
shared by all writers, which also covers the torn-line check below), so lines from
threads of one gateway and from several gateway processes sharing the file never interleave
(the kernel positions and writes each append as a unit on local filesystems). The file is opened
per write, so a log that is moved or deleted is simply re-created. If the file ends in a torn line
(a writer killed mid-line elsewhere), the record starts on a new line instead of being glued to it.

Each battle's records are capped in total (`battle_cap_bytes`, counted by this writer): the record that would
pass the cap is replaced by one note (`refused: "log_capped"`, the battle's id, the cap in its error) and the
battle's later records are dropped, so a battle whose code forges calls in a loop cannot fill the disk or
the run folder its records are copied to. Records of no battle (refusals) are rate-limited by the gateway.

Every string of a record (the arguments as the agent sent them, already redacted by key, and the error) is
scrubbed of the secret values known for its battle before it is written (`kernel.scrubber`): a password the
agent passes as a bare argument value is not kept.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from pathlib import Path

from kernel.call_record import CallRecord
from kernel.scrubber import scrub_data

logger = logging.getLogger(__name__)
BATTLE_LOG_CAP_BYTES = 16 << 20
"""Call-log bytes one battle may write (a 20-minute battle of honest calls writes well under 1 MiB)."""
LOG_CAPPED = "log_capped"


class CallLogWriter:
    """Appends call records to one JSONL file and numbers them (`seq`) per process."""

    def __init__(self, path: Path, battle_cap_bytes: int = BATTLE_LOG_CAP_BYTES) -> None:
        self.path = Path(path)
        self.battle_cap_bytes = battle_cap_bytes
        self._lock = threading.Lock()
        self._seq = 0
        self._battle_bytes: dict[str, int] = {}
        self._capped: set[str] = set()

    def next_seq(self) -> int:
        """The next call number of this gateway process (1, 2, ...)."""
        with self._lock:
            self._seq += 1
            return self._seq

    def append(self, record: CallRecord) -> None:
        """Write `record` as one line. Errors are logged, never raised (a call never fails on logging)."""
        data = record.model_dump(mode="json")
        ours = {k: data[k] for k in ("timestamp", "battle_id", "task_id")}  # our own values, kept as they are
        record = CallRecord.model_validate({**scrub_data(data, record.battle_id), **ours})
        data = (record.model_dump_json() + "\n").encode("utf-8")
        if record.battle_id is not None:
            data = self._within_cap(record, data)
            if not data:
                return
        try:
            append_line(self.path, data)
        except OSError as exc:
            logger.error("could not append to the call log %s: %s", self.path, exc)


    def _within_cap(self, record: CallRecord, data: bytes) -> bytes:
        """`data`, the battle's cap note instead (once), or b"" once the battle is past its cap."""
        battle = record.battle_id or ""
        with self._lock:
            if battle in self._capped:
                return b""
            used = self._battle_bytes.get(battle, 0)
            if used + len(data) <= self.battle_cap_bytes:
                self._battle_bytes[battle] = used + len(data)
                return data
            self._capped.add(battle)
        note = CallRecord(timestamp=record.timestamp, battle_id=battle, task_id=record.task_id,
                          tool_name=LOG_CAPPED, success=False, duration_ms=0, in_scope=True, seq=record.seq,
                          refused=LOG_CAPPED, error=f"This battle's call log reached its cap of "
                          f"{self.battle_cap_bytes} bytes here: its later calls are served but not logged.")
        return (note.model_dump_json() + "\n").encode("utf-8")


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
