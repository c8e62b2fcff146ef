"""CPU priority of spare sandboxes: idle while they import, normal once a battle claims them.

A spare REPL spends about 1.5 CPU-seconds importing IPython and AppWorld's helpers. Spawned while a battle
runs, it would take that CPU from the battle (2 cores on a typical machine), so it starts under `SCHED_IDLE`
(it runs only when a core would otherwise be idle) and is put back to `SCHED_OTHER`, every thread of every
process of its sandbox, when a battle claims it. Raising a task back from `SCHED_IDLE` needs `CAP_SYS_NICE`
(root, as the gateway runs in our image and in tests); where we lack it the spare starts at normal priority,
since a battle's REPL left at idle priority could starve under load and time out through no fault of the
agent's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def can_restore() -> bool:
    """True if we may put an idle task back to normal priority (root; `CAP_SYS_NICE` is not probed)."""
    return os.geteuid() == 0 and hasattr(os, "SCHED_IDLE")


def idle_then(inner: Callable[[], None]) -> Callable[[], None]:
    """A preexec function: `inner()`, then this process (and what it forks and execs) at `SCHED_IDLE`."""

    def apply() -> None:
        inner()
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))

    return apply


def restore(root_pid: int) -> int:
    """Put every thread of `root_pid` and its descendants back to `SCHED_OTHER`; returns how many.

    Raises OSError if one could not be (the caller discards the spare rather than run a battle at idle)."""
    restored = 0
    for pid in _process_tree(root_pid):
        for task in _threads(pid):
            try:
                os.sched_setscheduler(task, os.SCHED_OTHER, os.sched_param(0))
                restored += 1
            except ProcessLookupError:
                continue  # a thread that ended meanwhile
    return restored


def _process_tree(root_pid: int) -> list[int]:
    pids, pending = [], [root_pid]
    while pending:
        pid = pending.pop()
        pids.append(pid)
        for task in _threads(pid):
            try:
                pending += [int(p) for p in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
            except OSError:
                continue
    return pids


def _threads(pid: int) -> list[int]:
    try:
        return [int(name) for name in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []
