"""`appworld-green reliability`: one baseline and its arms, run one after another, then the profile's files.

Contract: `run_reliability(request, settings)` runs `request.eval` through the batch layer (`run_eval`) into
`<out>/baseline` (no faults, the original wording), then each arm (`green_agent.reliability.arms`) into
`<out>/<arm name>` with every other choice the same (so the battles pair by task and trial): a fault arm with
`choices.faults`, a paraphrase arm with `choices.paraphrase`. The fault arms of a sweep share ONE secret (their
plans differ by rate alone): drawn (or, on `--resume`, read back from an arm that kept it) before the first arm,
never published by an arm (`EvalRequest.publish_salt=False`), and published into every fault arm's run.json and
results.json (`fault_secret.publish_all`, then the arm's outputs rewritten) and into reliability.json only when
every arm is over. An interrupted run stops where it is and publishes nothing; `--resume` resumes every run.
Then `<out>/reliability.json` (`ReliabilityProfile`, `green_agent.reliability.profile`) and
`<out>/reliability.html` (`green_agent.reliability.page`) are written, and every run's report.html links the
page. Infrastructure errors are retried by each run as usual; a fault or a wording is never one.
The A2A door runs the same sequence (`green_agent.a2a.assessment`): `battles` wraps each run in what its battles
play through (the in-band bridge, one per run, logging into that run's folder), `on_result` hears every battle.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from pydantic import BaseModel, Field

from green_agent.batch.evaluate import EvalOutcome, EvalRequest, check_wordings, run_eval
from green_agent.batch.fault_secret import kept_secret, publish_all
from green_agent.batch.progress import Stage
from green_agent.batch.runner import BattleFn, SlotFactory
from green_agent.models.result import BattleResult
from green_agent.batch.rows import write_outputs
from green_agent.models.reliability_profile import ReliabilityProfile
from green_agent.output_paths import check_output_dir
from green_agent.runfolder.layout import PROFILE_PAGE
from green_agent.reliability.arms import ArmSpec
from green_agent.reliability.page import render_profile_html
from green_agent.reliability.profile import build_profile
from green_agent.reliability.safety import NamedRun
from green_agent.stats.intervals import IntervalOptions
from kernel.atomic import atomic_write_text
from kernel.errors import BadInputError
from kernel.fault_spec import new_salt
from kernel.settings import Settings
from kernel.world_data import WorldData

BASELINE_DIR = "baseline"
RELIABILITY_FILE = "reliability.json"


class ReliabilityRequest(BaseModel):
    """What `appworld-green reliability` was asked: one eval's settings (its `out` is the parent folder), the arms."""

    eval: EvalRequest = Field(description="The battles (split or task ids, Blue, trials, workers, ...); unperturbed.")
    arms: list[ArmSpec] = Field(min_length=1, description="The arms, in run order (`reliability.arms.build_arms`).")


class ReliabilityOutcome(BaseModel):
    """What `run_reliability` returns."""

    baseline: EvalOutcome = Field(description="The baseline run.")
    arms: dict[str, EvalOutcome] = Field(default_factory=dict, description="Each arm run so far, by name.")
    profile: ReliabilityProfile | None = Field(default=None, description="What reliability.json holds (None: "
                                                                         "interrupted).")
    interrupted: bool = Field(default=False, description="Stopped before every arm was over.")

    @property
    def infra_errors(self) -> int:
        runs = [self.baseline, *self.arms.values()]
        return sum(r.results.aggregates.infra_errors for r in runs)


RunBattles = Callable[[EvalRequest], AbstractContextManager[BattleFn | None]]
"""A run's request -> a context in which its battles are built (None: `run_eval`'s own, on the slots)."""


def run_reliability(request: ReliabilityRequest, settings: Settings, *, battles: RunBattles | None = None,
                    on_result: Callable[[BattleResult], None] | None = None,
                    factory: SlotFactory | None = None) -> ReliabilityOutcome:
    """The baseline, every arm, then the profile's files (module docstring). BadInputError / InfrastructureError.
    `factory` replaces the real slots of every run (tests only, as `run_eval`'s)."""
    choices = request.eval.choices
    if choices.faults is not None or choices.paraphrase is not None:
        raise BadInputError("the baseline of a reliability run is unperturbed: give faults and paraphrases as arms")
    world = WorldData(settings.appworld_root).require()
    for arm in request.arms:  # a paraphrase arm without a usable wording for a task stops us before the baseline
        if arm.paraphrase is not None:
            check_wordings(request.eval.model_copy(update={"choices": choices.model_copy(
                update={"paraphrase": arm.paraphrase})}), world)
    out = check_output_dir(Path(request.eval.out))
    options = IntervalOptions(level=request.eval.confidence_level or settings.confidence_level)
    salt = _shared_salt(out, request.arms)
    arms = [a.model_copy(update={"faults": a.faults.with_salt(salt)}) if a.faults and salt else a
            for a in request.arms]
    started = time.monotonic()
    around = battles or (lambda _: nullcontext(None))

    def run_one(one: EvalRequest, stage: Stage) -> EvalOutcome:
        with around(one) as battle:
            return run_eval(one, settings, factory=factory, battle=battle, on_result=on_result, stage=stage)

    baseline = run_one(request.eval.model_copy(update={"out": out / BASELINE_DIR}),
                       Stage(BASELINE_DIR, later_runs=len(arms)))
    outcome = ReliabilityOutcome(baseline=baseline, interrupted=baseline.interrupted)
    done = baseline.ran
    for index, arm in enumerate(arms):
        if outcome.interrupted:
            return outcome
        arm_choices = choices.model_copy(update={"faults": arm.faults, "paraphrase": arm.paraphrase})
        ran = run_one(request.eval.model_copy(update={"out": out / arm.name, "choices": arm_choices,
                                                      "publish_salt": False}),
                      Stage(arm.name, earlier_battles=done, earlier_s=time.monotonic() - started,
                            later_runs=len(arms) - index - 1))
        outcome.arms[arm.name], done = ran, done + ran.ran
        outcome.interrupted = ran.interrupted
    if outcome.interrupted:
        return outcome
    if salt is not None:
        publish_all([out / a.name for a in arms if a.faults is not None], salt)
    profile = build_profile(NamedRun(BASELINE_DIR, out / BASELINE_DIR, baseline.results),
                            [(a, NamedRun(a.name, out / a.name, outcome.arms[a.name].results)) for a in arms],
                            options, salt=salt)
    atomic_write_text(out / RELIABILITY_FILE, profile.model_dump_json(indent=2))
    atomic_write_text(out / PROFILE_PAGE, render_profile_html(profile))
    # every run's outputs again: results.json carries the published secret, report.html links the profile's page
    outcome.baseline.results = write_outputs(out / BASELINE_DIR, options)
    for arm in arms:
        outcome.arms[arm.name].results = write_outputs(out / arm.name, options)
    outcome.profile = profile
    return outcome


def _shared_salt(out: Path, arms: list[ArmSpec]) -> str | None:
    """The fault arms' one secret: given (`salt=`), kept by an arm already started (a resume), or new."""
    specs = [a.faults for a in arms if a.faults is not None]
    if not specs:
        return None
    given = {s.salt for s in specs if s.salt is not None}
    kept = {k for a in arms if a.faults is not None and (k := kept_secret(out / a.name)) is not None}
    if len(given | kept) > 1:
        raise BadInputError("the fault arms of this folder do not share one secret (a salt given differs from the "
                            "one the run keeps): start a new run (a new --out) or give the run's own salt")
    return next(iter(given | kept), None) or new_salt()
