"""The run directory's writer lock with real processes: a live holder refuses a second writer, a dead one is taken over."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from batch_fakes import FakeBattles, FakeSlots
from green_agent.engine.config import BattleChoices
from green_agent.batch.evaluate import EvalRequest, run_eval
from green_agent.batch.run_lock import LOCK_FILE, RunDirLock, read_holder
from kernel.errors import RunDirLockedError
from kernel.settings import Settings

HOLD = textwrap.dedent("""
    import sys, time
    from green_agent.batch.run_lock import RunDirLock
    lock = RunDirLock(sys.argv[1], "eval").acquire()
    print("locked", flush=True)
    time.sleep(60)
""")


def hold_lock(out: Path) -> subprocess.Popen:
    """A second process that takes the lock and keeps it until killed."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def test_a_live_holder_refuses_a_second_writer_and_names_itself(tmp_path: Path) -> None:
    holder = hold_lock(tmp_path)
    try:
        with pytest.raises(RunDirLockedError, match=rf"pid {holder.pid} \(eval\), started at \d{{4}}-"):
            RunDirLock(tmp_path).acquire()
    finally:
        holder.kill()
        holder.wait(timeout=10)


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    holder = hold_lock(tmp_path)
    holder.send_signal(signal.SIGKILL)  # no cleanup: the record still names the dead pid
    holder.wait(timeout=10)
    stale = read_holder(tmp_path / LOCK_FILE)
    assert stale is not None and stale.pid == holder.pid
    with RunDirLock(tmp_path):
        assert read_holder(tmp_path / LOCK_FILE).pid == os.getpid()  # type: ignore[union-attr]


def test_eval_resume_into_a_directory_another_process_writes_exits_2_naming_it(
        tmp_path: Path, world_copy, mini_tasks: tuple[str, str]) -> None:
    settings = Settings(appworld_root=world_copy(splits={"mini": mini_tasks}), runs_dir=tmp_path / "runs")
    out = tmp_path / "run"
    run_eval(EvalRequest(split="mini", choices=BattleChoices(blue="fake", predictor="ground_truth"), out=out), settings,
             progress_stream=io.StringIO(), factory=FakeSlots(), battle=FakeBattles(outcomes={mini_tasks[0]: "failed"}))
    events_before = (out / "events.jsonl").read_text()
    holder = hold_lock(out)
    try:
        env = {**os.environ, "APPWORLD_ROOT": str(settings.appworld_root), "RUNS_DIR": str(tmp_path / "runs")}
        second = subprocess.run([str(Path(sys.executable).parent / "appworld-green"), "eval", "--split", "mini",
                                 "--blue", "fake", "--predictor", "ground_truth", "--out", str(out), "--resume"],
                                capture_output=True, text=True, env=env, timeout=120)
        report = subprocess.run([str(Path(sys.executable).parent / "appworld-green"), "report", str(out)],
                                capture_output=True, text=True, env=env, timeout=120)
    finally:
        holder.kill()
        holder.wait(timeout=10)
    assert second.returncode == 2, second.stderr[-2000:]
    assert f"pid {holder.pid}" in second.stderr and "started at" in second.stderr
    assert "Traceback" not in second.stderr
    assert report.returncode == 2 and f"pid {holder.pid}" in report.stderr
    assert (out / "events.jsonl").read_text() == events_before  # the refused writer touched nothing
