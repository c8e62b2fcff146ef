"""`eval` progress: a live rich bar on a terminal, plain periodic lines elsewhere, the counts in both."""

from __future__ import annotations

import io
import re
from pathlib import Path

from batch_fakes import make_result
from green_agent.batch.progress import Progress


class Clock:
    """A hand-moved monotonic clock."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    """A text stream that says it is a terminal (what rich checks to draw a live bar)."""

    def isatty(self) -> bool:
        return True


def test_plain_lines_are_periodic_and_keep_the_counts(tmp_path: Path) -> None:
    clock, out = Clock(), io.StringIO()
    progress = Progress(6, stream=out, clock=clock, every_s=15.0)
    progress.skip(make_result("a_1", "b0", "passed", tmp_path))  # judged by an earlier run
    for i, outcome in enumerate(["passed", "failed", "infra_error", "passed"]):
        progress.started_one()
        clock.now += 2.0
        progress.finished(make_result(f"t{i}_1", f"b{i}", outcome, tmp_path))
    assert len(out.getvalue().splitlines()) == 1  # the first finish, then nothing within 15 s
    clock.now += 20.0
    progress.finished(make_result("t9_1", "b9", "passed", tmp_path))
    progress.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and "\r" not in out.getvalue() and "\x1b" not in out.getvalue()
    assert lines[-1].startswith("6/6 battles | passed 4 | failed 1 | TGC 80.0% | infra errors 1")
    assert "rate 10.7/min" in lines[-1] and "ETA 0s" in lines[-1]  # 5 battles here in 28 s; the skipped one not


def test_a_terminal_gets_a_live_rich_bar_with_rate_and_eta(tmp_path: Path) -> None:
    out = Terminal()
    progress = Progress(4, stream=out)
    progress.skip(make_result("a_1", "b0", "passed", tmp_path))
    for i, outcome in enumerate(["passed", "failed"]):
        progress.started_one()
        progress.finished(make_result(f"t{i}_1", f"b{i}", outcome, tmp_path))
    progress.close()
    text = out.getvalue()
    assert "\x1b[" in text and "━" in text  # drawn by rich, in place
    bar, counts = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).strip().splitlines()[-2:]
    assert "3/4" in bar and re.search(r"[0-9.]+/min", bar) and "ETA" in bar and "ETA ?" not in bar
    assert counts.strip() == "passed 2 | failed 1 | TGC 66.7% | infra errors 0 | running 0"


def test_the_runs_of_one_command_are_labelled_and_share_one_eta(tmp_path: Path) -> None:
    """`reliability`: the baseline's ETA counts the faulted run's battles; the faulted run's starts from the
    baseline's rate instead of starting over (it once showed `ETA ?`, then a fresh guess, on an unlabelled line)."""
    from green_agent.batch.progress import Stage

    clock, out = Clock(), io.StringIO()
    baseline = Progress(3, stream=out, clock=clock, stage=Stage("baseline", later_runs=1))
    for i in range(3):
        baseline.started_one()
        clock.now += 10.0
        baseline.finished(make_result(f"t{i}_1", f"b{i}", "passed", tmp_path))
        if i == 0:
            assert baseline.eta_s() == 50.0  # 2 of this run and 3 of the next, at 10 s each
    baseline.close()
    faults = Progress(3, stream=out, clock=clock, stage=Stage("faults", earlier_battles=3, earlier_s=30.0))
    assert faults.eta_s() == 30.0 and faults.rate() == "6.0/min"  # before its first battle, from the baseline's
    faults.started_one()
    clock.now += 20.0  # a slower battle: the rate is over both runs
    faults.finished(make_result("t0_1", "f0", "failed", tmp_path))
    faults.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("baseline: 1/3 battles | passed 1") and lines[-2].startswith("baseline: 3/3 battles")
    assert lines[-1].startswith("faults: 1/3 battles | passed 0 | failed 1") and "ETA 25s" in lines[-1]
    terminal = Terminal()
    bar = Progress(2, stream=terminal, stage=Stage("faults"))
    bar.started_one()
    bar.finished(make_result("t0_1", "f0", "passed", tmp_path))
    bar.close()
    assert "faults battles" in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal.getvalue())
