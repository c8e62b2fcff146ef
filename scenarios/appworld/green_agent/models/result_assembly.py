"""Assemble `result.json` from a battle's state and write it: the one place a `BattleResult` is put together.

Beside `green_agent.models.result` (the record itself): `build_result` (the engine's state -> the
record), `trajectory_summary` (the figures a step output shows), `write_result` (atomic, secrets
scrubbed), `collect_versions`. The engine, the batch layer (infra-error and relabelled records) and
the Ray executor (a result shipped back from a node) all write through `write_result`.
"""

from __future__ import annotations

import functools
import importlib.metadata
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from green_agent import __version__
from green_agent.models.result import BattleResult, CompletionRecord, VersionsRecord
from green_agent.models.trajectory import TrajectoryMetrics
from green_agent.steps.judge import judge
from kernel.atomic import atomic_write_text
from kernel.redaction import scrub_data

if TYPE_CHECKING:
    from green_agent.engine.state import BattleState

RESULT_FILE = "result.json"


def build_result(state: BattleState, *, battle_id: str, blue: str, deadline_s: float, run_dir: Path,
                 appworld_python: Path | None, started: datetime, finished: bool = False,
                 interaction: str = "tools") -> BattleResult:
    """The battle's record from what its steps produced so far (`finished`: stamp `finished_at` now).

    With no verdict yet (an error before the judge ran) the record is an unjudged infra_error."""
    verdict = state.judgement or judge(None, False, True)
    evaluation = state.metrics.evaluation if state.metrics else None
    completion = state.completion
    appworld_version = state.archive.appworld_version if state.archive else None
    return BattleResult(
        battle_id=battle_id, task_id=state.ref.task_id if state.ref else None, blue=blue,
        interaction=interaction, isolation=state.isolation,
        instruction=state.setup.task.instruction if state.setup else None,
        blue_agent_name=state.handle.result.agent.name if state.handle else None,
        status=verdict.status, winner=verdict.winner, outcome=verdict.outcome,
        reason=state.error.message if state.error else verdict.reason,
        difficulty=evaluation.difficulty if evaluation else None,
        experiment_name=state.setup.experiment_name if state.setup else None,
        evaluation=evaluation, scope=state.scope,
        completion=CompletionRecord(deadline_s=deadline_s, **completion.model_dump(
            include={"completed", "ended_by", "detected_via", "waited_s", "blue_reply", "detection_latency_s",
                     "bridge_report"}))
        if completion else None,
        trajectory=state.metrics.trajectory if state.metrics else None,
        trajectory_error=state.metrics.trajectory_error if state.metrics else None,
        archive=state.archive, report_problems=list(state.report_problems), timings=dict(state.timings),
        error=state.error, blue_fault=completion.blue_fault if completion and not state.error else None,
        cleanup=state.cleanup if state.cleanup else None,
        versions=collect_versions(appworld_python, appworld_version),
        run_dir=str(run_dir), started_at=started,
        finished_at=datetime.now(timezone.utc) if finished else None,
    )


SUMMARY_FIGURES = {"total_calls", "successful_calls", "failed_calls", "error_rate", "avg_duration_ms", "unique_tools",
                   "retry_count", "out_of_scope_calls", "pagination_sequences", "api_recall", "api_precision", "api_f1",
                   "calls_per_tool"}


def trajectory_summary(trajectory: TrajectoryMetrics | None) -> dict[str, Any] | None:
    """The trajectory figures a step output shows (the full record is in result.json)."""
    return trajectory.model_dump(mode="json", include=SUMMARY_FIGURES) if trajectory else None


def scrubbed(result: BattleResult) -> BattleResult:
    """`result` with every secret value this process knows replaced (third-party error text included)."""
    return BattleResult.model_validate(scrub_data(result.model_dump(mode="json")))


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
