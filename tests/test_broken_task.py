"""A world with a damaged task folder: every entry point names the task and the fault (exit 2 in the CLI),
never "unknown task" or "no active world for this task"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from batch_fakes import FakeBattles, FakeSlots
from green_agent.engine.config import BattleChoices
from green_agent.batch.evaluate import EvalRequest, run_eval
from kernel.errors import BrokenTaskError
from kernel.settings import Settings
from green_agent.task_check import task_problem
from kernel.world_data import WorldData

CLI = str(Path(sys.executable).parent / "appworld-green")


@pytest.fixture()
def broken_world(world_copy, mini_tasks: tuple[str, str]) -> tuple[Path, str]:
    """A private copy of the world whose first mini task has a corrupt specs.json and no databases."""
    root = world_copy(splits={"mini": mini_tasks})
    task_dir = root / "data" / "tasks" / mini_tasks[0]
    (task_dir / "specs.json").write_text('{"instruction": "trunc')
    return root, mini_tasks[0]


def test_task_problem_names_each_fault(broken_world: tuple[Path, str], mini_tasks: tuple[str, str]) -> None:
    root, task = broken_world
    world = WorldData(root)
    assert "specs.json is not valid JSON" in (task_problem(world, task) or "")
    assert task_problem(world, mini_tasks[1]) is None  # an intact task
    assert task_problem(world, "fffffff_9") is None  # no folder: unknown, not broken
    for db in (root / "data" / "tasks" / mini_tasks[1] / "dbs").glob("*.jsonl"):
        db.unlink()
    assert "dbs/ is missing" in (task_problem(world, mini_tasks[1]) or "")


def test_battle_on_a_broken_task_exits_2_naming_the_fault(tmp_path: Path, broken_world: tuple[Path, str]) -> None:
    root, task = broken_world
    env = {**os.environ, "APPWORLD_ROOT": str(root), "RUNS_DIR": str(tmp_path / "runs"), "OPENAI_API_KEY": "",
           "AGENTBEATS_MCP_LOG_PATH": str(tmp_path / "calls.jsonl")}
    done = subprocess.run([CLI, "battle", "--task-id", task, "--blue", "noop", "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"task {task}" in done.stderr and "specs.json is not valid JSON" in done.stderr
    assert "no active world" not in done.stderr and "unknown task" not in done.stderr
    assert not (tmp_path / "run").exists()  # refused before anything started


def test_eval_with_a_broken_task_is_refused_before_anything_runs(tmp_path: Path, broken_world: tuple[Path, str]) -> None:
    root, task = broken_world
    settings = Settings(appworld_root=root, runs_dir=tmp_path / "runs")
    with pytest.raises(BrokenTaskError, match=rf"task {task} .* specs.json is not valid JSON"):
        run_eval(EvalRequest(split="mini", choices=BattleChoices(blue="fake"), out=tmp_path / "run"), settings,
                 factory=FakeSlots(), battle=FakeBattles())
    assert not (tmp_path / "run").exists()
