"""One assessment: a parsed request -> battles on the batch layer's slots, through the in-band bridge -> artifact data.

`run_assessment(assessment, settings, events)` (blocking; the A2A executor runs it in a thread):
1. resolves this shard's task ids (`request.resolve_shard`; bad input raises `RequestError` first);
2. starts the bridge (`green_agent.a2a.bridge.server`, a process of its own) for the purple;
3. runs the shard with `batch.evaluate.run_eval`, exactly as `appworld-green eval` does (same run
   directory under RUNS_DIR, slots, retries, results.json, report.html), except that each battle is
   built with `BattleChoices(bridge=True)` and dispatched to the bridge (`bridge_battle_fn`);
4. stops the bridge and returns `AssessmentData` (`green_agent.a2a.artifact`).
With `faults` or `paraphrase` in the config it is a reliability profile instead: the `reliability` command's own
sequence (`green_agent.reliability.run.run_reliability`: the baseline into `<out>/baseline`, one folder per arm, one
shared fault secret, reliability.json and reliability.html in `<out>`), each run through a bridge of its own; the
artifact's headline figures and rows are the baseline's (the unperturbed run) and `profile` carries the profile.
`events` is told `started(task_ids, shard)` and `finished(result, passed, judged)` per battle.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Protocol

from green_agent import __version__
from green_agent.a2a.artifact import AssessmentData, ShardInfo, build_data
from green_agent.a2a.purple_http import AUTH_ENV
from green_agent.a2a.request import Assessment, resolve_shard
from green_agent.batch.checkpoint import BattleKey
from green_agent.batch.evaluate import EvalRequest, run_eval
from green_agent.batch.live import SlotEnv
from green_agent.batch.runner import BattleFn
from green_agent.models.reliability_profile import ReliabilityProfile
from green_agent.reliability.arms import build_arms
from green_agent.reliability.run import BASELINE_DIR, ReliabilityRequest, run_reliability
from kernel.task_ids import TaskRef
from green_agent.engine.config import BattleChoices, build_battle
from green_agent.engine.sequencer import run_battle
from green_agent.models.result import BattleResult
from green_agent.runtime.processes import ManagedProcess
from green_agent.runtime.slot import SlotSpec
from green_agent.models.result_assembly import collect_versions
from green_agent.a2a.bridge.code_replies import CODE_PROTOCOL
from green_agent.a2a.bridge.conversation import DEFAULT_MAX_STEPS, DEFAULT_TURN_TIMEOUT_S
from green_agent.runtime.code_sandbox import check_code_sandbox
from kernel.a2a_tools import PROTOCOL
from kernel.ports import free_port
from kernel.settings import Settings
from kernel.trace_log import BRIDGE_TRACE_FILE
from kernel.world_data import WorldData

BRIDGE_REPLY_GRACE_S = 2.0
"""The bridge answers only once its conversation is over (after any complete_task), so little grace is needed."""
BRIDGE_READY_TIMEOUT_S = 60.0


class AssessmentEvents(Protocol):
    """What the A2A executor is told while the assessment runs (called from worker threads)."""

    def started(self, task_ids: list[str], shard: ShardInfo) -> None: ...

    def finished(self, result: BattleResult, done: int, passed: int) -> None: ...


def plan_shard(assessment: Assessment, settings: Settings) -> tuple[list[str], ShardInfo]:
    """This shard's task ids and its description; raises RequestError / InfrastructureError (no world)."""
    world = WorldData(settings.appworld_root).require()
    config = assessment.config
    task_ids, whole = resolve_shard(config, world, settings.default_split)
    return task_ids, ShardInfo(index=config.shard_index, count=config.num_shards, tasks=len(task_ids),
                               task_set_size=whole)


def run_assessment(assessment: Assessment, settings: Settings, events: AssessmentEvents,
                   out: Path | None = None, slot_specs: list[SlotSpec] | None = None) -> AssessmentData:
    """Run the assessment (see the module docstring); `out` defaults to RUNS_DIR/a2a-<time>-shard<k>;
    `slot_specs`: the world slots to use (default: the first free ones), which cap `workers`."""
    started = time.monotonic()
    task_ids, shard = plan_shard(assessment, settings)
    config = effective_config(assessment, settings)
    found = versions(settings, str(config.get("interaction")))  # code mode: no sandbox here refuses now
    events.started(task_ids, shard)
    if not task_ids:  # more shards than tasks: this one is empty
        return build_data(None, [], shard, assessment.role, config, found, 0.0, None)
    out = out or settings.runs_dir / f"a2a-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-shard{shard.index}"
    counts = {"done": 0, "passed": 0}

    def on_result(result: BattleResult) -> None:
        counts["done"] += 1
        counts["passed"] += result.outcome == "passed"
        events.finished(result, counts["done"], counts["passed"])

    choices = BattleChoices(blue=assessment.purple_url, predictor=config["predictor"],
                            scope_policy=config["scope_policy"], interaction=config.get("interaction"),
                            deadline_s=config["deadline_s"], reply_grace_s=BRIDGE_REPLY_GRACE_S, bridge=True)
    request = EvalRequest(task_ids=task_ids, choices=choices, workers=config["workers"], trials=config["trials"],
                          out=out, slot_specs=slot_specs, **assessment_standard(assessment, config))

    @contextmanager
    def bridged(run: EvalRequest) -> Iterator[BattleFn]:
        with running_bridge(assessment, config, Path(run.out) / "logs") as bridge_url:
            yield bridge_battle_fn(bridge_url, run)

    asked = assessment.config
    profile: ReliabilityProfile | None = None
    if asked.faults or asked.paraphrase:
        arms = build_arms(asked.faults or [], asked.paraphrase or [], asked.paraphrase_seed)
        ran = run_reliability(ReliabilityRequest(eval=request, arms=arms), settings, battles=bridged,
                              on_result=on_result)
        results, profile, out = ran.baseline.results, ran.profile, out / BASELINE_DIR
    else:
        with bridged(request) as battle:
            results = run_eval(request, settings, battle=battle, on_result=on_result).results
    return build_data(results, task_ids, shard, assessment.role, config, found, time.monotonic() - started, out,
                      profile)


