"""A battle's saved end state -> an AppWorld outputs folder that AppWorld's evaluator can read.

The archive step saved AppWorld's end state as change logs (`appworld/dbs/<app>.jsonl`, one
`[sql, params, executemany]` per line, applied by AppWorld onto the world's base DBs) with the supervisor's
passwords redacted. A run folder may come from anyone, so the saved state is data, read with limits before
anything runs it:
- only regular files named `<app>.jsonl` (lowercase letters and `_`) and `model_hashes.json`; no symlink, at
  most `MAX_STATE_BYTES` in all and `MAX_LINE_BYTES` a line;
- every line must be `[sql, params, executemany]` whose statement starts with INSERT, UPDATE or DELETE (what
  AppWorld's change tracker writes): anything else (ATTACH, PRAGMA, a second statement) refuses the state;
- a value the archive redacted is restored from the same row of the world's own task input
  (`data/tasks/<id>/dbs`): the archived line with every non-redacted value equal to the input line's. A
  redacted value with no such line (the agent itself wrote a secret) stays redacted and is counted.
`stage_state` writes the checked lines, re-serialized, under `<work>/experiments/outputs/<experiment>/tasks/
<task>/dbs`, and `work_root` links `<work>/data` to the world's data, so AppWorld reads the run's state against
the world's base DBs and ground truth and writes nothing into either.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from kernel.call_log_reader import MAX_LINE_BYTES, bounded_lines
from kernel.redaction import REDACTED

MAX_STATE_BYTES = 64 << 20
"""Largest saved state read for one battle (the dev split's are a few KiB to a few hundred KiB)."""
_APP_FILE = re.compile(r"[a-z_]{1,40}\.jsonl")
HASHES_FILE = "model_hashes.json"
_STATEMENT = re.compile(r"\s*(INSERT|UPDATE|DELETE)\b", re.IGNORECASE)


class StateError(ValueError):
    """The saved state cannot be given to AppWorld's evaluator; the message says why."""


class StagedState(NamedTuple):
    """What `stage_state` wrote."""

    lines: int
    restored: int
    unrestored: int


def work_root(work: Path, world_root: Path) -> Path:
    """Make `work` an AppWorld root whose `data` is the world's (a symlink); returns it."""
    work.mkdir(parents=True, exist_ok=True)
    link = work / "data"
    if not link.exists():
        link.symlink_to((Path(world_root) / "data").resolve(), target_is_directory=True)
    return work


def outputs_dbs(work: Path, experiment: str, task_id: str) -> Path:
    return work / "experiments" / "outputs" / experiment / "tasks" / task_id / "dbs"


def stage_state(saved_dbs: Path, input_dbs: Path, target: Path) -> StagedState:
    """Check the saved state in `saved_dbs`, restore redacted values from `input_dbs`, write it to `target`.

    Raises:
        StateError: the state is missing, too large, or holds something AppWorld's change logs never do.
    """
    if saved_dbs.is_symlink() or not saved_dbs.is_dir():
        raise StateError(f"no saved end state ({saved_dbs.name} folder missing or not a folder)")
    files = sorted(saved_dbs.iterdir())
    budget = MAX_STATE_BYTES
    target.mkdir(parents=True, exist_ok=True)
    totals = [0, 0, 0]
    for path in files:
        if path.name != HASHES_FILE and not _APP_FILE.fullmatch(path.name):
            raise StateError(f"unexpected file {path.name!r} in the saved state")
        if path.is_symlink() or not path.is_file():
            raise StateError(f"{path.name} in the saved state is not a regular file")
        budget -= path.stat().st_size
        if budget < 0:
            raise StateError(f"the saved state is larger than {MAX_STATE_BYTES} bytes")
        if path.name == HASHES_FILE:
            target.joinpath(path.name).write_text(json.dumps(_hashes(path)))
            continue
        originals = _input_lines(input_dbs / path.name)
        lines, restored, unrestored = _stage_file(path, originals, target / path.name)
        totals = [totals[0] + lines, totals[1] + restored, totals[2] + unrestored]
    return StagedState(*totals)


def _hashes(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes()[:MAX_LINE_BYTES])
    except ValueError:
        raise StateError(f"{path.name} is not JSON") from None
    if not isinstance(data, dict):
        raise StateError(f"{path.name} is not an object")
    return data


def _stage_file(path: Path, originals: dict[str, list[Any]], target: Path) -> tuple[int, int, int]:
    count = restored = unrestored = 0
    with open(path, "rb") as handle, open(target, "w") as out:
        for number, raw in enumerate(bounded_lines(handle, MAX_LINE_BYTES), start=1):
            if raw is None:
                raise StateError(f"{path.name} line {number} is longer than {MAX_LINE_BYTES} bytes")
            if not raw.strip():
                continue
            sql, params, many = _change(raw, path.name, number)
            if _has_redacted(params):
                original = next((p for p in originals.get(sql, []) if _matches(params, p)), None)
                if original is None:
                    unrestored += 1
                else:
                    params, restored = original, restored + 1
            out.write(json.dumps([sql, params, many]) + "\n")
            count += 1
    return count, restored, unrestored


def _change(raw: bytes, name: str, number: int) -> tuple[str, Any, bool]:
    where = f"{name} line {number}"
    try:
        change = json.loads(raw)
    except (ValueError, RecursionError):
        raise StateError(f"{where} is not JSON") from None
    if not (isinstance(change, list) and len(change) == 3 and isinstance(change[0], str)
            and isinstance(change[1], list) and isinstance(change[2], bool)):
        raise StateError(f"{where} is not an AppWorld change [sql, params, executemany]")
    if not _STATEMENT.match(change[0]):
        raise StateError(f"{where} is not an INSERT, UPDATE or DELETE: {change[0][:60]!r}")
    return change[0], change[1], change[2]


def _input_lines(path: Path) -> dict[str, list[Any]]:
    """sql -> the params of each line of the world's own change log for this app (trusted: the world's files)."""
    found: dict[str, list[Any]] = {}
    if not path.is_file():
        return found
    for line in path.read_text().splitlines():
        try:
            sql, params, _ = json.loads(line)
        except (ValueError, TypeError):
            continue
        found.setdefault(sql, []).append(params)
    return found


def _has_redacted(value: Any) -> bool:
    if isinstance(value, list):
        return any(_has_redacted(v) for v in value)
    return value == REDACTED


def _matches(saved: Any, original: Any) -> bool:
    """`saved` equals `original` wherever it is not the redaction marker."""
    if saved == REDACTED:
        return True
    if isinstance(saved, list):
        return isinstance(original, list) and len(saved) == len(original) and all(
            _matches(s, o) for s, o in zip(saved, original))
    return saved == original and type(saved) is type(original)
