"""The builder of a split evaluation: request -> task set, manifest, slots, runner; outputs at the end.

`run_eval` is the Python API `appworld-green eval` calls (and tests use): it resolves the task set
from the world (refusing damaged task folders), checks that `out` is a writable directory, takes its
writer lock (`green_agent.batch.run_lock`; a second writer gets `RunDirLockedError`), writes or
checks the run manifest (`--resume`; a reliability run's secret is drawn, kept and, once the run is over,
published by `green_agent.batch.fault_secret`), skips judged battles, runs the rest on a pool of world slots,
and always (also after Ctrl-C) writes `results.json`, `agentbeats_results.json` and `report.html`
from the files on disk.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from pydantic import BaseModel, Field

from green_agent.batch.checkpoint import BattleKey, battle_keys, digest, fingerprint, finished, prepare_run, record_nodes
from green_agent.batch.executor import open_executor
from green_agent.batch.fault_secret import publish, salted_manifest
from green_agent.batch.executor_plan import ExecutorKind, ExecutorPlan
from green_agent.batch.live import battle_fn
from green_agent.batch.progress import Progress, Stage
from green_agent.batch.provenance import run_provenance
from green_agent.batch.standard import DEFAULT_INFRA_RETRIES
from green_agent.batch.rows import write_outputs
from green_agent.batch.run_lock import RunDirLock
from green_agent.trace.otel import hook as otel_hook
from green_agent.batch.runner import BatchOutcome, BatchRunner, BattleFn, SlotFactory
from green_agent.batch.taskinfo import load_task_info, save_task_info, task_info
from green_agent.batch.world_digest import task_digests
from kernel.errors import BadInputError
from green_agent.models.eval_run import EvalResults, RunConfig, RunManifest
from green_agent.models.result import BattleResult
from green_agent.engine.config import BattleChoices, resolve_choices, run_paraphrases
from green_agent.runtime.code_sandbox import check_code_sandbox
from green_agent.output_paths import check_output_dir
from green_agent.runfolder.limits import MAX_TRIALS
from kernel.settings import Settings
from green_agent.runtime.slot import SlotSpec
from green_agent.models.result_assembly import collect_versions
from green_agent.stats.intervals import IntervalOptions
from green_agent.task_check import require_intact
from kernel.task_ids import validate_task_id
from kernel.world_data import WorldData

log = logging.getLogger(__name__)

DEFAULT_WORKERS = 1


class EvalRequest(BaseModel):
    """What `appworld-green eval` was asked."""

    split: str | None = Field(default=None, description="Split to evaluate (or task_ids).")
    task_ids: list[str] | None = Field(default=None, description="Explicit task ids (or split).")
    choices: BattleChoices = Field(description="Blue, predictor, policy, deadline of every battle (None: Settings).")
    workers: int = Field(default=DEFAULT_WORKERS, ge=1, description="World slots in parallel.")
    trials: int = Field(default=1, ge=1, le=MAX_TRIALS, description="Battles per task.")
    out: Path = Field(description="Run directory.")
    resume: bool = Field(default=False, description="Continue the run in `out`.")
    max_infra_retries: int = Field(default=DEFAULT_INFRA_RETRIES, ge=0, le=10, description="Infra retries per battle.")
    first_slot: int = Field(default=0, ge=0, description="Lowest slot index to use.")
    slot_specs: list[SlotSpec] | None = Field(default=None, description="Explicit slot ports (one per worker).")
    executor: ExecutorKind = Field(default="local", description="Where battles run: local pool or Ray slot actors.")
    ray_address: str | None = Field(default=None, description="Ray cluster to join (ray executor; None: start one).")
    confidence_level: float | None = Field(default=None, ge=0.5, lt=1, description=(
        "Level of the outputs' intervals; default Settings.confidence_level."))
    shard_of: tuple[str | None, int, int] | None = Field(default=None, description=(
        "(split, shard index, shards): the task ids are this shard of the split's whole task list, or of a task list "
        "when split is None (an assessment); None: the task set is `split`'s whole list, or a task list."))
    driver_custom: list[str] = Field(default_factory=list, description=(
        "What the driver changed from a standard run that the run's config does not hold (`batch.standard`)."))
    publish_salt: bool = Field(default=True, description=(
        "Publish the fault plan's secret when the run is over; False: a driver that shares one secret over several "
        "runs (a reliability profile's fault sweep) publishes it itself once every run is over "
        "(`green_agent.batch.fault_secret.publish_all`)."))


class EvalOutcome(BaseModel):
    """What `run_eval` returns."""

    results: EvalResults = Field(description="What results.json now holds.")
    interrupted: bool = Field(description="The run was stopped (Ctrl-C/SIGTERM) before the end.")
    ran: int = Field(description="Battles run (judged or not) by this invocation.")
    skipped: int = Field(description="Battles already judged by an earlier invocation.")


def resolve_task_set(request: EvalRequest, world: WorldData) -> list[str]:
    """The ordered, de-duplicated task ids; every one validated and present in the world."""
    if bool(request.split) == bool(request.task_ids):
        raise BadInputError("give exactly one of --split NAME or --task-ids A,B,...")
    ids = world.split(request.split) if request.split else list(request.task_ids or [])
    ordered = list(dict.fromkeys(validate_task_id(t.strip()) for t in ids if t.strip()))
    require_intact(world, ordered)  # a folder that exists but is damaged: name the fault, not "unknown"
    missing = [t for t in ordered if not world.has_task(t)]
    if missing:
        raise BadInputError(f"unknown task id(s) {', '.join(missing[:5])}: the world at {world.root} lacks them")
    if not ordered:
        raise BadInputError("the task set is empty")
    return ordered


def new_run_id() -> str:
    return f"eval-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


def build_manifest(request: EvalRequest, settings: Settings, task_ids: list[str],
                   paraphrase_digest: str | None = None) -> RunManifest:
    """The run's manifest (`paraphrase_digest`: the paraphrase set's SHA-256, in a paraphrase arm)."""
    choices = resolve_choices(request.choices, settings)  # recorded as run: what the fingerprint covers
    config = RunConfig(blue=choices.blue, predictor=choices.predictor, scope_policy=choices.scope_policy,
                       interaction=choices.interaction or "tools",
                       split=request.split, trials=request.trials, deadline_s=choices.deadline_s,
                       workers=request.workers, max_infra_retries=request.max_infra_retries,
                       executor=request.executor, faults=choices.faults.salted() if choices.faults else None,
                       paraphrase=choices.paraphrase,
                       paraphrase_set_digest=paraphrase_digest if choices.paraphrase else None)
    isolation = check_code_sandbox(choices.interaction, settings)
    split, shard = (request.shard_of[0], request.shard_of[1:]) if request.shard_of else (request.split, None)
    return RunManifest(run_id=new_run_id(), fingerprint=fingerprint(config, task_ids), task_set_digest=digest(task_ids),
                       config=config, task_ids=task_ids, appworld_root=str(settings.appworld_root),
                       task_digests=task_digests(settings.appworld_root, task_ids),
                       versions=collect_versions(settings.appworld_python).model_dump(),
                       isolation=isolation, created_at=datetime.now(timezone.utc),
                       provenance=run_provenance(settings, config.interaction, isolation, split, len(task_ids), shard,
                                                 request.driver_custom, config.paraphrase_set_digest))


def check_wordings(request: EvalRequest, world: WorldData) -> tuple[list[str], str | None]:
    """The request's task ids and its paraphrase set's digest (None: the original wording), once every task has a
    usable paraphrase at the run's strength; BadInputError naming the tasks otherwise, before anything starts."""
    task_ids = resolve_task_set(request, world)
    paraphrases = run_paraphrases(request.choices.paraphrase, world)
    if paraphrases is not None:
        paraphrases.check_tasks(task_ids)
    return task_ids, paraphrases.digest if paraphrases else None


