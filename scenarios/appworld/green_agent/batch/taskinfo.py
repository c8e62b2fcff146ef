"""`tasks/<task_id>/task.json`: what the world says about each task, saved beside its results.

Written once per task when a run starts, so the report (instruction, difficulty, gold APIs) can be
regenerated later without the world at hand.
"""

from __future__ import annotations

import logging
from pathlib import Path

from kernel.atomic import atomic_write_text
from green_agent.batch.aggregate import scenario_of
from green_agent.batch.checkpoint import TASK_INFO_FILE, task_dir
from green_agent.models.eval_run import TaskInfo
from green_agent.runfolder.reader import RunFolder
from kernel.world_data import WorldData

log = logging.getLogger(__name__)


def task_info(world: WorldData | None, task_id: str) -> TaskInfo:
    """The task's description from the world's files (bare id and scenario if unreadable)."""
    info = TaskInfo(task_id=task_id, scenario_id=scenario_of(task_id))
    if world is None or not world.has_task(task_id):
        return info
    try:
        spec = world.task(task_id)
    except Exception as exc:  # evidence only: a broken task file shows up in the battle itself
        log.warning("cannot read task %s from the world: %s", task_id, exc)
        return info
    return info.model_copy(update={"difficulty": spec.difficulty, "instruction": spec.instruction,
                                   "gold_apis": spec.gold_apis, "num_tests": spec.num_tests})


def save_task_info(out: Path, info: TaskInfo) -> None:
    atomic_write_text(task_dir(out, info.task_id) / TASK_INFO_FILE, info.model_dump_json(indent=2))


def load_task_info(out: Path, task_id: str) -> TaskInfo | None:
    """The task's `task.json` in the run folder `out` (None when missing or unreadable: `RunFolder.task_info`)."""
    return RunFolder(out).task_info(task_id)
