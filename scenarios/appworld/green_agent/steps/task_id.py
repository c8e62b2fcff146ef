"""Step 1: the battle's task id, read from its task config, validated (the rule is `kernel.task_ids`) and
checked against the world (its files when readable here, else the env server)."""

from __future__ import annotations

from kernel.task_ids import TaskLookup, TaskRef, resolve_task
from kernel.world_data import WorldData


def resolve_step(task_config: str, world: WorldData | None, split: str, server: TaskLookup | None) -> TaskRef:
    """The validated, existing task id (BadInputError / UnknownTaskError otherwise)."""
    return resolve_task(task_config, world, split, lookup=server)
