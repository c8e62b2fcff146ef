"""A live progress line on stderr: done/total, passes, running TGC, infra errors, running, ETA.

On a terminal the line is redrawn in place (`\\r`); otherwise (logs, CI, tests) one line is printed per
finished battle. Battles already finished before a resume count as done but not in the ETA's rate.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from green_agent.models.result import BattleResult


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


class Progress:
    """Counts battles as they finish and renders the progress line."""

    def __init__(self, total: int, stream: TextIO | None = None, clock=time.monotonic) -> None:  # noqa: ANN001
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.started = clock()
        self.done = self.passed = self.judged = self.infra = self.running = 0
        self.done_here = 0
        self._lock = threading.Lock()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def skip(self, result: BattleResult) -> None:
        """Count a battle finished by an earlier run (resume)."""
        with self._lock:
            self._count(result)

    def started_one(self) -> None:
        with self._lock:
            self.running += 1
        if self.tty:
            self.render()

    def finished(self, result: BattleResult) -> None:
        with self._lock:
            self.running = max(0, self.running - 1)
            self.done_here += 1
            self._count(result)
        self.render()

    def _count(self, result: BattleResult) -> None:
        self.done += 1
        if result.status == "infra_error":
            self.infra += 1
        else:
            self.judged += 1
            self.passed += result.outcome == "passed"

    def eta_s(self) -> float | None:
        if not self.done_here:
            return None
        rate = self.done_here / max(self.clock() - self.started, 1e-9)
        return (self.total - self.done) / rate

    def line(self) -> str:
        tgc = f"{100 * self.passed / self.judged:.1f}%" if self.judged else "-"
        width = 20
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "." * (width - filled)
        return (f"[{bar}] {self.done}/{self.total} battles | passed {self.passed} | TGC {tgc} | "
                f"infra errors {self.infra} | running {self.running} | "
                f"elapsed {format_duration(self.clock() - self.started)} | ETA {format_duration(self.eta_s())}")

    def render(self) -> None:
        text = self.line()
        if self.tty:
            self.stream.write("\r" + text + "\x1b[K")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
