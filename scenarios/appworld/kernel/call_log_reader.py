"""The one reader of the gateway's JSONL call log: streaming, filtered, malformed-tolerant.

One pass over the file, one line in memory at a time. With a battle (or task) filter, a line is
JSON-parsed only if its raw bytes contain the quoted id, so the lines of other battles cost a
substring search, not a parse. A line that passes that prefilter but is not a call record (bad
JSON, bad UTF-8, binary garbage, not an object, missing or wrongly typed fields) is counted in
`ReadStats.malformed_lines` and skipped. A line longer than `max_line_bytes` is skipped without
being held in memory and is counted as malformed whatever battle it belongs to (its owner cannot be
known without reading it). Malformed lines that do not contain the filter id are not counted: they
cannot be attributed to the selection.

Records of the seed's older shape (`timestamp, tool_name, arguments, result, success, error,
duration_ms`; no battle or task id) are read too, but only when no filter is given, since they
cannot match one. Their `arguments` may be a JSON string and their `result` is reduced to
`result_items` (its length when it is a list) and then dropped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import timezone
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from kernel.errors import BadInputError
from kernel.call_record import CallRecord

MAX_LINE_BYTES = 1 << 20
"""Longest line read (1 MiB); the gateway's records are far smaller (it never logs results)."""

_PLAIN_ID_CHARS = frozenset(chr(c) for c in range(0x20, 0x7F)) - {'"', "\\"}


@dataclass
class ReadStats:
    """What the reader saw besides the selected records."""

    log_found: bool = False
    lines_scanned: int = 0
    malformed_lines: int = 0


def _needle(value: str | None) -> bytes | None:
    """The bytes every JSON encoding of the string `value` contains, or None if not unique.

    Printable ASCII without quotes or backslashes is encoded verbatim by every JSON writer; other
    ids may be escaped differently (`\\u00e9` vs raw UTF-8), so they get no prefilter.
    """
    if value is None or not set(value) <= _PLAIN_ID_CHARS:
        return None
    return b'"' + value.encode("ascii") + b'"'


def log_marks(paths: Iterable[Path | None]) -> dict[str, int]:
    """Each existing log's size now, by path: where the records of a battle set after this moment start.

    The gateway's and the bridge's logs are shared by their battles and only ever appended to, so a battle's
    records lie past the mark taken before the battle was set: its readers start there instead of reading every
    earlier battle's lines again (a slot's log grows by every battle it runs)."""
    marks: dict[str, int] = {}
    for path in paths:
        if path is not None:
            try:
                marks[str(path)] = os.stat(path).st_size
            except OSError:
                continue  # not there yet: read from its start
    return marks


def seek_mark(handle: BinaryIO, mark: int) -> None:
    """Start reading `handle` at `mark` (a `log_marks` size), or at its start if it is shorter now (replaced).

    A mark that falls inside a line (one being written when it was taken) yields that line's tail first: a
    fragment of an earlier battle's record, which every reader skips as not one of its battle's records."""
    handle.seek(mark if 0 < mark <= os.fstat(handle.fileno()).st_size else 0)


def bounded_lines(handle: BinaryIO, max_line_bytes: int) -> Iterator[bytes | None]:
    """Yield each line (bytes), or None for a line longer than `max_line_bytes` (skipped in chunks)."""
    limit = max_line_bytes + 1
    readline = handle.readline
    while True:
        line = readline(limit)
        if not line:
            return
        if len(line) == limit and not line.endswith(b"\n"):
            while True:
                chunk = readline(limit)
                if not chunk or chunk.endswith(b"\n"):
                    break
            yield None
            continue
        yield line


def _result_items(result: Any) -> int | None:
    """Length of a seed-shape `result` when it is a list (or a JSON string of one)."""
    if isinstance(result, str):
        try:
            result = json.loads(result)
        except ValueError:
            return None
    if isinstance(result, dict) and isinstance(result.get("response"), list):
        result = result["response"]
    return len(result) if isinstance(result, list) else None


