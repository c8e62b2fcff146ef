"""Unit tests of what a record keeps of the agent's bytes: encodable text (`kernel.encodable`), bounded arguments
(`kernel.logged_arguments`) and a battle's capped call log (`kernel.call_log.CallLogWriter`)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from kernel.call_log import CallLogWriter
from kernel.call_record import CallRecord
from kernel.encodable import encodable
from kernel.logged_arguments import MAX_LOGGED_ARGUMENTS_BYTES, bounded_arguments


def test_lone_surrogates_become_replacement_characters_and_pairs_stay() -> None:
    decoded = json.loads('{"\\ud800k": ["\\udfff", "\\ud83d\\ude00", 1.5, null]}')
    clean = encodable(decoded)
    assert clean == {"\ufffdk": ["\ufffd", "\U0001F600", 1.5, None]}
    json.dumps(clean, ensure_ascii=False).encode("utf-8")


def test_large_arguments_keep_their_size_and_a_hash_and_small_ones_stay_whole() -> None:
    assert bounded_arguments({"a": 1}) == ({"a": 1}, None)
    kept, total = bounded_arguments({"note": "a" * 99_000, "id": 7})
    assert kept["id"] == 7 and kept["note"].startswith("[omitted: 99002 bytes, sha256 ") and total > 99_000
    many, _ = bounded_arguments({f"k{i}": "v" * 300 for i in range(200)})
    assert len(json.dumps(many)) <= MAX_LOGGED_ARGUMENTS_BYTES and many["[omitted]"].endswith("more arguments omitted]")


def record(battle: str | None, size: int) -> CallRecord:
    return CallRecord(timestamp=datetime.now(timezone.utc), battle_id=battle, tool_name="a__b",
                      arguments={"x": "y" * size}, success=True, duration_ms=1)


def test_a_battles_call_log_stops_at_its_cap_with_one_note_and_others_go_on(tmp_path: Path) -> None:
    writer = CallLogWriter(tmp_path / "calls.jsonl", battle_cap_bytes=5_000)
    for index in range(20):
        writer.append(record("loud", 1_000))
        if index % 2:
            writer.append(record("quiet", 10))
    writer.append(record(None, 10))
    lines = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    loud = [line for line in lines if line["battle_id"] == "loud"]
    assert 2 < len(loud) < 6 and loud[-1]["refused"] == "log_capped" and "5000 bytes" in loud[-1]["error"]
    assert sum(len(json.dumps(line)) for line in loud[:-1]) <= 5_000
    assert len([line for line in lines if line["battle_id"] == "quiet"]) == 10 and lines[-1]["battle_id"] is None
