"""`appworld-green reliability`: the same battles without and with faults, and how much of the score survived.

Contract: `run_reliability(request, settings)` runs `request.eval` twice through the batch layer (`run_eval`):
into `<out>/baseline` without faults and into `<out>/faults` with `request.faults` (every other choice the
same, so the battles pair by task and trial), then compares them (`green_agent.batch.compare.compare_runs`, which
computes the reliability block) and writes `<out>/reliability.json` (the `Reliability`) and `<out>/report.html`
(the comparison page with its reliability section). `--resume` resumes both runs (the faulted one keeps its
plan: the spec is in its fingerprint). A run interrupted stops there; infrastructure errors are retried by each
run as usual, and a fault is never one.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, Field

from green_agent.batch.compare import compare_runs
from green_agent.batch.compare_report import render_compare_html
from green_agent.batch.evaluate import EvalOutcome, EvalRequest, run_eval
from green_agent.batch.progress import Stage
from green_agent.models.comparison import Comparison
from green_agent.models.reliability import Reliability
from green_agent.output_paths import check_output_dir
from green_agent.stats.intervals import IntervalOptions
from green_agent.stats.power import DEFAULT_POWER
from kernel.atomic import atomic_write_text
from kernel.errors import BadInputError
from kernel.fault_spec import FaultSpec
from kernel.settings import Settings

BASELINE_DIR = "baseline"
FAULTS_DIR = "faults"
RELIABILITY_FILE = "reliability.json"
REPORT_FILE = "report.html"


class ReliabilityRequest(BaseModel):
    """What `appworld-green reliability` was asked: one eval's settings (its `out` is the parent folder) and a spec."""

    eval: EvalRequest = Field(description="The battles (split or task ids, Blue, trials, workers, ...); no faults.")
    faults: FaultSpec = Field(description="The fault spec of the faulted run.")


class ReliabilityOutcome(BaseModel):
    """What `run_reliability` returns."""

    baseline: EvalOutcome = Field(description="The run without faults.")
    faulted: EvalOutcome | None = Field(default=None, description="The run with faults (None: not reached).")
    comparison: Comparison | None = Field(default=None, description="The faulted run against the baseline.")
    reliability: Reliability | None = Field(default=None, description="What reliability.json holds.")

    @property
    def interrupted(self) -> bool:
        return self.baseline.interrupted or self.faulted is None or self.faulted.interrupted


def run_reliability(request: ReliabilityRequest, settings: Settings) -> ReliabilityOutcome:
    """Both runs, then the reliability files (module docstring). Raises BadInputError / InfrastructureError."""
    if request.eval.choices.faults is not None:
        raise BadInputError("the baseline of a reliability run has no faults: give the spec once, as --faults")
    out = check_output_dir(Path(request.eval.out))
    options = IntervalOptions(level=request.eval.confidence_level or settings.confidence_level)
    started = time.monotonic()  # one ETA over both runs: the baseline counts the faulted run's battles to come
    baseline = run_eval(request.eval.model_copy(update={"out": out / BASELINE_DIR}), settings,
                        stage=Stage(BASELINE_DIR, later_runs=1))
    if baseline.interrupted:
        return ReliabilityOutcome(baseline=baseline)
    choices = request.eval.choices.model_copy(update={"faults": request.faults})
    faulted = run_eval(request.eval.model_copy(update={"out": out / FAULTS_DIR, "choices": choices}), settings,
                       stage=Stage(FAULTS_DIR, earlier_battles=baseline.ran, earlier_s=time.monotonic() - started))
    if faulted.interrupted:
        return ReliabilityOutcome(baseline=baseline, faulted=faulted)
    paths = (out / BASELINE_DIR, out / FAULTS_DIR)
    comparison = compare_runs(baseline.results, faulted.results, str(paths[0]), str(paths[1]), options=options,
                              power=DEFAULT_POWER, run_dirs=paths)
    if comparison.reliability is not None:
        atomic_write_text(out / RELIABILITY_FILE, comparison.reliability.model_dump_json(indent=2))
    atomic_write_text(out / REPORT_FILE, render_compare_html(comparison, out.resolve()))
    return ReliabilityOutcome(baseline=baseline, faulted=faulted, comparison=comparison,
                              reliability=comparison.reliability)
