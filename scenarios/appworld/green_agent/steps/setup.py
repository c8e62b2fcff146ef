"""Step 2: open the task world on the slot's env server, backed by the slot's APIs server."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from green_agent.appworld_client import DEFAULT_MAX_INTERACTIONS, AppWorldClient, TaskInfo

MAX_EXPERIMENT_NAME = 120


class SetupResult(BaseModel):
    """Step 2 output."""

    task: TaskInfo = Field(description="Instruction, supervisor and datetime from /initialize.")
    experiment_name: str = Field(description="AppWorld experiment holding this battle's outputs.")


def experiment_name_for(battle_id: str, task_id: str) -> str:
    """`<battle_id>_<task_id>`, reduced to `[A-Za-z0-9_.-]` (it becomes a directory name)."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{battle_id}_{task_id}").lstrip(".")
    return name[-MAX_EXPERIMENT_NAME:] or "battle"


def setup_task(client: AppWorldClient, task_id: str, experiment_name: str, apis_url: str | None,
               max_interactions: int = DEFAULT_MAX_INTERACTIONS) -> SetupResult:
    """Step 2: `/initialize` in remote-APIs mode, so Blue's MCP calls and the env server share state."""
    task = client.initialize(task_id, experiment_name, apis_url, max_interactions)
    return SetupResult(task=task, experiment_name=experiment_name)
