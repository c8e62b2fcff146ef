"""Step 7: persist the world and copy this battle's evidence into the run directory.

1. `persist_state` (one `/execute` of `pass`, B5) so the outputs dir holds the end state that the
   single `/evaluate` will read; then `/save_logs`.
2. Copy `<root>/experiments/outputs/<experiment>/tasks/<task_id>/` to `<run_dir>/appworld/`, with
   credentials redacted: from the text logs (AppWorld's `api_calls.jsonl` carries access tokens) by key and
   by value (every secret known for the battle, `kernel.scrubber`), and from the DB change logs
   (`dbs/*.jsonl` insert the supervisor's account passwords) by column: the saved end state keeps what the
   agent itself wrote into the world (docs/security.md). The copy is evidence for people; AppWorld's own
   outputs dir keeps the exact, replayable state.
3. Copy this battle's records out of the gateway's shared JSONL call log (filtered by `battle_id`,
   malformed lines skipped) to `<run_dir>/mcp_calls.jsonl`, and in code mode its execution records
   (`kernel.execution_record`) to `<run_dir>/mcp_executions.jsonl`.

Steps 2-3 are evidence, not inputs of the verdict: a failure there is recorded, not fatal. A call log
that exists but cannot be read (a directory, unreadable, an I/O error) is named in `call_log_problem`
and leaves `call_log` None, so no trajectory is computed from it (never a silent 0-call trajectory).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
from functools import lru_cache
from pathlib import Path


from green_agent.appworld_client import AppWorldClient
from green_agent.models.result import ArchiveRecord
from kernel.call_log_reader import MAX_LINE_BYTES, bounded_lines, seek_mark
from kernel.execution_record import executions_log_path
from kernel.redaction import REDACTED, is_sensitive_key, redact, redact_free_text
from kernel.scrubber import register_secrets, scrub, scrub_data

log = logging.getLogger(__name__)

CALLS_FILE = "mcp_calls.jsonl"
EXECUTIONS_FILE = "mcp_executions.jsonl"
OUTPUTS_DIR = "appworld"
def outputs_path(appworld_root: Path, experiment_name: str, task_id: str) -> Path:
    return Path(appworld_root) / "experiments" / "outputs" / experiment_name / "tasks" / task_id


def archive(client: AppWorldClient, task_id: str, experiment_name: str, appworld_root: Path, run_dir: Path,
            call_log_path: Path | None, battle_id: str, marks: dict[str, int] | None = None) -> ArchiveRecord:
    """Step 7. Raises (infrastructure) only if the world state cannot be persisted.

    `marks`: the shared logs' sizes before the battle was set (`kernel.call_log_reader.log_marks` over
    `battle_logs`): its records are read from there on."""
    marks = marks or {}
    run_dir.mkdir(parents=True, exist_ok=True)
    client.persist_state(task_id)
    result = ArchiveRecord(state_persisted=True, logs_saved=False)
    try:
        client.save_logs(task_id)
        result.logs_saved = True
    except Exception as exc:  # evidence only
        result.problems.append(f"save_logs: {exc}")
    source = outputs_path(appworld_root, experiment_name, task_id)
    if source.is_dir():
        target = run_dir / OUTPUTS_DIR
        copy_redacted(source, target, battle_id)
        result.outputs_dir = str(target)
        result.dbs_digest = state_digest(target / "dbs")
        version = source / "version" / "code.txt"
        if version.is_file():
            result.appworld_version = version.read_text().strip() or None
    else:
        result.problems.append(f"no AppWorld outputs at {source} (env server serving another root?)")
    if call_log_path is not None:
        calls, executions = battle_logs(Path(call_log_path))
        _copy_calls(calls, battle_id, run_dir / CALLS_FILE, result, marks.get(str(calls), 0))
        _copy_executions(executions, battle_id, run_dir / EXECUTIONS_FILE, result, marks.get(str(executions), 0))
    return result


def battle_logs(call_log_path: Path) -> list[Path]:
    """The gateway's shared logs this step copies a battle's records from: its call log, its executions log."""
    return [Path(call_log_path), executions_log_path(Path(call_log_path))]


def state_digest(dbs: Path) -> str | None:
    """sha256 over the saved end state as archived (each file's name and bytes, sorted), or None without one.

    `rejudge` recomputes it: a saved state edited after the run no longer matches result.json's record."""
    if not dbs.is_dir():
        return None
    digest = hashlib.sha256()
    for path in sorted(p for p in dbs.iterdir() if p.is_file()):
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def call_log_problem(source: Path) -> str | None:
    """Why `source` cannot serve as a call log, or None (a missing file is a log with no calls yet)."""
    if not source.exists():
        return None
    if not source.is_file():
        return f"the call log {source} is not a regular file (a directory?): this battle's calls cannot be read"
    if not os.access(source, os.R_OK):
        return f"the call log {source} is not readable: this battle's calls cannot be read"
    return None


def _copy_calls(source: Path, battle_id: str, target: Path, result: ArchiveRecord, mark: int = 0) -> None:
    """Step 3: this battle's records to `target`, or a `call_log_problem` when the log cannot be read."""
    problem = call_log_problem(source)
    if problem is None:
        try:
            result.call_records = filter_call_log(source, battle_id, target, mark)
            result.call_log = str(target)
            return
        except OSError as exc:
            problem = f"the call log {source} could not be read or copied ({exc.strerror or exc})"
    result.call_log_problem = problem
    result.problems.append(problem)


def _copy_executions(source: Path, battle_id: str, target: Path, result: ArchiveRecord, mark: int = 0) -> None:
    """Code mode: this battle's execution records (the gateway writes them beside the call log)."""
    if not source.is_file():
        return
    try:
        if filter_call_log(source, battle_id, target, mark):
            result.executions_log = str(target)
    except OSError as exc:
        result.problems.append(f"the executions log {source} could not be read or copied ({exc.strerror or exc})")


def filter_call_log(source: Path, battle_id: str, target: Path, mark: int = 0) -> int:
    """Copy the lines of `battle_id` from a JSONL log to `target`, read from byte `mark` on
    (`kernel.call_log_reader.seek_mark`); returns the count.

    Lines are read as bytes with the trajectory reader's bounded line reader (`kernel.call_log_reader.bounded_lines`): truncated, binary,
    non-object and oversized (> 1 MiB, never held in memory) lines are left out, so one damaged or
    hostile line cannot stop the archive or the analysis that reads the copy.
    """
    count = 0
    needle = battle_id.encode("utf-8", "replace")
    with open(target, "wb") as out:
        if not source.is_file():
            return 0
        with open(source, "rb") as lines:
            seek_mark(lines, mark)
            for line in bounded_lines(lines, MAX_LINE_BYTES):
                if line is None or needle not in line:
                    continue
                try:
                    record = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if isinstance(record, dict) and record.get("battle_id") == battle_id:
                    out.write(line if line.endswith(b"\n") else line + b"\n")
                    count += 1
    return count


def copy_redacted(source: Path, target: Path, battle_id: str | None = None) -> None:
    """Copy a directory tree, redacting `logs/` text files (scrubbed of `battle_id`'s secrets too) and the SQL change
    logs (`dbs/`, `checkpoints/`). Each file is written once: a file to redact is read from `source` and written
    redacted (with the source's permission bits), the others copied as they are."""
    source = Path(source)

    def copy(src: str, dst: str) -> None:
        path = Path(src)
        parts = path.relative_to(source).parts
        if parts[0] == "logs" and path.suffix in {".jsonl", ".md", ".txt", ".json"}:
            text = redact_text(path.read_text(errors="replace"), path.suffix == ".jsonl", battle_id)
        elif parts[0] in ("dbs", "checkpoints") and path.suffix == ".jsonl":
            text = "".join(redact_sql_line(line) for line in path.read_text(errors="replace").splitlines(True))
        else:
            shutil.copy2(src, dst)
            return
        Path(dst).write_text(text)
        shutil.copymode(src, dst)

    shutil.copytree(source, target, dirs_exist_ok=True, copy_function=copy)


_INSERT_COLUMNS = re.compile(r"^\s*INSERT\s+INTO\s+\S+\s*\(([^)]*)\)", re.IGNORECASE)
_UPDATE_SETS = re.compile(r"\bSET\s+(.*?)\s+WHERE\b", re.IGNORECASE | re.DOTALL)


def redact_sql_line(line: str) -> str:
    """Blank secret columns in one `[sql, params, executemany]` change-log line (INSERT and UPDATE ... SET)."""
    try:
        sql, params, many = json.loads(line)
    except (ValueError, TypeError):
        return redact_free_text(line)
    if not isinstance(sql, str) or not isinstance(params, list):
        return line
    secret = _secret_columns(sql)
    if not secret:
        return line
    rows = params if many else [params]
    register_secrets(str(v) for row in rows if isinstance(row, list) for i, v in enumerate(row) if i in secret)
    rows = [[REDACTED if i in secret else v for i, v in enumerate(row)] if isinstance(row, list) else row for row in rows]
    end = "\n" if line.endswith("\n") else ""
    return json.dumps([sql, rows if many else rows[0], many]) + end


@lru_cache(maxsize=1024)
def _secret_columns(sql: str) -> frozenset[int]:
    """The places of the credential-named columns an INSERT or UPDATE sets (AppWorld repeats each statement's text
    over its change log's lines, so each is parsed once)."""
    match = _INSERT_COLUMNS.match(sql) or _UPDATE_SETS.search(sql)
    if match is None:
        return frozenset()
    columns = [c.split("=")[0].strip().strip('"`') for c in match.group(1).split(",")]
    return frozenset(i for i, c in enumerate(columns) if is_sensitive_key(c))


def redact_text(text: str, jsonl: bool = False, battle_id: str | None = None) -> str:
    """Blank credential values (`kernel.redaction`) and known secret values (`kernel.scrubber`); JSONL line by line."""
    if not jsonl:
        return scrub(redact_free_text(text), battle_id)
    lines = []
    for line in text.splitlines():
        try:
            lines.append(json.dumps(scrub_data(redact(json.loads(line), scrub_strings=True), battle_id)))
        except ValueError:
            lines.append(scrub(redact_free_text(line), battle_id))
    return "\n".join(lines) + ("\n" if lines else "")
