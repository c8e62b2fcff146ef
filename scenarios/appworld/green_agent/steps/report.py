"""Step 11: hand the result to reporters, and write `result.json` atomically.

`Reporter` is the seam for the AgentBeats backend reporter (added by the AgentBeats integration);
the local file is always written by the battle engine, whatever the reporters do.
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
import subprocess
from pathlib import Path
from typing import Protocol

from kernel.atomic import atomic_write_text
from green_agent import __version__
from green_agent.models.result import BattleResult, VersionsRecord
from kernel.redaction import scrub_data

log = logging.getLogger(__name__)

RESULT_FILE = "result.json"


class Reporter(Protocol):
    """Something that publishes a battle result (e.g. the AgentBeats backend)."""

    def report(self, result: BattleResult) -> None:
        """Publish `result`; raise on failure (the runner records it and carries on)."""


def scrubbed(result: BattleResult) -> BattleResult:
    """`result` with every secret value this process knows replaced (third-party error text included)."""
    return BattleResult.model_validate(scrub_data(result.model_dump(mode="json")))


def report(result: BattleResult, reporters: list[Reporter]) -> list[str]:
    """Step 11: call every reporter; return the problems (a failed reporter never loses the local file)."""
    result = scrubbed(result)
    problems = []
    for reporter in reporters:
        try:
            reporter.report(result)
        except Exception as exc:
            log.warning("reporter %s failed: %s", type(reporter).__name__, exc)
            problems.append(f"{type(reporter).__name__}: {exc}")
    return problems


def write_result(result: BattleResult, run_dir: Path) -> Path:
    """Write `<run_dir>/result.json` atomically (temp file + rename)."""
    return atomic_write_text(run_dir / RESULT_FILE, scrubbed(result).model_dump_json(indent=2))


def collect_versions(appworld_python: Path | None, appworld_version: str | None = None) -> VersionsRecord:
    """Versions of this project, agentbeats, and AppWorld (from the outputs if known, else its venv)."""
    return VersionsRecord(appworld_green=__version__, agentbeats=_dist_version("agentbeats"),
                          appworld=appworld_version or (appworld_venv_version(str(appworld_python))
                                                        if appworld_python else None))


@functools.lru_cache(maxsize=4)
def appworld_venv_version(appworld_python: str) -> str | None:
    """`appworld` version installed in the AppWorld venv (one subprocess per process, cached)."""
    if not Path(appworld_python).exists():
        return None
    code = "import importlib.metadata as m; print(m.version('appworld'))"
    try:
        out = subprocess.run([appworld_python, "-c", code], capture_output=True, text=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
