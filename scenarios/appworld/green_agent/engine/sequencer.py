"""The deterministic plan runner: one battle, the 11 steps in order, over pre-built objects.

No configuration is parsed here (the builder in `green_agent.local_battle` does that). Each step's wall
time is recorded under its name in `timings`. Any exception in steps 1-8 except bad input becomes
`status: infra_error` with the failing step named (Blue is never charged for it); bad input
(`BadInputError`: malformed or unknown task id) is raised to the caller after cleanup, with no result.
Cleanup (step 11) runs in a `finally` on every path, including Ctrl-C; `result.json` is written
last, so it records the cleanup too.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import requests
from pydantic import BaseModel, Field

from green_agent.appworld_client import DEFAULT_MAX_INTERACTIONS, AppWorldClient
from green_agent.steps.archive import ArchiveResult, archive
from green_agent.steps.wait import AUTHORITY_EVERY_S, FALLBACK_POLL_S, REPLY_GRACE_S, CompletionResult, wait_for_completion
from green_agent.diagnose import explain
from green_agent.steps.dispatch import DispatchHandle, dispatch
from kernel.errors import BadInputError
from green_agent.gateway_client import GatewayClient
from green_agent.steps.judge import Judgement, judge
from green_agent.steps.metrics import MetricsResult, collect_metrics
from green_agent.models.result import (BattleResult, CleanupRecord, CompletionRecord, ErrorRecord, EvaluationRecord,
                                       ScopePolicy, ScopeRecord)
from kernel.settings import Settings
from green_agent.steps.cleanup import cleanup
from green_agent.steps.report import Reporter, collect_versions, report, write_result
from green_agent.steps.scope import account_calls, apply_scope, choose_scope
from green_agent.steps.setup import SetupResult, experiment_name_for, setup_task
from green_agent.task_check import task_problem
from kernel.task_ids import TaskRef, resolve_task
from green_agent.steps.task_message import TaskMessage, build_task_message
from kernel.world_data import WorldData

log = logging.getLogger(__name__)

STEPS = ("task_id", "setup", "scope", "task_message", "dispatch", "wait", "archive", "metrics", "judge", "report",
         "cleanup")


class BattleConfig(BaseModel):
    """What one battle is (already resolved values; no lookups)."""

    battle_id: str = Field(description="Unique battle id.")
    task_config: str = Field(description="'Task description: <id>', a bare id, or a 1-based index into `split`.")
    blue: str = Field(description="Label of the Blue under test (reference | noop | llm | URL).")
    blue_url: str = Field(description="Blue's A2A URL.")
    predictor: str = Field(default="auto", description="Scope predictor (`all`/`none`: no scoping).")
    scope_policy: ScopePolicy = Field(default="advise", description="advise | enforce (see mcp_gateway.scope).")
    deadline_s: float = Field(gt=0, description="How long Blue may work.")
    run_dir: Path = Field(description="Where result.json and the evidence go.")
    split: str = Field(default="dev", description="Split a bare index refers to.")
    max_interactions: int = Field(default=DEFAULT_MAX_INTERACTIONS, description="/execute cap per world.")
    reply_grace_s: float = Field(default=REPLY_GRACE_S, description="Wait after Blue's reply for its complete_task.")
    authority_every_s: float = Field(default=AUTHORITY_EVERY_S, description="/task_completed period with a gateway.")
    fallback_poll_s: float = Field(default=FALLBACK_POLL_S, description="/task_completed period without one.")
    launch_url_allowed: bool = Field(default=False, description=(
        "The Blue calls through the gateway's plain launch URL (an SDK agent's --mcp), not only the battle's token URL."))


@dataclass
class BattleDeps:
    """The live objects a battle runs on (built by `green_agent.local_battle`)."""

    client: AppWorldClient
    apis_url: str
    settings: Settings
    world: WorldData | None
    appworld_root: Path
    gateway: GatewayClient | None = None
    call_log_path: Path | None = None
    blue_session: requests.Session | None = None
    reporters: list[Reporter] = field(default_factory=list)


@dataclass
class BattleState:
    """What the steps of one battle have produced so far (shared with the AgentBeats session)."""

    step: str = "task_id"
    timings: dict[str, float] = field(default_factory=dict)
    ref: TaskRef | None = None
    setup: SetupResult | None = None
    initialize_attempted: bool = False
    gateway_set: bool = False
    mcp_base_url: str | None = None
    """The Blue's MCP base URL for this battle (the gateway's token URL), once the gateway knows the battle."""
    scope: ScopeRecord | None = None
    message: TaskMessage | None = None
    handle: DispatchHandle | None = None
    completion: CompletionResult | None = None
    archive: ArchiveResult | None = None
    metrics: MetricsResult | None = None
    judgement: Judgement | None = None
    error: ErrorRecord | None = None
    cleanup: CleanupRecord | None = None
    report_problems: list[str] = field(default_factory=list)


def run_battle(config: BattleConfig, deps: BattleDeps) -> BattleResult:
    """Run one battle end to end and write `<run_dir>/result.json`. Raises BadInputError only."""
    started = datetime.now(timezone.utc)
    state = BattleState()
    interrupted = False
    try:
        _run_steps(config, deps, state)
        with timed_step(state, "judge"):
            state.judgement = judge(state.metrics.evaluation if state.metrics else None,
                                    bool(state.completion and state.completion.completed), state.error is not None,
                                    state.metrics.upstream_fault if state.metrics else None,
                                    state.scope.refused_gold if state.scope else None)
        with timed_step(state, "report"):
            state.report_problems += report(build_result(config, deps, state, started), deps.reporters)
    except KeyboardInterrupt:  # Ctrl-C / SIGTERM: clean up, record why the battle has no verdict, re-raise
        interrupted = True
        state.judgement = None
        state.error = ErrorRecord(type="Interrupted", step=state.step, message=(
            f"the run was interrupted (Ctrl-C or SIGTERM) during step {state.step}; the battle is not scored"))
    finally:
        with timed_step(state, "cleanup"):
            state.cleanup = cleanup(deps.client, state.ref.task_id if state.ref else None, state.setup is not None,
                                    state.initialize_attempted, deps.gateway, state.gateway_set)
            if state.cleanup.errors:
                state.cleanup.errors = [explain(e, _services(deps)) for e in state.cleanup.errors]
    result = build_result(config, deps, state, started, finished=True)
    write_result(result, config.run_dir)
    if interrupted:
        raise KeyboardInterrupt
    return result


def _run_steps(config: BattleConfig, deps: BattleDeps, state: BattleState) -> None:
    """Steps 1-8. Infrastructure failures are recorded on `state`; bad input and Ctrl-C propagate."""
    try:
        _steps_1_to_8(config, deps, state)
    except BadInputError:
        raise
    except Exception as exc:
        message = explain(str(exc), _services(deps))  # the symptom's service may not be the dead one
        broken = task_problem(deps.world, state.ref.task_id) if deps.world and state.ref else None
        if broken:  # AppWorld's answer to a damaged task folder hides the cause; name it first
            message = f"{broken} ({message})"
        log.error("battle %s: step %s failed: %s", config.battle_id, state.step, message,
                  exc_info=not hasattr(exc, "exit_code"))
        state.error = ErrorRecord(type=type(exc).__name__, message=message[:2000], step=state.step)


def _services(deps: BattleDeps) -> dict[str, str | None]:
    return {"AppWorld env server": deps.client.base_url, "AppWorld APIs server": deps.apis_url,
            "MCP gateway": deps.gateway.base_url if deps.gateway else None}


def _steps_1_to_8(config: BattleConfig, deps: BattleDeps, state: BattleState) -> None:
    client = deps.client
    with timed_step(state, "task_id"):
        state.ref = resolve_task(config.task_config, deps.world, config.split, lookup=client)
    task_id = state.ref.task_id
    with timed_step(state, "setup"):
        state.initialize_attempted = True
        state.setup = setup_task(client, task_id, experiment_name_for(config.battle_id, task_id), deps.apis_url,
                                 config.max_interactions)
    with timed_step(state, "scope"):
        state.scope = choose_scope(task_id, state.setup.task.instruction, config.predictor, deps.settings, deps.world,
                                   config.scope_policy)
        state.mcp_base_url = apply_scope(deps.gateway, config.battle_id, task_id, state.scope,
                                         config.launch_url_allowed)
        state.gateway_set = state.mcp_base_url is not None
    with timed_step(state, "task_message"):
        state.message = build_task_message(state.setup.task, state.scope.apis, state.mcp_base_url, state.scope.policy)
    with timed_step(state, "dispatch"):
        state.handle = dispatch(config.blue_url, state.message.text, session=deps.blue_session,
                                context_id=config.battle_id)
    with timed_step(state, "wait"):
        state.completion = wait_for_completion(
            client, task_id, config.battle_id, config.deadline_s, deps.gateway, state.handle,
            authority_every_s=config.authority_every_s, fallback_poll_s=config.fallback_poll_s,
            reply_grace_s=config.reply_grace_s)
    with timed_step(state, "archive"):
        state.archive = archive(client, task_id, state.setup.experiment_name, deps.appworld_root, config.run_dir,
                                deps.call_log_path if deps.gateway else None, config.battle_id)
    if state.archive.call_log_problem:
        state.report_problems.append(state.archive.call_log_problem)
    with timed_step(state, "metrics"):
        call_log = Path(state.archive.call_log) if state.archive.call_log else None
        state.metrics = collect_metrics(client, task_id, config.battle_id, call_log, state.scope.gold_apis,
                                        state.scope.apis, paginated_apis(deps.world), state.archive.call_log_problem)
        state.scope = account_calls(state.scope, state.metrics.trajectory)


@contextmanager
def timed_step(state: BattleState, name: str) -> Iterator[None]:
    state.step = name
    started = time.perf_counter()
    try:
        yield
    finally:
        state.timings[name] = round(time.perf_counter() - started, 4)


def paginated_apis(world: WorldData | None) -> list[str] | None:
    if world is None:
        return None
    try:
        return world.paginated_apis()
    except Exception:
        return None


def build_result(config: BattleConfig, deps: BattleDeps, state: BattleState, started: datetime,
            finished: bool = False) -> BattleResult:
    verdict = state.judgement or judge(None, False, True)
    evaluation = state.metrics.evaluation if state.metrics else None
    completion = state.completion
    appworld_version = state.archive.appworld_version if state.archive else None
    archive_info = state.archive.model_dump(mode="json") if state.archive else None
    return BattleResult(
        battle_id=config.battle_id, task_id=state.ref.task_id if state.ref else None, blue=config.blue,
        blue_agent_name=state.handle.result.agent.name if state.handle else None,
        status=verdict.status, winner=verdict.winner, outcome=verdict.outcome,
        reason=state.error.message if state.error else verdict.reason,
        difficulty=evaluation.difficulty if evaluation else None,
        experiment_name=state.setup.experiment_name if state.setup else None,
        evaluation=EvaluationRecord.model_validate(evaluation.model_dump()) if evaluation else None,
        scope=state.scope,
        completion=CompletionRecord(deadline_s=config.deadline_s, **completion.model_dump(
            include={"completed", "ended_by", "detected_via", "waited_s", "blue_reply", "detection_latency_s"})) if completion else None,
        trajectory=state.metrics.trajectory if state.metrics else None,
        trajectory_error=state.metrics.trajectory_error if state.metrics else None,
        archive=archive_info, report_problems=list(state.report_problems), timings=dict(state.timings),
        error=state.error, cleanup=state.cleanup,
        versions=collect_versions(deps.settings.appworld_python, appworld_version),
        run_dir=str(config.run_dir), started_at=started,
        finished_at=datetime.now(timezone.utc) if finished else None,
    )
