"""Trajectory metrics on hand-written call logs; every expected figure is worked out in the comments.

The logs are in the gateway's `CallRecord` JSONL shape (kernel/call_record.py).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from green_agent.trajectory import analyze_log
from green_agent.trajectory.api_selection import score_selection
from green_agent.trajectory.metrics import calls_per_minute, f1, nearest_rank
from kernel.api_names import api_name
from green_agent.trajectory.pagination import PaginationTracker

T0 = "2025-03-01T10:00:"


def rec(second: str, tool: str, ok: bool, ms: float, battle: str = "B1", task: str = "t1", **extra: object) -> str:
    """One gateway record line; `second` is the seconds part of a 10:00 timestamp, or a full `mm:ss`."""
    stamp = f"2025-03-01T10:{second}Z" if ":" in second else f"{T0}{second}Z"
    return json.dumps({"schema_version": 1, "timestamp": stamp, "battle_id": battle, "task_id": task,
                       "tool_name": tool, "arguments": extra.pop("arguments", {}), "success": ok,
                       "error": None if ok else "boom", "duration_ms": ms, **extra})


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


GOLD = ["simple_note.create_note", "simple_note.login", "supervisor.complete_task",
        "supervisor.show_account_passwords", "supervisor.show_profile"]


def test_core_metrics_retries_selection_and_scope(tmp_path: Path) -> None:
    log = write(tmp_path / "calls.jsonl", [
        rec("00", "simple_note__login", False, 10),           # fail
        rec("06", "simple_note__login", True, 20),            # retry 1 (fail -> ok, same tool)
        rec("12", "simple_note__search_notes", False, 30),    # fail
        rec("18", "supervisor__show_profile", True, 40),      # other tool: no retry
        rec("24", "simple_note__search_notes", False, 50),    # retry 2 (the same call, failed again)
        rec("30", "simple_note__search_notes", True, 60),     # retry 3; seed run search_notes x2 -> 1 sequence
        rec("36", "simple_note__create_note", True, 70),
        rec("42", "spotify__login", False, 80, in_scope=False),  # refused: out of scope
        rec("48", "spotify__login", False, 90),               # retry 4: the same call again, after a failure
        rec("01:00", "supervisor__complete_task", True, 100),
    ])
    scope = ["simple_note.login", "simple_note.create_note", "supervisor.complete_task", "spotify__login"]
    m = analyze_log(log, battle_id="B1", task_id="t1", gold_apis=GOLD, scope=scope)
    assert (m.total_calls, m.successful_calls, m.failed_calls) == (10, 5, 5)
    assert m.error_rate == 0.5
    assert m.avg_duration_ms == 55.0            # 550 / 10
    assert m.p50_duration_ms == 50.0            # rank ceil(5.0) = 5 of 10..100
    assert m.p95_duration_ms == 100.0           # rank ceil(9.5) = 10
    assert m.calls_per_minute == 10.0           # 10 calls over 10:00:00..10:01:00
    assert m.first_call_at == datetime(2025, 3, 1, 10, 0, tzinfo=timezone.utc)
    assert m.last_call_at == datetime(2025, 3, 1, 10, 1, tzinfo=timezone.utc)
    assert m.unique_tools == 6
    assert m.calls_per_tool["simple_note__search_notes"] == 3
    assert m.failed_calls_per_tool == {"simple_note__login": 1, "simple_note__search_notes": 2, "spotify__login": 2}
    assert (m.retry_count, m.retries_after_fault) == (4, 0)  # a repeat of the same call after a failure
    assert m.out_of_scope_calls == 1
    assert m.pagination_sequences == 1
    # called ok: login, show_profile, search_notes, create_note, complete_task; 4 of them gold.
    assert m.called_apis == ["simple_note.create_note", "simple_note.login", "simple_note.search_notes",
                             "supervisor.complete_task", "supervisor.show_profile"]
    assert m.api_precision == pytest.approx(0.8) and m.api_recall == pytest.approx(0.8)
    assert m.api_f1 == pytest.approx(0.8)
    assert m.missing_gold_apis == ["supervisor.show_account_passwords"]
    assert m.extra_apis == ["simple_note.search_notes"]
    assert m.scope_size == 4 and m.scope_recall == pytest.approx(0.6)   # 3 of 5 gold in scope
    assert m.malformed_lines == 0 and m.lines_scanned == 10 and m.log_found


PAGINATED = ["spotify.show_song_library", "simple_note.search_notes", "venmo.show_transactions",
             "spotify.show_playlist_library", "amazon.search_products"]


def _pagination_log(path: Path) -> Path:
    return write(path, [
        # song library: pages 0 (default index), 1 full (5 of default limit 5), page 2 short (3) -> complete
        rec("00", "spotify__show_song_library", True, 1, result_items=5),
        rec("01", "spotify__show_song_library", True, 1, arguments={"page_index": 1}, result_items=5),
        rec("02", "spotify__show_song_library", True, 1, arguments={"page_index": 2}, result_items=3),
        # search "a" with limit 20: pages 0 and 1 both full, then stops -> incomplete series
        rec("03", "simple_note__search_notes", True, 1, arguments={"query": "a", "page_limit": 20}, result_items=20),
        rec("04", "simple_note__search_notes", True, 1, arguments={"query": "a", "page_limit": 20, "page_index": 1}, result_items=20),
        # search "b" with limit 10: 4 items on page 0 -> complete series
        rec("05", "simple_note__search_notes", True, 1, arguments={"query": "b", "page_limit": 10}, result_items=4),
        # transactions: page 0 full, page 1 fails, retried page 1 empty -> complete; 2 pages fetched
        rec("06", "venmo__show_transactions", True, 1, arguments={"page_index": 0}, result_items=5),
        rec("07", "venmo__show_transactions", False, 1, arguments={"page_index": 1}),
        rec("08", "venmo__show_transactions", True, 1, arguments={"page_index": 1}, result_items=0),
        # playlist library: short page 1 but page 0 never fetched -> incomplete
        rec("09", "spotify__show_playlist_library", True, 1, arguments={"page_index": 1}, result_items=2),
        # not paginated per the docs: never reported
        rec("10", "file_system__show_directory", True, 1, arguments={"directory_path": "/"}, result_items=3),
        # paginated but the only call failed -> unknown
        rec("11", "amazon__search_products", False, 1, arguments={"query": "x"}),
    ])


def test_pagination_complete_vs_stopped_early(tmp_path: Path) -> None:
    m = analyze_log(_pagination_log(tmp_path / "p.jsonl"), battle_id="B1", paginated_apis=PAGINATED)
    p = m.pagination
    assert set(p) == set(PAGINATED)
    assert (p["spotify.show_song_library"].status, p["spotify.show_song_library"].pages_fetched) == ("complete", 3)
    notes = p["simple_note.search_notes"]
    assert (notes.status, notes.series, notes.complete_series, notes.incomplete_series) == ("incomplete", 2, 1, 1)
    assert (p["venmo.show_transactions"].status, p["venmo.show_transactions"].pages_fetched) == ("complete", 2)
    assert p["spotify.show_playlist_library"].status == "incomplete"
    assert (p["amazon.search_products"].status, p["amazon.search_products"].pages_fetched) == ("unknown", 0)
    assert m.pagination_complete_apis == ["spotify.show_song_library", "venmo.show_transactions"]
    assert m.pagination_incomplete_apis == ["simple_note.search_notes", "spotify.show_playlist_library"]
    # seed metric: song_library x3 and search_notes x3 are runs of >= 2; venmo has no keyword.
    assert m.pagination_sequences == 2
    assert m.retry_count == 1   # venmo page 1 failed, then succeeded


def test_pagination_inferred_without_docs(tmp_path: Path) -> None:
    m = analyze_log(_pagination_log(tmp_path / "p.jsonl"), battle_id="B1")
    # APIs with page_index/page_limit in some call; directory listing and the product search have neither.
    assert set(m.pagination) == {"spotify.show_song_library", "simple_note.search_notes",
                                 "venmo.show_transactions", "spotify.show_playlist_library"}
    assert m.pagination["spotify.show_song_library"].status == "complete"


def test_interleaved_battles_get_only_their_own_counts(tmp_path: Path) -> None:
    log = write(tmp_path / "two.jsonl", [
        rec("00", "simple_note__login", False, 10, battle="A"),
        rec("01", "venmo__login", False, 500, battle="bB", task="t2"),
        rec("02", "simple_note__login", True, 20, battle="A"),          # A's next record: retry for A
        rec("03", "venmo__login", True, 700, battle="bB", task="t2"),  # B's next record: retry for B
        # mentions "bB" as a value, so it passes B's prefilter, but it is A's record
        rec("04", "simple_note__search_notes", True, 30, battle="A", arguments={"query": "bB"}),
        rec("05", "venmo__show_balance", False, 900, battle="bB", task="t2"),
    ])
    a = analyze_log(log, battle_id="A")
    b = analyze_log(log, battle_id="bB")
    assert (a.total_calls, a.failed_calls, a.retry_count, a.avg_duration_ms) == (3, 1, 1, 20.0)
    assert (b.total_calls, b.failed_calls, b.retry_count, b.avg_duration_ms) == (3, 2, 1, 700.0)
    assert set(a.calls_per_tool) == {"simple_note__login", "simple_note__search_notes"}
    assert set(b.calls_per_tool) == {"venmo__login", "venmo__show_balance"}
    assert a.calls_per_minute == 45.0   # 3 calls over 4 s
    assert analyze_log(log, task_id="t2").total_calls == 3
    assert analyze_log(log, battle_id="A", task_id="t2").total_calls == 0
    assert analyze_log(log).total_calls == 6
    assert a.malformed_lines == b.malformed_lines == 0 and a.lines_scanned == 6


def test_non_ascii_battle_id_without_prefilter(tmp_path: Path) -> None:
    lines = [rec("00", "x__y", True, 1, battle="bé"), rec("01", "x__y", True, 1, battle="other")]
    log = tmp_path / "u.jsonl"
    log.write_text(lines[0] + "\n" + json.dumps({**json.loads(lines[0]), "battle_id": "bé"}, ensure_ascii=False) + "\n" + lines[1] + "\n",
                   encoding="utf-8")
    assert analyze_log(log, battle_id="bé").total_calls == 2   # \u00e9-escaped and raw UTF-8 both match


def test_empty_and_missing_logs_give_zero_call_metrics(tmp_path: Path) -> None:
    empty = analyze_log(write(tmp_path / "empty.jsonl", []), battle_id="A", gold_apis=GOLD)
    assert empty.log_found and empty.total_calls == 0 and empty.lines_scanned == 0
    assert empty.error_rate is None and empty.p95_duration_ms is None and empty.calls_per_minute is None
    assert empty.api_precision is None and empty.api_recall == 0.0 and empty.api_f1 is None
    assert empty.missing_gold_apis == sorted(GOLD)
    missing = analyze_log(tmp_path / "nope" / "calls.jsonl", battle_id="A")
    assert not missing.log_found and missing.total_calls == 0 and missing.first_call_at is None


def test_seed_record_shape_read_without_filter(tmp_path: Path) -> None:
    seed = [  # the seed blue's wrapper: naive local timestamps, arguments as a JSON string, full result
        {"timestamp": "2025-03-01T10:00:00", "tool_name": "spotify__login", "arguments": '{"username": "x"}',
         "result": None, "success": False, "error": "401", "duration_ms": 100.0},
        {"timestamp": "2025-03-01T10:00:30", "tool_name": "spotify__login", "arguments": '{"username": "x"}',
         "result": {"access_token": "redacted"}, "success": True, "error": None, "duration_ms": 300.0},
        {"timestamp": "2025-03-01T10:01:00", "tool_name": "spotify__show_song_library", "arguments": '{"page_index": 0}',
         "result": [{"song_id": 1}, {"song_id": 2}], "success": True, "error": None, "duration_ms": 200.0},
    ]
    log = write(tmp_path / "seed.jsonl", [json.dumps(r) for r in seed])
    m = analyze_log(log)
    assert (m.total_calls, m.failed_calls, m.retry_count) == (3, 1, 1)
    assert m.avg_duration_ms == 200.0 and m.p50_duration_ms == 200.0 and m.calls_per_minute == 3.0
    assert m.first_call_at == datetime(2025, 3, 1, 10, 0, tzinfo=timezone.utc)
    assert m.pagination["spotify.show_song_library"].status == "complete"   # 2 items < limit 5
    assert m.malformed_lines == 0
    filtered = analyze_log(log, battle_id="A")
    assert filtered.total_calls == 0 and filtered.malformed_lines == 0


def test_pure_functions_and_zero_divisions() -> None:
    assert nearest_rank([], 50) is None
    assert nearest_rank([7.0], 95) == 7.0
    assert nearest_rank([float(v) for v in range(1, 21)], 95) == 19.0   # ceil(19.0) = 19
    assert nearest_rank([float(v) for v in range(1, 22)], 95) == 20.0   # ceil(19.95) = 20
    stamp = datetime(2025, 1, 1, tzinfo=timezone.utc)
    assert calls_per_minute(1, stamp, stamp) is None and calls_per_minute(0, None, None) is None
    assert f1(0.0, 0.0) == 0.0 and f1(None, 1.0) is None
    assert api_name("simple_note__login") == "simple_note.login" and api_name("a.b") == "a.b"
    no_gold = score_selection({"a.b"}, [], None)
    assert (no_gold.api_precision, no_gold.api_recall, no_gold.api_f1) == (0.0, None, None)
    unknown = score_selection({"a.b"}, None, ["a.b"])
    assert unknown.api_precision is None and unknown.scope_recall is None and unknown.scope_size == 1
    docs_only = score_selection({"api_docs.show_api_doc", "a__b"}, ["a.b"], [])
    assert docs_only.called_apis == ["a.b"] and docs_only.api_f1 == 1.0 and docs_only.scope_recall == 0.0


def test_pagination_series_keys_with_list_arguments_and_string_indices() -> None:
    tracker = PaginationTracker(["simple_note.search_notes"])
    tracker.add("simple_note.search_notes", {"tags": ["x"], "page_limit": 2}, True, 2)               # page 0 full
    tracker.add("simple_note.search_notes", {"tags": ["x"], "page_limit": "2", "page_index": "1"}, True, 1)  # page 1 short
    tracker.add("simple_note.search_notes", {"tags": ["y"]}, True, 5)                                # other series: full, stops
    tracker.add("simple_note.search_notes", {"tags": ["y"], "page_index": True}, True, 0)            # invalid index: no page state
    report = tracker.report()["simple_note.search_notes"]
    assert (report.series, report.complete_series, report.incomplete_series) == (2, 1, 1)
    assert report.pages_fetched == 4 and report.status == "incomplete"