def run_eval(request: EvalRequest, settings: Settings, *, progress_stream: TextIO | None = None,
             factory: SlotFactory | None = None, battle: BattleFn | None = None,
             on_result: Callable[[BattleResult], None] | None = None, stage: Stage | None = None) -> EvalOutcome:
    """Evaluate the task set (see the module docstring). Raises BadInputError / InfrastructureError.

    `factory` replaces the real slots (tests only); `battle` replaces how one battle is built on a live
    slot (tests, and the A2A assessment driver, whose battles play through its in-band bridge);
    `on_result` is told of each battle's final result, from the calling thread; `stage`: this run's place among the
    runs of one command, for its progress (`green_agent.batch.progress.Stage`).
    """
    world = WorldData(settings.appworld_root).require()
    task_ids, paraphrase_digest = check_wordings(request, world)
    out = check_output_dir(Path(request.out))
    check_output_dir(out / "logs", "--out (its logs folder)")
    with RunDirLock(out, "eval"):
        return _run_locked(request, settings, world, task_ids, out, progress_stream, factory, battle, on_result,
                           stage, paraphrase_digest)


def _run_locked(request: EvalRequest, settings: Settings, world: WorldData, task_ids: list[str], out: Path,
                progress_stream: TextIO | None, factory: SlotFactory | None, battle: BattleFn | None,
                on_result: Callable[[BattleResult], None] | None = None, stage: Stage | None = None,
                paraphrase_digest: str | None = None) -> EvalOutcome:
    """`run_eval` once the run directory is checked and locked by this process."""
    built = build_manifest(request, settings, task_ids, paraphrase_digest)
    manifest = prepare_run(out, built, request.resume)
    manifest = salted_manifest(out, manifest, manifest.run_id == built.run_id, request.choices.faults)
    for task_id in task_ids:
        if load_task_info(out, task_id) is None:
            save_task_info(out, task_info(world, task_id))
    keys = battle_keys(task_ids, manifest.config.trials)
    done = finished(out, keys, manifest.config.trials)
    pending = [k for k in keys if k not in done]
    progress = Progress(len(keys), stream=progress_stream, stage=stage)
    for result in done.values():
        progress.skip(result)
    log.info("run %s: %d battle(s), %d already judged, %d to run on %d worker(s)", manifest.run_id, len(keys),
             len(done), len(pending), min(request.workers, len(pending)))
    interrupted, ran = False, 0
    try:
        if pending:
            workers = min(request.workers, len(pending), len(request.slot_specs or pending))
            outcome = _run_pending(request, settings, manifest, out, pending, workers, progress, factory, battle,
                                   on_result)
            interrupted, ran = outcome.interrupted, len(outcome.results)
        if not interrupted and request.publish_salt:
            publish(out, manifest)  # the run is over: its fault plan's secret is no longer one
    finally:
        progress.close()
        otel_hook.flush()  # the live export's queued battles, bounded: their fate goes into results.json
        results = write_outputs(out, IntervalOptions(level=request.confidence_level or settings.confidence_level))
    return EvalOutcome(results=results, interrupted=interrupted, ran=ran, skipped=len(done))


def _tell(progress: Progress, on_result: Callable[[BattleResult], None] | None, result: BattleResult) -> None:
    progress.finished(result)
    if on_result is not None:
        on_result(result)


def _run_pending(request: EvalRequest, settings: Settings, manifest: RunManifest, out: Path, pending: list[BattleKey],
                 workers: int, progress: Progress, factory: SlotFactory | None, battle: BattleFn | None,
                 on_result: Callable[[BattleResult], None] | None = None) -> BatchOutcome:
    """Run the pending battles on the request's executor (or on the injected fakes), noting the nodes used."""
    def runner(slots: SlotFactory, battles: BattleFn, count: int) -> BatchOutcome:
        return BatchRunner(out=out, keys=pending, trials=manifest.config.trials, run_id=manifest.run_id,
                           blue=manifest.config.blue, workers=count, slot_factory=slots, battle_fn=battles,
                           max_infra_retries=request.max_infra_retries,
                           on_result=lambda key, result: _tell(progress, on_result, result),
                           on_start=lambda key: progress.started_one()).run()

    if factory is not None:
        return runner(factory, battle or battle_fn(manifest.config), workers)
    plan = ExecutorPlan(settings=settings, config=manifest.config, out=out, workers=workers,
                        slot_specs=request.slot_specs, first_slot=request.first_slot, ray_address=request.ray_address,
                        resume=request.resume)
    with open_executor(request.executor, plan) as executor:
        try:
            return runner(executor.slot_factory(), battle or executor.battle_fn(), min(workers, executor.capacity()))
        finally:
            record_nodes(out, executor.nodes())
