"""What the agent changed in the world: AppWorld's per-app DB change log, summed per app and table.

AppWorld's environment server keeps each app database's change log in the task's outputs dir
(`dbs/<app>.jsonl`, one `[sql, params, executemany]` line per INSERT/UPDATE/DELETE since the world was
loaded): written at `/initialize` (the task's own set-up) and after each `/execute`. `start_counts(dbs)` is
the log's length per app right after set-up; `summarize(dbs, start)` reads the lines past it (the agent's
and the end-of-battle persist, which changes nothing) and counts, per app and table, rows inserted and
UPDATE / DELETE statements. Lines are read bounded (`kernel.call_log_reader.bounded_lines`); a line that
is not a change is skipped. The values themselves are never copied (they may hold personal data).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kernel.call_log_reader import MAX_LINE_BYTES, bounded_lines
from kernel.trace_record import TableChange

MAX_APPS = 200
_INSERT = re.compile(r"^\s*INSERT\s+(?:OR\s+\w+\s+)?INTO\s+[\"`\[]?(\w+)", re.IGNORECASE)
_UPDATE = re.compile(r"^\s*UPDATE\s+(?:OR\s+\w+\s+)?[\"`\[]?(\w+)", re.IGNORECASE)
_DELETE = re.compile(r"^\s*DELETE\s+FROM\s+[\"`\[]?(\w+)", re.IGNORECASE)


def _logs(dbs: Path) -> list[Path]:
    try:
        return sorted(Path(dbs).glob("*.jsonl"))[:MAX_APPS]
    except OSError:
        return []


def start_counts(dbs: Path) -> dict[str, int]:
    """Lines of each app's change log now (the world's start, read right after set-up)."""
    counts: dict[str, int] = {}
    for path in _logs(dbs):
        try:
            with open(path, "rb") as handle:
                counts[path.stem] = sum(1 for _ in bounded_lines(handle, MAX_LINE_BYTES))
        except OSError:
            continue
    return counts


def summarize(dbs: Path, start: dict[str, int]) -> list[TableChange]:
    """Per app and table, what the lines past `start` changed (apps without a start count from 0)."""
    totals: dict[tuple[str, str], TableChange] = {}
    for path in _logs(dbs):
        app = path.stem
        try:
            with open(path, "rb") as handle:
                for number, line in enumerate(bounded_lines(handle, MAX_LINE_BYTES)):
                    if number >= start.get(app, 0) and line is not None:
                        _count(app, line, totals)
        except OSError:
            continue
    return [totals[key] for key in sorted(totals)]


def _count(app: str, line: bytes, totals: dict[tuple[str, str], TableChange]) -> None:
    try:
        sql, params, many = json.loads(line)
    except (ValueError, TypeError, RecursionError):
        return
    if not isinstance(sql, str):
        return
    for pattern, field in ((_INSERT, "added"), (_UPDATE, "changed"), (_DELETE, "removed")):
        match = pattern.match(sql)
        if match:
            change = totals.setdefault((app, match.group(1)), TableChange(app=app, table=match.group(1)))
            rows = len(params) if field == "added" and many and isinstance(params, list) else 1
            setattr(change, field, getattr(change, field) + rows)
            return
