"""Two users of one machine and one checkout (or a test suite beside a user): each command keeps to its own files.

Two `appworld-green battle` commands run at once, each on its own free ports (`--slot-ports` from this worker's
port band, never a fixed slot index), from a folder outside the checkout and with the checkout's defaults
(`RUNS_DIR`, `AGENTBEATS_MCP_LOG_PATH` unset). Both are judged; each run folder holds its gateway's call log
with only its own battle's calls; nothing of either battle reaches the checkout's `runs/` or
`scenarios/appworld/logs/` (whatever else runs beside this test may write there: the check is what the files
say, not that they are untouched). `analyze` on each run folder reads that run alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernel.ports import free_port
from kernel.settings import REPO_ROOT, SCENARIO_DIR
from kernel.world_data import WorldData

pytestmark = pytest.mark.e2e
CLI = str(Path(sys.executable).parent / "appworld-green")
CHECKOUT_OUTPUTS = (REPO_ROOT / "runs", SCENARIO_DIR / "logs")
"""Where a command once wrote by default: the checkout's runs folder and the gateway's call log beside the code."""


def _files(folders: tuple[Path, ...]) -> dict[Path, tuple[int, int]]:
    return {path: (path.stat().st_size, path.stat().st_mtime_ns) for folder in folders if folder.is_dir()
            for path in folder.rglob("*") if path.is_file()}


def _env(appworld_root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RUNS_DIR", "AGENTBEATS_MCP_LOG_PATH")}
    return {**env, "APPWORLD_ROOT": str(appworld_root), "OPENAI_API_KEY": ""}


def test_two_battles_at_once_on_their_own_ports_keep_to_their_own_run_folders(appworld_root: Path,
                                                                              tmp_path: Path) -> None:
    tasks = WorldData(appworld_root).split("dev")[:2]
    before = _files(CHECKOUT_OUTPUTS)
    started = {}
    for task in tasks:
        ports = ":".join(str(free_port()) for _ in range(3))
        out = tmp_path / f"run-{task}"
        argv = [CLI, "--env-file", "/dev/null", "battle", "--task-id", task, "--blue", "reference", "--predictor",
                "ground_truth", "--slot-ports", ports, "--out", str(out), "--deadline", "120", "--json"]
        started[task] = (out, subprocess.Popen(argv, env=_env(appworld_root), cwd=tmp_path, stdout=subprocess.PIPE,
                                               stderr=subprocess.PIPE, text=True))
    results = {}
    for task, (out, process) in started.items():
        stdout, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, stdout[-2000:] + stderr[-3000:]
        results[task] = json.loads(stdout)
        assert (results[task]["task_id"], results[task]["outcome"]) == (task, "passed"), results[task]["reason"]
    ids = {task: result["battle_id"] for task, result in results.items()}
    for task, (out, _) in started.items():
        logged = [json.loads(line) for line in (out / "logs" / "mcp-calls.jsonl").read_text().splitlines()]
        assert logged and {r["battle_id"] for r in logged} == {ids[task]}  # the run's own gateway, its own calls
    touched = [path for path, stamp in _files(CHECKOUT_OUTPUTS).items() if before.get(path) != stamp]
    leaked = [str(path) for path in touched if any(i in path.read_text(errors="replace") for i in ids.values())]
    assert leaked == [], f"a battle wrote into the checkout: {leaked}"
    for task, (out, _) in started.items():
        done = subprocess.run([CLI, "--env-file", "/dev/null", "analyze", str(out)], env=_env(appworld_root),
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        metrics = json.loads(done.stdout)
        assert (metrics["battle_id"], metrics["total_calls"]) == (ids[task], results[task]["trajectory"]["total_calls"])
        assert metrics["api_recall"] == 1.0 and f"analyzing battle {ids[task]} of task {task}" in done.stderr
