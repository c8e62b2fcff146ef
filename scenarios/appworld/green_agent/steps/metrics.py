"""Step 8: AppWorld's evaluation plus the trajectory metrics the Green observes itself.

`/evaluate` runs exactly once, after the archive step persisted the state (B5). The trajectory is
computed by `green_agent.trajectory.analyze_log` over this battle's call records (the run
directory's filtered copy when the archive made one, else the shared log filtered by battle id).
A trajectory failure is recorded beside the evaluation; it never hides the verdict.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import BaseModel, Field

from green_agent.appworld_client import AppWorldClient
from green_agent.models.trajectory import TrajectoryMetrics
from green_agent.trajectory import analyze_log
from green_agent.models.result import EvaluationRecord

log = logging.getLogger(__name__)


class MetricsResult(BaseModel):
    """Step 8 output (what `get_complete_task_metrics` returns)."""

    evaluation: EvaluationRecord = Field(description="AppWorld's verdict.")
    trajectory: TrajectoryMetrics | None = Field(default=None, description="Trajectory metrics, if computed.")
    trajectory_error: str | None = Field(default=None, description="Why the trajectory is missing.")
    upstream_fault: str | None = Field(default=None, description=(
        "The first APIs-server fault that reached the Blue through the gateway (the battle is then not judgeable)."))


def collect_metrics(client: AppWorldClient, task_id: str, battle_id: str, call_log: Path | None,
                    gold_apis: list[str] | None, scope_apis: list[str] | None,
                    paginated_apis: list[str] | None = None, no_log_reason: str | None = None) -> MetricsResult:
    """Step 8: evaluate the world once, then analyse this battle's calls (`no_log_reason`: why `call_log` is None)."""
    evaluation = client.evaluate(task_id)
    trajectory, error = analyze_trajectory(call_log, battle_id, task_id, gold_apis, scope_apis, paginated_apis,
                                           no_log_reason)
    faults = trajectory.upstream_faults if trajectory else 0
    fault = f"{faults} call(s) hit an APIs-server fault; first: {trajectory.first_upstream_fault}" if faults else None
    return MetricsResult(evaluation=evaluation, trajectory=trajectory, trajectory_error=error, upstream_fault=fault)


def analyze_trajectory(call_log: Path | None, battle_id: str, task_id: str, gold_apis: list[str] | None,
                       scope_apis: list[str] | None,
                       paginated_apis: list[str] | None,
                       no_log_reason: str | None = None) -> tuple[TrajectoryMetrics | None, str | None]:
    """TrajectoryMetrics of one battle, or (None, reason)."""
    if call_log is None:
        return None, no_log_reason or "no call log (battle ran without the MCP gateway)"
    try:
        metrics = analyze_log(call_log, battle_id=battle_id, task_id=task_id, gold_apis=gold_apis,
                              scope=scope_apis, paginated_apis=paginated_apis)
    except Exception as exc:  # metrics are evidence; never turn them into a verdict
        log.warning("trajectory analysis of %s failed: %s", call_log, exc)
        return None, f"trajectory analysis failed: {type(exc).__name__}: {exc}"
    return metrics, None
