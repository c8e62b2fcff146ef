"""The secrets a task's own data holds: its supervisor's account passwords, for the scrubber to know by value.

AppWorld sets a task's world up from `data/tasks/<id>/dbs/<app>.jsonl` (one `[sql, params, executemany]` line
per statement, applied onto the base DBs): the supervisor and their `account_passwords` rows are INSERTs
there, which `supervisor__show_account_passwords` answers with. `task_secrets(data_dir, task_id)` returns
every value an INSERT of those files puts in a credential-named column (`kernel.redaction.is_sensitive_key`).
The files are the world's (ours, not the agent's), still read with limits: at most `MAX_FILE_BYTES` a file,
lines without a credential word skipped unparsed. A missing or unreadable task gives no values (the
gateway and the bridge still learn passwords and tokens from AppWorld's replies as they pass).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kernel.redaction import is_sensitive_key
from kernel.task_ids import MAX_TASK_ID_LEN, TASK_ID_PATTERN

MAX_FILE_BYTES = 64 << 20
_INSERT_COLUMNS = re.compile(r"^\s*INSERT\s+(?:OR\s+\w+\s+)?INTO\s+\S+\s*\(([^)]*)\)", re.IGNORECASE)
_CREDENTIAL_WORDS = ("pass", "secret", "token", "key", "credential", "authorization")


def task_secrets(data_dir: Path, task_id: str) -> list[str]:
    """The credential values the set-up of `task_id` inserts (sorted, unique); [] if its data cannot be read."""
    if len(task_id) > MAX_TASK_ID_LEN or not TASK_ID_PATTERN.fullmatch(task_id):  # the task-id rule: no path
        return []
    found: set[str] = set()
    for path in sorted((Path(data_dir) / "tasks" / task_id / "dbs").glob("*.jsonl")):
        try:
            if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                continue
            with open(path, encoding="utf-8", errors="replace") as lines:
                for line in lines:
                    if any(word in line.lower() for word in _CREDENTIAL_WORDS):
                        found.update(insert_secrets(line))
        except OSError:
            continue
    return sorted(found)


def insert_secrets(line: str) -> list[str]:
    """The values one change-log line inserts into credential-named columns."""
    try:
        sql, params, many = json.loads(line)
    except (ValueError, TypeError, RecursionError):
        return []
    match = _INSERT_COLUMNS.match(sql) if isinstance(sql, str) else None
    if match is None or not isinstance(params, list):
        return []
    secret = [i for i, column in enumerate(match.group(1).split(",")) if is_sensitive_key(column.strip().strip('"`'))]
    rows = params if many else [params]
    return [str(row[i]) for row in rows if isinstance(row, list) for i in secret
            if i < len(row) and isinstance(row[i], (str, int)) and not isinstance(row[i], bool)]
