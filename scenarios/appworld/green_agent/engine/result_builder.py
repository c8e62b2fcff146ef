"""The battle's record from the engine's state: the one place the engine's state becomes a `BattleResult`.

`build_result(state, ...)` reads what the steps produced so far (with no verdict yet, an error before the
judge ran, the record is an unjudged infra_error) and returns the record with its verdict explained
(`green_agent.models.result_assembly.explained`). Writing it is `result_assembly.write_result`'s.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from green_agent.engine.state import BattleState
from green_agent.models.result import BattleResult, CompletionRecord
from green_agent.models.result_assembly import collect_versions, explained
from green_agent.steps.judge import judge
from kernel.fault_spec import FaultSpec
from kernel.paraphrase_set import ParaphraseChoice


def build_result(state: BattleState, *, battle_id: str, blue: str, deadline_s: float, run_dir: Path,
                 appworld_python: Path | None, started: datetime, finished: bool = False,
                 interaction: str = "tools", faults: FaultSpec | None = None,
                 publish_salt: bool = False, paraphrase: ParaphraseChoice | None = None) -> BattleResult:
    """The battle's record from what its steps produced so far (`finished`: stamp `finished_at` now; with
    `publish_salt`, the finished record also publishes the fault plan's secret: the battle was the whole run).

    With no verdict yet (an error before the judge ran) the record is an unjudged infra_error."""
    verdict = state.judgement or judge(None, False, True)
    evaluation = state.metrics.evaluation if state.metrics else None
    completion = state.completion
    appworld_version = state.archive.appworld_version if state.archive else None
    return explained(BattleResult(
        battle_id=battle_id, task_id=state.ref.task_id if state.ref else None, blue=blue,
        interaction=interaction, isolation=state.isolation, faults=faults, paraphrase=paraphrase,
        fault_salt=faults.salt if faults is not None and publish_salt and finished else None,
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
        run_dir=str(run_dir), traceparent=state.traceparent, started_at=started,
        finished_at=datetime.now(timezone.utc) if finished else None,
    ))
