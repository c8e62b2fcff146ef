"""The differential test's change-log reader and comparison (`tests/change_log_support.py`), on files in
AppWorld's `dbs/<app>.jsonl` shape (`[sql, params, executemany]` lines, as its `DBChangesTracker` writes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from change_log_support import agent_changes, diff_change_logs, excise, read_change_log

SETUP = ["INSERT INTO supervisors (first_name, email) VALUES (?, ?)", ["Maya", "maya@example.com"], False]
COMPLETE = "UPDATE tasks SET status=?, record_hash=?, answer=? WHERE tasks.id = ?"
NOTE = "INSERT INTO notes (title, user_id) VALUES (?, ?)"


def write(dbs: Path, logs: dict[str, list[list]]) -> Path:
    dbs.mkdir(parents=True, exist_ok=True)
    for app, lines in logs.items():
        (dbs / f"{app}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return dbs


def test_reads_each_apps_statements_and_names_a_malformed_line(tmp_path: Path) -> None:
    dbs = write(tmp_path / "dbs", {"supervisor": [SETUP], "admin": []})
    (dbs / "model_hashes.json").write_text("{}")
    assert read_change_log(dbs) == {"admin": [], "supervisor": [tuple(SETUP)]}
    (dbs / "admin.jsonl").write_text('["no params"]\n')
    with pytest.raises(ValueError, match=r"admin.jsonl:1: not a \[sql, params, executemany\]"):
        read_change_log(dbs)
    with pytest.raises(FileNotFoundError):
        read_change_log(tmp_path / "empty")


def test_agent_changes_are_the_end_past_the_start_and_the_start_must_be_a_prefix() -> None:
    start = {"supervisor": [tuple(SETUP)], "admin": []}
    done = (COMPLETE, ["success", "h", "13", 1], False)
    end = {"supervisor": [tuple(SETUP), done], "admin": []}
    assert agent_changes(start, end) == {"supervisor": [done], "admin": []}
    with pytest.raises(AssertionError, match="change log of supervisor is not the start log"):
        agent_changes(start, {"supervisor": [done], "admin": []})
    with pytest.raises(AssertionError, match="admin"):
        agent_changes(start, {"supervisor": [tuple(SETUP)]})


def test_excise_removes_exactly_one_executions_statements() -> None:
    first, known, last = ((COMPLETE, ["success", "h1", "a", 1], False), (COMPLETE, ["success", "h2", "b", 1], False),
                          (NOTE, ["n", 1], False))
    before = {"supervisor": [tuple(SETUP), first], "simple_note": []}
    after = {"supervisor": [tuple(SETUP), first, known], "simple_note": []}
    end = {"supervisor": [tuple(SETUP), first, known], "simple_note": [last]}
    assert excise(end, before, after) == {"supervisor": [tuple(SETUP), first], "simple_note": [last]}


def test_equal_logs_give_no_difference_and_every_kind_of_difference_is_named_readably() -> None:
    appworld = {"supervisor": [(COMPLETE, ["success", "h", "from-appworld", 1], False)], "admin": []}
    assert diff_change_logs("case", appworld, {app: list(c) for app, c in appworld.items()}) == []
    ours = {"supervisor": [(COMPLETE, ["success", "h", "from-ours", 1], False)], "admin": []}
    [changed] = diff_change_logs("case", ours, appworld)
    assert changed.startswith("case change log of supervisor: ours 1 statement(s), appworld 1")
    assert '\n  -["UPDATE tasks' in changed and "from-appworld" in changed
    assert '\n  +["UPDATE tasks' in changed and "from-ours" in changed
    extra = {**appworld, "admin": [(NOTE, ["n", 1], False)]}
    [added] = diff_change_logs("case", extra, appworld)
    assert added.startswith("case change log of admin: ours 1 statement(s), appworld 0")
    reordered = {"supervisor": [(NOTE, ["a", 1], False), (NOTE, ["b", 1], False)]}
    assert diff_change_logs("case", reordered, {"supervisor": reordered["supervisor"][::-1]})  # order matters
    assert diff_change_logs("case", {"supervisor": appworld["supervisor"]}, appworld) == [
        "case change log: app admin only in appworld's"]


def test_a_long_diff_is_cut_to_a_readable_length() -> None:
    many = {"spotify": [(NOTE, [f"song {i}", i], False) for i in range(200)]}
    [changed] = diff_change_logs("case", many, {"spotify": []})
    assert changed.count("\n") <= 45 and "more diff line(s)" in changed
