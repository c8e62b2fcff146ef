"""The call-log reader: malformed, truncated, binary and oversized lines are counted and skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernel.errors import BadInputError
from green_agent.trajectory import CallLogReader, analyze_log


def rec(battle: str, tool: str = "simple_note__login", ok: bool = True, **extra: object) -> bytes:
    return json.dumps({"timestamp": "2025-03-01T10:00:00Z", "battle_id": battle, "task_id": "t1",
                       "tool_name": tool, "arguments": {}, "success": ok, "duration_ms": 5.0, **extra}).encode()


def _messy_log(path: Path) -> Path:
    good = rec("B1")
    lines = [
        good,                                                    # 1 ok
        good[: len(good) // 2],                                  # 2 truncated JSON of B1
        b"\x00\xff\xfe\x80\x9cbinary\xc3(garbage",               # 3 binary, no battle id
        rec("B1", arguments={"content": "x" * (2 << 20)}),       # 4 oversized (2 MiB) record of B1
        b"[1, 2]",                                               # 5 JSON, not an object
        b'{"battle_id": "B1", "note": "no fields"}',             # 6 object of B1, not a record
        b"",                                                     # 7 blank: ignored, not malformed
        rec("B1", duration_ms=-3),                               # 8 invalid value (negative duration)
        rec("B2"),                                               # 9 another battle
    ]
    path.write_bytes(b"\n".join(lines) + b"\n" + rec("B1", "simple_note__logout"))  # 10 ok, no final newline
    return path


def test_malformed_lines_without_filter(tmp_path: Path) -> None:
    m = analyze_log(_messy_log(tmp_path / "messy.jsonl"))
    assert m.lines_scanned == 10
    assert m.total_calls == 3                      # lines 1, 9, 10
    assert m.malformed_lines == 6                  # lines 2, 3, 4, 5, 6, 8


def test_malformed_lines_with_battle_filter(tmp_path: Path) -> None:
    m = analyze_log(_messy_log(tmp_path / "messy.jsonl"), battle_id="B1")
    assert m.total_calls == 2                      # lines 1 and 10
    assert m.calls_per_tool == {"simple_note__login": 1, "simple_note__logout": 1}
    # the binary line and the JSON array do not mention B1: not attributable, not counted
    assert m.malformed_lines == 4                  # lines 2, 4, 6, 8


def test_line_length_limit_boundary(tmp_path: Path) -> None:
    short = rec("B1")
    pad = 200 - len(short) - len(', "pad": ""')
    padded, too_long = rec("B1", pad="y" * pad), rec("B1", pad="y" * (pad + 1))
    assert (len(padded), len(too_long)) == (200, 201)
    log = tmp_path / "edge.jsonl"
    log.write_bytes(padded + b"\n" + too_long + b"\n" + short + b"\n")
    reader = CallLogReader(log, battle_id="B1", max_line_bytes=200)
    assert len(list(reader)) == 2                  # 200 bytes (+ newline) read; the 201-byte line is skipped
    assert (reader.stats.lines_scanned, reader.stats.malformed_lines) == (3, 1)


def test_reader_streams_records_lazily(tmp_path: Path) -> None:
    log = tmp_path / "many.jsonl"
    log.write_bytes(b"\n".join(rec(f"B{i % 3}") for i in range(30)) + b"\n")
    reader = CallLogReader(log, battle_id="B1")
    first = next(iter(reader))
    assert first.battle_id == "B1" and reader.stats.lines_scanned == 2   # stopped at B1's first line


def test_directory_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="is a directory"):
        analyze_log(tmp_path)