def assessment_standard(assessment: Assessment, config: dict[str, object]) -> dict[str, object]:
    """EvalRequest's `shard_of` and `driver_custom`: the split this shard is part of, and what the request changed
    from a standard run that the run's config does not hold (`green_agent.batch.standard`)."""
    asked = assessment.config
    first_n = asked.num_tasks or asked.num_instances
    custom = [f"only the first {first_n} task(s) of the {config['split']} split (num_tasks)"] if first_n else []
    if asked.max_steps != DEFAULT_MAX_STEPS:
        custom.append(f"max_steps {asked.max_steps} purple replies per task (standard: {DEFAULT_MAX_STEPS})")
    if asked.turn_timeout_s != DEFAULT_TURN_TIMEOUT_S:
        custom.append(f"turn_timeout_s {asked.turn_timeout_s:g} per reply (standard: {DEFAULT_TURN_TIMEOUT_S:g})")
    whole = config["split"] is not None and not first_n
    return {"shard_of": (str(config["split"]) if whole else None, asked.shard_index, asked.num_shards),
            "driver_custom": custom}


def effective_config(assessment: Assessment, settings: Settings) -> dict[str, object]:
    """Every config key with the value used (defaults filled in), as the artifact records it."""
    config = assessment.config.model_dump()
    config.update(predictor=config["predictor"] or settings.scope_predictor,
                  scope_policy=config["scope_policy"] or settings.scope_policy,
                  interaction=config.get("interaction") or settings.interaction,
                  deadline_s=config["deadline_s"] or settings.completion_deadline_s,
                  split=None if config["task_ids"] else (config["split"] or settings.default_split))
    return config


def versions(settings: Settings, interaction: str | None = None) -> dict[str, str]:
    """The artifact's `versions`; in code mode the code protocol and the isolation agent code runs under."""
    record = collect_versions(settings.appworld_python)
    try:
        a2a = version("a2a-sdk")
    except PackageNotFoundError:
        a2a = "unknown"
    found = {"appworld_green": __version__, "appworld": record.appworld or "unknown", "a2a_sdk": a2a,
             "protocol": PROTOCOL}
    if interaction == "code":
        found.update(protocol=CODE_PROTOCOL, isolation=check_code_sandbox("code", settings) or "")
    return found


@contextmanager
def running_bridge(assessment: Assessment, config: dict[str, object], log_dir: Path) -> Iterator[str]:
    """The bridge process for this assessment's purple, stopped on exit; yields its A2A URL."""
    log_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    argv = [sys.executable, "-m", "green_agent.a2a.bridge.server", "--port", str(port),
            "--purple", assessment.purple_url, "--max-steps", str(config["max_steps"]),
            "--turn-timeout", str(config["turn_timeout_s"]), "--deadline", str(config["deadline_s"]),
            "--trace-log", str(log_dir / BRIDGE_TRACE_FILE)]  # gathered per battle (trace.hooks.bridge_trace_path)
    env = dict(os.environ)
    if assessment.purple_auth:  # the environment, not argv: a process list shows argv to every user
        env[AUTH_ENV] = ":".join(assessment.purple_auth)
    process = ManagedProcess(f"in-band bridge :{port}", argv, log_dir / f"bridge-{port}.log", env=env)
    url = f"http://127.0.0.1:{port}"
    with process.running(f"{url}/.well-known/agent-card.json", timeout_s=BRIDGE_READY_TIMEOUT_S):
        yield url


def bridge_battle_fn(bridge_url: str, request: EvalRequest):  # noqa: ANN201 - a batch.runner.BattleFn
    """(key, slot, dir, battle id) -> result: one battle of `request` on a live slot, dispatched to the bridge."""

    def run(key: BattleKey, env: SlotEnv, directory: Path, battle_id: str) -> BattleResult:
        task = TaskRef(task_id=key.task_id, source="id")  # the request checked every id against the world
        battle_config, deps = build_battle(task, request.choices, env.settings, battle_id=battle_id,
                                           blue_url=bridge_url, run_dir=directory, env_url=env.urls.env_url,
                                           apis_url=env.urls.apis_url, gateway_url=env.urls.gateway_url,
                                           call_log_path=env.settings.agentbeats_mcp_log_path, trial=key.trial)
        return run_battle(battle_config, deps)

    return run