def to_record(obj: Any) -> CallRecord | None:
    """Validate one parsed line as a `CallRecord` (adapting the seed's shape); None if it is not one."""
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("arguments"), str):
        try:
            obj["arguments"] = json.loads(obj["arguments"])
        except ValueError:
            obj["arguments"] = {}
    if not isinstance(obj.get("arguments", {}), dict):
        obj["arguments"] = {}
    if "result" in obj:
        result = obj.pop("result")
        obj.setdefault("result_items", _result_items(result))
    try:
        record = CallRecord.model_validate(obj)
    except ValidationError:
        return None
    if record.timestamp.tzinfo is None:
        record.timestamp = record.timestamp.replace(tzinfo=timezone.utc)
    return record


class CallLogReader:
    """Iterate the call records of one battle and/or task; counters land in `self.stats`.

    Args:
        path: The JSONL log. A missing file yields nothing and leaves `stats.log_found` False.
        battle_id: Keep only records with this `battle_id` (None: no battle filter).
        task_id: Keep only records with this `task_id` (None: no task filter).
        max_line_bytes: Lines longer than this are skipped and counted as malformed.
    """

    def __init__(self, path: str | Path, battle_id: str | None = None, task_id: str | None = None,
                 max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.path = Path(path)
        self.battle_id = battle_id
        self.task_id = task_id
        self.max_line_bytes = max_line_bytes
        self.stats = ReadStats()

    def __iter__(self) -> Iterator[CallRecord]:
        if self.path.is_dir():
            raise BadInputError(f"call log {self.path} is a directory: pass the JSONL file itself")
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            return
        except OSError as exc:
            raise BadInputError(f"cannot read call log {self.path}: {exc.strerror}; check the path and its permissions") from exc
        self.stats.log_found = True
        with handle:
            yield from self._records(handle)

    def _records(self, handle: BinaryIO) -> Iterator[CallRecord]:
        stats = self.stats
        needle = _needle(self.battle_id) if self.battle_id is not None else _needle(self.task_id)
        for line in bounded_lines(handle, self.max_line_bytes):
            stats.lines_scanned += 1
            if line is None:
                stats.malformed_lines += 1
                continue
            if needle is not None and needle not in line:
                continue
            if not line.strip():
                continue
            obj = _load(line)
            if obj is None:
                stats.malformed_lines += 1
                continue
            if not self._matches(obj):
                continue
            record = to_record(obj)
            if record is None:
                stats.malformed_lines += 1
                continue
            yield record

    def _matches(self, obj: dict[str, Any]) -> bool:
        """True if the parsed line carries the requested battle and task ids (no filter: always)."""
        if self.battle_id is not None and obj.get("battle_id") != self.battle_id:
            return False
        return self.task_id is None or obj.get("task_id") == self.task_id


def _load(line: bytes) -> dict[str, Any] | None:
    """The JSON object on `line`, or None if it is not one (bad JSON, bad UTF-8, too deep, not an object)."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


MAX_READ_BYTES = 4 << 20
"""At most this much of the log is read per `CallLogTail.read_new` (the rest on the next one)."""


class CallLogTail:
    """Reads the complete lines appended to a JSONL call log since the last read (one battle's records)."""

    def __init__(self, path: Path, battle_id: str) -> None:
        self.path = Path(path)
        self.battle_id = battle_id
        self._needle = _needle(battle_id)
        self._offset = self._size()
        self._partial = b""

    def _size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

    def read_new(self) -> list[CallRecord]:
        """The battle's records in lines completed since the previous call."""
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read(MAX_READ_BYTES)
        except OSError:
            return []
        self._offset += len(chunk)
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        if len(self._partial) > MAX_LINE_BYTES:
            self._partial = b""  # a line this long is no call record: drop it
        return [r for r in map(self._parse, lines) if r is not None]

    def _parse(self, line: bytes) -> CallRecord | None:
        if self._needle is not None and self._needle not in line:
            return None
        obj = _load(line)
        record = to_record(obj) if obj is not None else None
        return record if record is not None and record.battle_id == self.battle_id else None


def read_call_log(path: str | Path, battle_id: str | None = None) -> list[CallRecord]:
    """All valid records of a call log, or only those of one battle (a missing file: none)."""
    return list(CallLogReader(path, battle_id=battle_id))
