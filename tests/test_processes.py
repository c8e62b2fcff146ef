"""ManagedProcess start-up under Ctrl-C: a child is never created without the parent holding its handle."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from green_agent.runtime.processes import ManagedProcess, interrupts_deferred


def test_an_interrupt_while_a_child_starts_arrives_once_its_handle_is_kept(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Stands for Ctrl-C landing inside `subprocess.Popen` after the fork (seen: `world up` interrupted
    while starting left a server nobody could stop)."""
    real_popen = subprocess.Popen

    def popen_then_interrupted(*args: object, **kwargs: object) -> subprocess.Popen:
        child = real_popen(*args, **kwargs)  # type: ignore[call-overload]
        os.kill(os.getpid(), signal.SIGINT)  # arrives before Popen returns
        return child

    monkeypatch.setattr(subprocess, "Popen", popen_then_interrupted)
    process = ManagedProcess("sleeper", [sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "sleeper.log")
    with pytest.raises(KeyboardInterrupt):
        process.start()
    try:
        assert process.popen is not None and process.is_running()  # we still hold the child: it can be stopped
    finally:
        process.stop(grace_s=2)
    assert not process.is_running()


def test_deferred_interrupts_are_delivered_in_order_and_handlers_restored() -> None:
    seen: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            assert seen == []  # held back inside the block
        assert seen == [signal.SIGTERM]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGTERM, previous)
