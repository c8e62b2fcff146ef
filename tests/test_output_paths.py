"""Unwritable or invalid output paths: the CLI exits 2 before anything starts, naming the path and the problem.

The CLI runs as a real subprocess on the built world; no server may be started (the checks come first),
so each case also asserts that no run directory content and no slot logs appeared.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernel.errors import OutputPathError
from kernel.ports import free_port
from green_agent.output_paths import check_output_dir, check_output_file
from kernel.world_data import WorldData

CLI = str(Path(sys.executable).parent / "appworld-green")


def cli(args: list[str], root: Path, tmp: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "APPWORLD_ROOT": str(root), "RUNS_DIR": str(tmp / "runs"), "OPENAI_API_KEY": "",
               "AGENTBEATS_MCP_LOG_PATH": str(tmp / "calls.jsonl"), **env}
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=environ, timeout=120)


def assert_refused(done: subprocess.CompletedProcess, path: Path, problem: str) -> None:
    assert done.returncode == 2, done.stderr[-2000:]
    assert str(path) in done.stderr and problem in done.stderr
    assert "Traceback" not in done.stderr


def test_battle_out_under_a_file_exits_2_naming_the_blocking_file(tmp_path: Path, appworld_root: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    task = WorldData(appworld_root).split("dev")[0]
    done = cli(["battle", "--task-id", task, "--blue", "noop", "--out", str(blocker / "run")], appworld_root, tmp_path)
    assert_refused(done, blocker / "run", f"{blocker} is a file")
    assert not (tmp_path / "runs").exists()


def test_battle_with_a_call_log_that_is_a_directory_exits_2(tmp_path: Path, appworld_root: Path) -> None:
    """Attached to a running gateway, the battle reads the call log the setting names (a slot it starts logs into
    its run folder instead): a directory there is refused before anything is reached."""
    log_dir = tmp_path / "calls-dir"
    log_dir.mkdir()
    task = WorldData(appworld_root).split("dev")[0]
    nowhere = f"http://127.0.0.1:{free_port()}"
    done = cli(["battle", "--task-id", task, "--blue", "noop", "--out", str(tmp_path / "run"), "--env-url", nowhere,
                "--apis-url", nowhere, "--gateway-url", nowhere], appworld_root, tmp_path,
               AGENTBEATS_MCP_LOG_PATH=str(log_dir))
    assert_refused(done, log_dir, "not a regular file")
    assert not (tmp_path / "run" / "result.json").exists() and not list((tmp_path / "run" / "logs").iterdir())


def test_eval_out_that_is_a_file_exits_2(tmp_path: Path, appworld_root: Path) -> None:
    target = tmp_path / "results.txt"
    target.write_text("not a directory")
    task = WorldData(appworld_root).split("dev")[0]
    done = cli(["eval", "--task-ids", task, "--blue", "noop", "--out", str(target)], appworld_root, tmp_path)
    assert_refused(done, target, "not a directory")
    assert target.read_text() == "not a directory"


def test_checks_accept_usable_paths_and_create_only_directories(tmp_path: Path) -> None:
    assert check_output_dir(tmp_path / "new" / "run").is_dir()
    log = check_output_file(tmp_path / "logs" / "calls.jsonl", "the call log")
    assert log.parent.is_dir() and not log.exists()
    log.write_text("")
    with pytest.raises(OutputPathError, match="is a file, not a directory"):
        check_output_file(log / "x" / "deeper.jsonl", "the call log")
