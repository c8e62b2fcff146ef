"""Reading a trace back: bounded, tolerant, in the order things happened.

`read_trace(path)` returns the valid `TraceRecord`s of a trace file ordered by time (ties keep file order):
lines are read with a size limit (`kernel.call_log_reader.bounded_lines`), a line that is not a record of a
known schema is skipped, and at most `MAX_READ_BYTES` are read, so a damaged or hostile file cannot stop a
reader. `battle_lines(path, battle_id, mark)` reads one battle's records out of a shared log (the gateway's), from
the byte `mark` taken before the battle was set (`kernel.call_log_reader.log_marks`). `call_numbers(records)` numbers a
battle's calls 1, 2, ... as every view shows them (the gateway's `seq` counts every call its process served, so a
battle on a slot that served others starts anywhere; it stays in the record for debugging).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from kernel.call_log_reader import bounded_lines, seek_mark
from kernel.trace_log import MAX_RECORD_BYTES, MAX_TRACE_BYTES
from kernel.trace_record import TraceRecord

MAX_READ_BYTES = 2 * MAX_TRACE_BYTES


def _records(path: Path, battle_id: str | None, limit: int, mark: int = 0) -> list[TraceRecord]:
    records: list[TraceRecord] = []
    needle = battle_id.encode("utf-8", "replace") if battle_id else None
    read = 0
    try:
        with open(path, "rb") as handle:
            seek_mark(handle, mark)
            for line in bounded_lines(handle, MAX_RECORD_BYTES * 2):
                if line is None or (needle is not None and needle not in line):
                    continue
                read += len(line)
                if read > limit:
                    break
                record = _parse(line)
                if record is not None and (battle_id is None or record.battle_id == battle_id):
                    records.append(record)
    except OSError:
        return records
    return records


def _parse(line: bytes) -> TraceRecord | None:
    try:
        return TraceRecord.model_validate(json.loads(line))
    except (ValueError, RecursionError, ValidationError):
        return None


def in_order(records: list[TraceRecord]) -> list[TraceRecord]:
    """`records` ordered by time; ties keep their order."""
    return sorted(records, key=lambda r: r.at)


def call_numbers(records: Sequence[TraceRecord]) -> dict[int, int]:
    """Each tool call's number within its battle, 1-based, in the order of `records` (time order, as `read_trace`
    gives them), keyed by the record's `id()`: the one numbering the page, the terminal view and the export print."""
    numbers: dict[int, int] = {}
    counts: dict[str, int] = {}
    for record in records:
        if record.kind == "tool_call":
            counts[record.battle_id] = counts.get(record.battle_id, 0) + 1
            numbers[id(record)] = counts[record.battle_id]
    return numbers


def call_marks(records: Sequence[TraceRecord], numbers: dict[int, int]) -> dict[int, str]:
    """What became of each injected fault, keyed by the record's `id()`: a faulted call the agent later made again
    (the same `call_key`) and that then succeeded is "recovered at call #k", and the redo "recovers call #j"; a lost
    answer's call made again is "repeated at call #k" (the write reached the world twice), the repeat "repeats call #j
    (its answer was lost)" (`green_agent.trajectory.faults` counts the same)."""
    marks: dict[int, str] = {}
    open_faults: dict[tuple[str, str], list[TraceRecord]] = {}
    for record in records:
        if record.kind != "tool_call" or record.call_key is None:
            continue
        key, kept = (record.battle_id, record.call_key), []
        for faulted in open_faults.pop(key, []):
            if faulted.fault == "lost_response":
                marks[id(faulted)] = f"repeated at call #{numbers.get(id(record), 0)}"
                marks[id(record)] = f"repeats call #{numbers.get(id(faulted), 0)} (its answer was lost)"
            elif record.ok:
                marks[id(faulted)] = f"recovered at call #{numbers.get(id(record), 0)}"
                earlier = marks.get(id(record))
                marks[id(record)] = (f"{earlier}, #{numbers.get(id(faulted), 0)}" if earlier
                                     else f"recovers call #{numbers.get(id(faulted), 0)}")
            else:
                kept.append(faulted)
        if record.fault:
            kept.append(record)
        if kept:
            open_faults[key] = kept
    return marks


def read_trace(path: Path) -> list[TraceRecord]:
    """A battle's trace file, in time order (see the module docstring)."""
    return in_order(_records(Path(path), None, MAX_READ_BYTES))


def battle_lines(path: Path, battle_id: str, mark: int = 0) -> list[TraceRecord]:
    """One battle's records of a shared trace log (the gateway's), in file order, read from byte `mark` on."""
    return _records(Path(path), battle_id, MAX_READ_BYTES * 4, mark)
