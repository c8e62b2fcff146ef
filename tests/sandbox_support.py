"""Both sandboxes of code mode, for tests that run the same code under each (`Sandbox`, `sandboxes`).

bubblewrap runs the AppWorld virtualenv's python as it is. The landlock fallback runs it as an unprivileged
uid, so every directory on the way to the interpreter must be searchable by other users, as it is in our
image (/app, /usr/local). A machine whose base Python lives in a private home (pyenv under /root, mode 0700,
as on our developers' machines) cannot give it that: there `unprivileged_python` makes, in the test's own tmp
dir, a copy of the AppWorld virtualenv (hard links, ~0.5 s) whose base is the system's python of the same
minor version (/usr/bin/python3.X, same ABI), so the fallback runs the same packages and child. The forced
choice (`detect_isolation(..., choice)`) runs each mechanism's real probe.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcp_gateway.code.confine import unreachable_by_others
from mcp_gateway.code.sandbox import Isolation, SandboxLimits, default_python, detect_isolation, python_prefixes
from mcp_gateway.code.session import CodeSession, Relay

MECHANISMS = ("bubblewrap", "landlock")


@dataclass
class Sandbox:
    """One mechanism and the python it runs."""

    isolation: Isolation
    python: Path

    def session(self, relay: Relay, task_datetime: str = "2023-05-18T12:00:00",
                apis: dict[str, list[str]] | None = None, **limits: int) -> CodeSession:
        return CodeSession(python=self.python, isolation=self.isolation, task_datetime=task_datetime,
                           apis=apis or {"spotify": ["login"]}, relay=relay, limits=SandboxLimits(**limits))


def unprivileged_python(work: Path) -> Path:
    """The AppWorld python as an unprivileged uid can run it (module docstring)."""
    python = default_python()
    prefixes = python_prefixes(python)
    if unreachable_by_others([python, *prefixes]) is None:
        return python
    version = subprocess.run([str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    system = Path(f"/usr/bin/python{version}")
    assert system.exists(), f"no {system} to rebase the AppWorld virtualenv on (the landlock fallback's tests need it)"
    venv = work / "venv-appworld"
    if not venv.exists():
        subprocess.run(["cp", "-al", str(prefixes[0]), str(venv)], check=True)
        for name in ("pyvenv.cfg", f"bin/python{version}", "bin/python3", "bin/python"):
            (venv / name).unlink(missing_ok=True)
        (venv / "pyvenv.cfg").write_text(f"home = /usr/bin\ninclude-system-site-packages = false\n"
                                         f"version = {version}\n")
        (venv / f"bin/python{version}").symlink_to(system)
        (venv / "bin/python").symlink_to(f"python{version}")
    return venv / "bin" / "python"


def sandbox_of(mechanism: str, work: Path) -> Sandbox:
    """`mechanism`'s Sandbox, found by its real probe (a test fails, never skips, if it cannot run here)."""
    python = default_python() if mechanism == "bubblewrap" else unprivileged_python(work)
    isolation = detect_isolation(str(python), False, mechanism)  # type: ignore[arg-type]
    assert isolation.mechanism == mechanism, isolation.problem
    return Sandbox(isolation, python)


@pytest.fixture(scope="session")
def unprivileged_work() -> Iterator[Path]:
    """A tmp dir other users may pass through (pytest's own tmp dirs are 0700), removed at the end."""
    work = Path(tempfile.mkdtemp(prefix="appworld-unprivileged-"))
    work.chmod(0o755)
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)
