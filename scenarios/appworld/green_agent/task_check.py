"""Is a task of the world intact? Names what is wrong with a task folder before a battle relies on it.

Contract: `task_problem(world, task_id)` returns None when the task folder holds what AppWorld needs to
open, run and evaluate the task (a `specs.json` object with an instruction, a `dbs/` folder of JSONL
files, `ground_truth/` with `evaluation.py` and a JSON `metadata.json`), and otherwise one line naming
the task, the file and the fault. A task with no folder at all is not "broken" (None: it is unknown,
which `task_ids.resolve_task` reports). `require_intact` raises `BrokenTaskError` (bad input, exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from kernel.errors import BrokenTaskError
from kernel.world_data import WorldData

REBUILD_HINT = "rebuild the world (`appworld-green world build`) or leave the task out"


def _json_fault(path: Path, want_object: bool) -> str | None:
    if not path.is_file():
        return f"{path.name} is missing"
    try:
        value = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"{path.name} is not valid JSON ({type(exc).__name__})"
    if want_object and not isinstance(value, dict):
        return f"{path.name} is not a JSON object"
    return None


def _fault(directory: Path) -> str | None:
    specs_fault = _json_fault(directory / "specs.json", want_object=True)
    if specs_fault:
        return specs_fault
    if not isinstance(json.loads((directory / "specs.json").read_text()).get("instruction"), str):
        return "specs.json has no instruction"
    dbs = directory / "dbs"
    if not dbs.is_dir() or not any(dbs.glob("*.jsonl")):
        return "dbs/ is missing or holds no .jsonl database"
    if not (directory / "ground_truth" / "evaluation.py").is_file():
        return "ground_truth/evaluation.py is missing"
    return _json_fault(directory / "ground_truth" / "metadata.json", want_object=True)


def task_problem(world: WorldData, task_id: str) -> str | None:
    """One line naming what is wrong with the task's folder, or None (intact, or no folder at all)."""
    directory = world.data / "tasks" / task_id
    if not directory.is_dir():
        return None
    fault = _fault(directory)
    return f"task {task_id} in the world at {world.root} is broken: {fault}" if fault else None


def require_intact(world: WorldData, task_ids: Iterable[str]) -> None:
    """Raise BrokenTaskError naming every broken task (up to five) and what to do."""
    problems = [p for t in task_ids if (p := task_problem(world, t))]
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise BrokenTaskError("; ".join(problems[:5]) + more + f": {REBUILD_HINT}")
