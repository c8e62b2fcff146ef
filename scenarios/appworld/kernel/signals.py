"""The one rule for signals that ask a process to stop: SIGTERM and SIGHUP are Ctrl-C.

`stop_signals_interrupt()` makes each of `TERMINATING` raise KeyboardInterrupt in the main thread, so
every `finally` runs (the battle's cleanup, result.json, stopping child processes) and the process
exits as after Ctrl-C (130). SIGHUP is what a closed terminal or a lost SSH session sends: without
this it killed `battle` at once (exit 129, no result.json, the gateway, servers and Blue orphaned).
"""

from __future__ import annotations

import signal
from types import FrameType

TERMINATING = (signal.SIGTERM, signal.SIGHUP)
"""Signals that mean "stop now, cleanly" (SIGINT already raises KeyboardInterrupt)."""


def stop_signals_interrupt() -> None:
    """Make SIGTERM and SIGHUP raise KeyboardInterrupt (main thread only; call once at start-up)."""
    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

    for sig in TERMINATING:
        signal.signal(sig, handler)
