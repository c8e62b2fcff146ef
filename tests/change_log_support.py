"""AppWorld's DB change log of a task world, read from its outputs dir, and the comparison of two.

AppWorld keeps a world's state as a change log per app database: its `DBChangesTracker` records every
INSERT/UPDATE/DELETE/CREATE/DROP statement run on the app's DB since the world was loaded, and
`_save_state(format="changes")` writes it to `<outputs>/<experiment>/tasks/<task_id>/dbs/<app>.jsonl`, one
`[sql, params, executemany]` line per statement, for the task's allowed apps, `admin` and `supervisor`.
The environment server writes it at `/initialize` (the start state: the task's own set-up) and after every
`/execute` (so after `persist_state`, B5, it holds the end state); AppWorld's evaluator judges the end
state from these files. Reading them costs no server round trip.

`ChangeLog` maps app -> its statements. `agent_changes(start, end)` is what a battle changed: the end
log past the start log (the tracker only appends; anything else is reported). `excise` removes the
changes of one execution (read before and after it) from an end log. `diff_change_logs` says where two
change logs differ, as a short unified diff per app, or nothing when they are equal.

Compared exactly, with no normalisation: time is frozen at the task's datetime on both sides, and the
same API calls run in the same order on identical fresh worlds, so statements, parameters (auto-increment
ids, timestamps, record hashes) and their order come out the same (measured on every differential case,
2026-12-03). A normalisation, if one is ever needed, goes here with its why.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

Change = tuple[str, Any, bool]
ChangeLog = dict[str, list[Change]]
MAX_DIFF_LINES = 40
MAX_LINE_CHARS = 300


def read_change_log(dbs_dir: Path) -> ChangeLog:
    """Every `<app>.jsonl` of an outputs `dbs/` dir, parsed; a malformed line fails with its place."""
    log: ChangeLog = {}
    for path in sorted(Path(dbs_dir).glob("*.jsonl")):
        changes = []
        for number, line in enumerate(path.read_text().splitlines(), 1):
            record = json.loads(line)
            if not (isinstance(record, list) and len(record) == 3 and isinstance(record[0], str)):
                raise ValueError(f"{path}:{number}: not a [sql, params, executemany] change: {line[:200]}")
            changes.append((record[0], record[1], bool(record[2])))
        log[path.stem] = changes
    if not log:
        raise FileNotFoundError(f"no AppWorld change log (*.jsonl) in {dbs_dir}")
    return log


def agent_changes(start: ChangeLog, end: ChangeLog) -> ChangeLog:
    """Per app, the statements of `end` past those of `start` (every app of either; `start` must be a prefix)."""
    changes: ChangeLog = {}
    for app in sorted(set(start) | set(end)):
        before, after = start.get(app, []), end.get(app)
        if after is None or after[:len(before)] != before:
            raise AssertionError(f"the change log of {app} is not the start log plus appended changes "
                                 f"({len(before)} statement(s) at the start, "
                                 f"{'no log' if after is None else len(after)} at the end)")
        changes[app] = after[len(before):]
    return changes


def excise(end: ChangeLog, before: ChangeLog, after: ChangeLog) -> ChangeLog:
    """`end` without the statements one execution appended (`before`/`after`: the log around it)."""
    agent_changes(before, after)  # `before` must be a prefix of `after`, as `after` of `end`
    return {app: before.get(app, []) + appended for app, appended in agent_changes(after, end).items()}


def count(log: ChangeLog) -> int:
    return sum(len(changes) for changes in log.values())


def diff_change_logs(label: str, ours: ChangeLog, theirs: ChangeLog) -> list[str]:
    """One readable difference per app whose statements differ (ours vs AppWorld's); [] when equal."""
    differences = []
    for app in sorted(set(ours) | set(theirs)):
        mine, oracle = ours.get(app), theirs.get(app)
        if mine == oracle:
            continue
        if mine is None or oracle is None:
            differences.append(f"{label} change log: app {app} only in {'appworld' if mine is None else 'ours'}'s")
            continue
        diff = list(difflib.unified_diff(_lines(oracle), _lines(mine), "appworld", "ours", lineterm="", n=1))
        shown = diff[:MAX_DIFF_LINES] + ([f"... {len(diff) - MAX_DIFF_LINES} more diff line(s)"]
                                         if len(diff) > MAX_DIFF_LINES else [])
        differences.append(f"{label} change log of {app}: ours {len(mine)} statement(s), appworld {len(oracle)}\n  "
                           + "\n  ".join(shown))
    return differences


def _lines(changes: list[Change]) -> list[str]:
    return [_cut(json.dumps(list(change))) for change in changes]


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + f"... ({len(text)} chars)"
