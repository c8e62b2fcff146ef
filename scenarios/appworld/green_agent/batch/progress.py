"""Progress of `eval` on stderr: done/total, passed, failed, infra errors, running, rate and ETA.

Contract:
- On a terminal, a live `rich` progress bar (redrawn in place) with the counts, the rate in battles per
  minute and the ETA. Anything else (a log file, CI, tests) gets plain text lines: the first finished
  battle, then at most one line every `PLAIN_EVERY_S` seconds, and a last line on `close`.
- Battles already judged before a resume count as done but not in the rate (nor the ETA).
- Thread-safe: `started_one` and `finished` may come from any thread.
- A run that is one of several of one command (`reliability`: the baseline, then the faulted run) is given its
  `Stage`: its label leads every line and names the bar, and the ETA is one over all of them: the later runs'
  battles count in what remains, the earlier runs' battles and time in the rate (so it does not restart).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import NamedTuple, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress
from rich.text import Text

from green_agent.models.result import BattleResult

PLAIN_EVERY_S = 15.0
"""Seconds between two plain progress lines (not on a terminal)."""


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


class Stage(NamedTuple):
    """One run among the runs of one command, for its progress (see the module docstring)."""

    label: str
    """Shown before every line and as the bar's name (`baseline`, `faults`)."""
    later_runs: int = 0
    """Runs of as many battles as this one still to come after it (their battles count in the ETA)."""
    earlier_battles: int = 0
    """Battles the command's earlier runs ran (counted in the rate)."""
    earlier_s: float = 0.0
    """Seconds those runs took."""


class _BarWithCounts(RichProgress):
    """A rich progress bar with the battle counts on a line of their own (fits an 80-column terminal)."""

    def get_renderables(self):  # noqa: ANN201
        yield self.make_tasks_table(self.tasks)
        for task in self.tasks:
            yield Text("  " + str(task.fields.get("counts", "")))


class Progress:
    """Counts battles as they finish and shows them (see the module docstring)."""

    def __init__(self, total: int, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic,
                 every_s: float = PLAIN_EVERY_S, stage: Stage | None = None) -> None:
        self.total, self.clock, self.every_s = total, clock, every_s
        self.stage = stage or Stage("")
        self.stream = stream if stream is not None else sys.stderr
        self.started = clock()
        self.done = self.passed = self.judged = self.infra = self.running = 0
        self.done_here = 0
        self._lock = threading.Lock()
        self._printed_at: float | None = None
        self._printed_done = 0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar: RichProgress | None = None
        self._task: TaskID | None = None

    @property
    def failed(self) -> int:
        return self.judged - self.passed

    def skip(self, result: BattleResult) -> None:
        """Count a battle finished by an earlier run (resume)."""
        with self._lock:
            self._count(result)

    def started_one(self) -> None:
        with self._lock:
            self.running += 1
        if self.tty:
            self._live_update(advance=0)

    def finished(self, result: BattleResult) -> None:
        with self._lock:
            self.running = max(0, self.running - 1)
            self.done_here += 1
            self._count(result)
        if self.tty:
            self._live_update(advance=1)
        elif self._printed_at is None or self.clock() - self._printed_at >= self.every_s:
            self._print_line()

    def _count(self, result: BattleResult) -> None:
        self.done += 1
        if result.status == "infra_error":
            self.infra += 1
        else:
            self.judged += 1
            self.passed += result.outcome == "passed"

    def _per_s(self) -> float | None:
        """Battles per second of this command so far (this run and the earlier ones), None before the first."""
        battles = self.done_here + self.stage.earlier_battles
        if not battles:
            return None
        return battles / max(self.clock() - self.started + self.stage.earlier_s, 1e-9)

    def eta_s(self) -> float | None:
        per_s = self._per_s()
        if per_s is None:
            return None
        return (self.total - self.done + self.stage.later_runs * self.total) / per_s

    def counts(self) -> str:
        tgc = f"{100 * self.passed / self.judged:.1f}%" if self.judged else "-"
        return (f"passed {self.passed} | failed {self.failed} | TGC {tgc} | infra errors {self.infra} | "
                f"running {self.running}")

    def rate(self) -> str:
        """Battles finished by this invocation per minute, the earlier runs of its command included (`?/min` before the
        first)."""
        per_s = self._per_s()
        return "?/min" if per_s is None else f"{per_s * 60:.1f}/min"

    def line(self) -> str:
        """The plain progress line (`<label>: ` first for a run of several)."""
        label = f"{self.stage.label}: " if self.stage.label else ""
        return (f"{label}{self.done}/{self.total} battles | {self.counts()} | rate {self.rate()} | "
                f"elapsed {format_duration(self.clock() - self.started)} | ETA {format_duration(self.eta_s())}")

    def _print_line(self) -> None:
        text = self.line()
        self.stream.write(text + "\n")
        self.stream.flush()
        self._printed_at, self._printed_done = self.clock(), self.done

    def _live_update(self, advance: int) -> None:
        with self._lock:
            if self._bar is None:
                self._bar = _BarWithCounts(
                    TextColumn(f"{self.stage.label} battles".strip()), BarColumn(bar_width=30), MofNCompleteColumn(),
                    TextColumn("{task.fields[rate]}"),
                    TimeElapsedColumn(), TextColumn("ETA {task.fields[eta]}"),
                    console=Console(file=self.stream), refresh_per_second=4)
                # battles judged before a resume start the bar without entering rich's speed samples
                self._task = self._bar.add_task("eval", total=self.total, completed=self.done - advance,
                                                **self._fields())
                self._bar.start()
            self._bar.update(self._task, advance=advance, **self._fields())

    def _fields(self) -> dict[str, str]:
        return {"counts": self.counts(), "rate": self.rate(), "eta": format_duration(self.eta_s())}

    def close(self) -> None:
        """Stop the live bar, or print the last plain line (unless it was just printed)."""
        if self._bar is not None:
            self._bar.update(self._task, **self._fields())
            self._bar.stop()
        elif not self.tty and self.done_here and self.done != self._printed_done:
            self._print_line()
