"""Assemble `result.json` from a battle's state and write it: the one place a `BattleResult` is put together.

Beside `green_agent.models.result` (the record itself): `explained` (the record with its verdict explained in
plain words), `trajectory_summary` (the figures a step output shows), `write_result` (explained, atomic,
secrets scrubbed), `collect_versions`. The engine builds the record from its state
(`green_agent.engine.result_builder`); the engine, the batch layer (infra-error and relabelled records) and the
Ray executor (a result shipped back from a node) all write through `write_result`.
"""

from __future__ import annotations

import functools
import importlib.metadata
import subprocess
from pathlib import Path
from typing import Any

from green_agent import __version__
from green_agent.models.explanation import explain
from green_agent.models.result import BattleResult, ExplanationRecord, VersionsRecord
from green_agent.models.trajectory import TrajectoryMetrics
from kernel.atomic import atomic_write_text
from kernel.scrubber import scrub_data

RESULT_FILE = "result.json"


SUMMARY_FIGURES = {"total_calls", "successful_calls", "failed_calls", "error_rate", "avg_duration_ms", "unique_tools",
                   "retry_count", "out_of_scope_calls", "pagination_sequences", "api_recall", "api_precision", "api_f1",
                   "calls_per_tool"}


def trajectory_summary(trajectory: TrajectoryMetrics | None) -> dict[str, Any] | None:
    """The trajectory figures a step output shows (the full record is in result.json)."""
    return trajectory.model_dump(mode="json", include=SUMMARY_FIGURES) if trajectory else None


def scrubbed(result: BattleResult) -> BattleResult:
    """`result` with every secret value known for its battle (and this process) replaced (third-party error text
    and the agent's answer included)."""
    return BattleResult.model_validate(scrub_data(result.model_dump(mode="json"), result.battle_id))


MAX_EXPLAINED_FAILURES = 10


def explained(result: BattleResult) -> BattleResult:
    """`result` with `explanation` filled from the record itself (`explain`, never the expected answer)."""
    verdict = explain(result)
    record = ExplanationRecord(headline=verdict.headline, failed_requirements=[
        f"{f.requirement} ({f.kind})" for f in verdict.failed[:MAX_EXPLAINED_FAILURES]])
    return result.model_copy(update={"explanation": record})


def write_result(result: BattleResult, run_dir: Path) -> Path:
    """Write `<run_dir>/result.json` atomically (temp file + rename), its verdict explained."""
    return atomic_write_text(run_dir / RESULT_FILE, scrubbed(explained(result)).model_dump_json(indent=2))


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


@functools.lru_cache(maxsize=8)
def _dist_version(name: str) -> str | None:
    """An installed distribution's version (read once per process: a battle asks twice, ~1 ms each)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
