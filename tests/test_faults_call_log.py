"""Fault injection on the gateway's JSONL call log: damaged lines, a missing file, concurrent floods.

The readers under test are the real ones: the trajectory analyzer (`green_agent.trajectory`), the
archive step's per-battle copy (`archive.filter_call_log`) and the gateway's own reader
(`kernel.call_log_reader.read_call_log`); the writer is the gateway's `CallLogWriter`, driven from
several processes at once. No servers: these are files on disk.
"""

from __future__ import annotations

import json
import multiprocessing
from datetime import datetime, timezone
from pathlib import Path

from green_agent.steps.archive import filter_call_log
from kernel.call_record import CallRecord
from green_agent.trajectory import analyze_log
from kernel.call_log_reader import MAX_LINE_BYTES
from kernel.call_log import CallLogWriter
from kernel.call_log_reader import read_call_log

BATTLE = "battle-log-faults"


def _record(i: int, battle_id: str = BATTLE, success: bool = True, pad: int = 0) -> CallRecord:
    args = {"page_index": i % 3}
    if pad:
        args["content"] = "x" * pad
    return CallRecord(timestamp=datetime(2026, 1, 1, tzinfo=timezone.utc), battle_id=battle_id, task_id="t_1",
                      tool_name=f"simple_note__tool_{i % 4}", arguments=args, success=success,
                      duration_ms=1.0 + i, seq=i + 1)


def _line(record: CallRecord) -> bytes:
    return (record.model_dump_json() + "\n").encode()


def _damaged_log(path: Path) -> tuple[int, int]:
    """A log mixing 6 good records of BATTLE with damaged lines; returns (good records, damaged lines of BATTLE)."""
    good = [_record(i, success=i != 2) for i in range(6)]
    truncated = _line(_record(90))[:-40] + b"\n"                      # a write cut short, then a newline
    binary = b'\x00\xff\xfe{"battle_id": "' + BATTLE.encode() + b'" \x80\x81\n'  # binary garbage naming the battle
    oversized = b'{"battle_id": "' + BATTLE.encode() + b'", "pad": "' + b"y" * (MAX_LINE_BYTES + 10) + b'"}\n'
    other = _line(_record(7, battle_id="someone-else"))
    tail = _line(_record(91))[:-25]                                   # last line torn, no newline
    path.write_bytes(good[0].model_dump_json().encode() + b"\n" + truncated + _line(good[1]) + binary + _line(good[2])
                     + oversized + other + b"".join(_line(r) for r in good[3:]) + b"\n\n" + tail)
    return len(good), 4


def test_analyzer_counts_are_exact_around_truncated_binary_and_oversized_lines(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    good, damaged = _damaged_log(log)
    metrics = analyze_log(log, battle_id=BATTLE)
    assert metrics.log_found and metrics.total_calls == good and metrics.failed_calls == 1
    assert metrics.malformed_lines == damaged  # truncated, binary, oversized, torn tail
    assert sum(metrics.calls_per_tool.values()) == good


def test_archive_copy_keeps_exactly_the_valid_records_of_the_battle(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    good, _ = _damaged_log(log)
    target = tmp_path / "run" / "mcp_calls.jsonl"
    target.parent.mkdir()
    assert filter_call_log(log, BATTLE, target) == good
    lines = target.read_text().splitlines()
    assert len(lines) == good and all(json.loads(line)["battle_id"] == BATTLE for line in lines)


def test_gateway_reader_skips_damaged_lines_instead_of_failing(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    good, _ = _damaged_log(log)
    assert len(read_call_log(log, BATTLE)) == good


def test_a_log_that_does_not_exist_yet(tmp_path: Path) -> None:
    missing = tmp_path / "not-yet" / "calls.jsonl"
    metrics = analyze_log(missing, battle_id=BATTLE)
    assert not metrics.log_found and metrics.total_calls == 0 and metrics.malformed_lines == 0
    target = tmp_path / "copy.jsonl"
    assert filter_call_log(missing, BATTLE, target) == 0 and target.read_text() == ""
    assert read_call_log(missing) == []
    CallLogWriter(missing).append(_record(0))  # the writer creates the folder and the file
    assert analyze_log(missing, battle_id=BATTLE).total_calls == 1


def test_a_record_appended_after_a_torn_last_line_is_not_lost(tmp_path: Path) -> None:
    """A crash mid-line (another writer, a full disk) must not swallow the next gateway record."""
    log = tmp_path / "calls.jsonl"
    log.write_bytes(_line(_record(0)) + _line(_record(1))[:-30])
    writer = CallLogWriter(log)
    writer.append(_record(2))
    writer.append(_record(3))
    metrics = analyze_log(log, battle_id=BATTLE)
    assert metrics.total_calls == 3 and metrics.malformed_lines == 1


def _flood(path: str, battle_id: str, count: int) -> None:
    writer = CallLogWriter(Path(path))
    for i in range(count):
        writer.append(_record(i, battle_id=battle_id, success=i % 5 != 0, pad=70_000 if i % 50 == 0 else 0))


def test_thousands_of_concurrent_appends_from_several_processes_stay_intact(tmp_path: Path) -> None:
    """4 writer processes x 2,500 records (some 70 kB lines, beyond PIPE_BUF): no torn or merged line."""
    log = tmp_path / "calls.jsonl"
    per_writer, writers = 2_500, 4
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_flood, args=(str(log), f"flood-{k}", per_writer)) for k in range(writers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0
    lines = log.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) - 1 == per_writer * writers
    assert all(CallRecord.model_validate_json(line) for line in lines[:-1])
    for k in range(writers):
        metrics = analyze_log(log, battle_id=f"flood-{k}")
        assert (metrics.total_calls, metrics.failed_calls, metrics.malformed_lines) == (per_writer, per_writer // 5, 0)
