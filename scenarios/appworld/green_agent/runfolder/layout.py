"""Where things are in a run folder: its file names, its unit of work (a task and a trial) and their folders.

An eval run folder (`eval`, `assess`, `serve`) holds `run.json`, `results.json`, `agentbeats_results.json`,
`report.html`, `events.jsonl` and `tasks/<task_id>[/trial-<k>]/` (one folder per battle, `trial-<k>` only when the
run has several trials) with the battle's `result.json`, evidence and `trace.jsonl`, and `tasks/<task_id>/task.json`.
A battle's own folder (`battle`, `demo`) holds one `result.json` at its top.

A task id becomes a folder name only here, and only once it passed the task-id rule (`kernel.task_ids`): no id
makes a path that leaves the run folder, whoever wrote it.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from green_agent.models.result_assembly import RESULT_FILE
from kernel.task_ids import validate_task_id
from kernel.trace_record import TRACE_FILE

MANIFEST_FILE = "run.json"
RESULTS_FILE = "results.json"
AGENTBEATS_FILE = "agentbeats_results.json"
REPORT_FILE = "report.html"
EVENTS_FILE = "events.jsonl"
TASKS_DIR = "tasks"
TASK_INFO_FILE = "task.json"
PROFILE_PAGE = "reliability.html"
"""A reliability profile's page, beside its runs' folders (`green_agent.reliability.run`)."""

__all__ = ["AGENTBEATS_FILE", "EVENTS_FILE", "MANIFEST_FILE", "PROFILE_PAGE", "REPORT_FILE", "RESULTS_FILE", "RESULT_FILE",
           "TASKS_DIR", "TASK_INFO_FILE", "TRACE_FILE", "BattleKey", "battle_dir", "battle_keys", "result_path",
           "task_dir"]


class BattleKey(NamedTuple):
    """One unit of work: a task and a trial (1-based)."""

    task_id: str
    trial: int


def battle_keys(task_ids: list[str], trials: int) -> list[BattleKey]:
    """Every (task, trial) of a run, task-major (callers bound `trials` first: `reader.check_manifest`)."""
    return [BattleKey(task, trial) for task in task_ids for trial in range(1, trials + 1)]


def task_dir(out: Path, task_id: str) -> Path:
    """`tasks/<task_id>` (BadInputError for an id that breaks the task-id rule)."""
    return Path(out) / TASKS_DIR / validate_task_id(task_id)


def battle_dir(out: Path, key: BattleKey, trials: int) -> Path:
    """`tasks/<task_id>` with one trial, `tasks/<task_id>/trial-<k>` with several."""
    base = task_dir(out, key.task_id)
    return base if trials == 1 else base / f"trial-{key.trial}"


def result_path(key: BattleKey, trials: int) -> str:
    """Where the battle's result.json is, relative to the run folder (as results.json's rows name it)."""
    return (battle_dir(Path(), key, trials) / RESULT_FILE).as_posix()
