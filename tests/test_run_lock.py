"""The run directory's writer lock with real processes: a live holder refuses a second writer, a dead one is taken over."""

from __future__ import annotations

import fcntl
import io
import logging
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


def test_a_lock_left_by_a_killed_process_is_taken_over_with_a_plain_sentence(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    holder = hold_lock(tmp_path)
    holder.send_signal(signal.SIGKILL)  # no cleanup: the record still names the dead pid
    holder.wait(timeout=10)
    stale = read_holder(tmp_path / LOCK_FILE)
    assert stale is not None and stale.pid == holder.pid
    with caplog.at_level(logging.WARNING, logger="green_agent.batch.run_lock"), RunDirLock(tmp_path):
        assert read_holder(tmp_path / LOCK_FILE).pid == os.getpid()  # type: ignore[union-attr]
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and f"left by an earlier eval (pid {holder.pid}" in said[0] and "did not finish" in said[0]
    assert "takes the directory over" in said[0]
    assert not (tmp_path / LOCK_FILE).exists()


def test_a_clean_writer_leaves_no_lock_and_the_next_one_says_nothing(tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    with RunDirLock(tmp_path, "eval"):
        assert (tmp_path / LOCK_FILE).is_file()
    assert not (tmp_path / LOCK_FILE).exists()
    with caplog.at_level(logging.INFO, logger="green_agent.batch.run_lock"), RunDirLock(tmp_path, "report"):
        pass
    assert caplog.records == [] and not (tmp_path / LOCK_FILE).exists()


def test_a_lock_file_deleted_between_open_and_flock_is_not_taken(tmp_path: Path) -> None:
    """The race the delete-on-release opens: a second writer opened the old file, the first deleted it and a third
    locked a new one; the second must notice its file is gone from the path and lock the current one."""
    from kernel import file_lock

    path = tmp_path / LOCK_FILE
    stale_fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # opened before the holder's release ...
    path.unlink()                                              # ... which deleted it
    real_try_lock, calls = file_lock.try_lock, []

    def try_lock_old_then_real(p: Path) -> int | None:
        calls.append(p)
        if len(calls) == 1:
            fcntl.flock(stale_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return stale_fd
        return real_try_lock(p)

    import green_agent.batch.run_lock as run_lock

    original = run_lock.try_lock
    run_lock.try_lock = try_lock_old_then_real
    try:
        lock = RunDirLock(tmp_path).acquire()
        assert len(calls) == 2 and os.fstat(lock._fd).st_ino == os.stat(path).st_ino  # type: ignore[arg-type]
        lock.release()
    finally:
        run_lock.try_lock = original


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
