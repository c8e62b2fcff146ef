"""Attempts of one battle: their numbers, the earlier attempts' records, interrupted attempts.

Contract:
- Every attempt of a (task, trial) has its own number, counted over the whole run directory (from the
  `start` lines of `events.jsonl`), so a resumed re-run of an interrupted battle gets a new battle id
  (`...-a2`, not `...-a1` again) and its call-log filter sees only its own calls.
- Before a new attempt starts, the previous attempt's files in the battle directory (its
  `result.json` and evidence) are moved to `attempts/<its battle id>/` beside the new one. That folder
  is not read by the aggregates: only the battle directory's own `result.json` is scored.
- An attempt that ends in an infra error while the run is stopping (Ctrl-C / SIGTERM reached the main
  thread; the slot was shut down under the battle) is recorded as `Interrupted` in the step it
  reached, like `appworld-green battle` records it.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

from green_agent.batch.checkpoint import RESULT_FILE, TASK_INFO_FILE, BattleKey, read_events
from green_agent.models.result import BattleResult, ErrorRecord
from green_agent.models.result_assembly import write_result
from green_agent.runfolder.reader import RunFolder

ATTEMPTS_DIR = "attempts"
"""Sub-folder of a battle directory holding earlier attempts, one folder per battle id."""


def prior_attempts(out: Path) -> dict[BattleKey, int]:
    """(task, trial) -> the highest attempt number already started in this run directory."""
    highest: dict[BattleKey, int] = defaultdict(int)
    for event in read_events(out):
        if event.get("event") != "start":
            continue
        try:
            key = BattleKey(str(event["task_id"]), int(event["trial"]))
            number = int(event.get("attempt") or 1)
        except (KeyError, TypeError, ValueError):
            continue
        highest[key] = max(highest[key], number)
    return dict(highest)


def battle_id_for(run_id: str, key: BattleKey, attempt: int) -> str:
    """`<run>-<task>-t<trial>-a<attempt>`."""
    return f"{run_id}-{key.task_id}-t{key.trial}-a{attempt}"


def set_aside(directory: Path) -> Path | None:
    """Move the previous attempt's files to `attempts/<battle id>/`; returns that folder (None: nothing there).

    Keeps the task's `task.json`, other trials' folders and earlier attempts in place. Files of an
    attempt that left no readable `result.json` go to `attempts/unrecorded-<n>/`.
    """
    if not directory.is_dir():
        return None
    movable = [c for c in directory.iterdir() if not _kept(c)]
    if not movable:
        return None
    previous = RunFolder(directory).result_at(directory / RESULT_FILE).result
    target = _free_name(directory / ATTEMPTS_DIR, previous.battle_id if previous else "unrecorded")
    target.mkdir(parents=True)
    for child in movable:
        shutil.move(str(child), str(target / child.name))
    return target


def _kept(child: Path) -> bool:
    return child.name in (TASK_INFO_FILE, ATTEMPTS_DIR) or (child.is_dir() and child.name.startswith("trial-"))


def _free_name(parent: Path, stem: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in stem) or "unrecorded"
    candidate, n = parent / safe, 1
    while candidate.exists():
        n += 1
        candidate = parent / f"{safe}-{n}"
    return candidate


def mark_interrupted(result: BattleResult, directory: Path) -> BattleResult:
    """Relabel an infra error that the run's own shutdown caused as `Interrupted` (rewrites result.json)."""
    if result.status != "infra_error" or (result.error and result.error.type == "Interrupted"):
        return result
    step = result.error.step if result.error else "battle"
    message = f"the run was interrupted (Ctrl-C or SIGTERM) during step {step}; the battle is not scored"
    relabelled = result.model_copy(update={
        "reason": message, "error": ErrorRecord(type="Interrupted", step=step, message=message)})
    write_result(relabelled, directory)
    return relabelled
