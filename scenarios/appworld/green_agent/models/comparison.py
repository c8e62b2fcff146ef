"""Records of `appworld-green compare RUN_A RUN_B`: the paired comparison of two runs over the same tasks.

`Comparison` is what `compare --json` prints and `compare --out FILE.json` writes; the terminal table
and the HTML page are rendered from it. It holds no task content (ids, verdicts and outcomes only).
Differences are B - A, in points (0-100 scale): positive means B passed more.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from green_agent.models.cost import CostFigures

from green_agent.models.eval_run import Interval
from green_agent.models.reliability import Reliability

COMPARISON_SCHEMA_VERSION = 1

Change = Literal["better", "worse", "same"]
Verdict = Literal["b_better", "a_better", "cannot_tell"]


class RunSide(BaseModel):
    """One of the two runs, as the comparison names it."""

    path: str = Field(description="The run directory (or results.json) given on the command line.")
    run_id: str = Field(description="The run's id.")
    blue: str = Field(description="Blue under test.")
    split: str | None = Field(description="Split evaluated (None: a task list).")
    trials: int = Field(description="Trials per task.")
    tasks: int = Field(description="Tasks in the run's task set.")
    status: str = Field(description="The run's status (completed | incomplete | interrupted).")
    cost: CostFigures | None = Field(default=None, description="The run's cost (`green_agent.models.cost`); "
                                     "None: a results.json written before costs existed.")
    standard: bool | None = Field(default=None, description="The run is standard (`green_agent.batch.standard`); "
                                  "None: not recorded.")
    custom: list[str] = Field(default_factory=list, description="How the run differs from a standard one.")


class TaskComparison(BaseModel):
    """One shared task: its judged trials and passes in A and in B."""

    task_id: str = Field(description="AppWorld task id.")
    scenario_id: str = Field(description="Its scenario (the intervals' cluster).")
    difficulty: int | None = Field(default=None, description="1-3, when known.")
    trials_a: int = Field(description="Trials of the task in A (its run's trials; unjudged ones not passed).")
    passed_a: int = Field(description="Of which passed.")
    outcomes_a: list[str] = Field(description="A's outcome per trial, in trial order.")
    trials_b: int = Field(description="Trials of the task in B.")
    passed_b: int = Field(description="Of which passed.")
    outcomes_b: list[str] = Field(description="B's outcome per trial, in trial order.")
    reasons_a: list[str] = Field(default_factory=list, description="Why, per trial of A (`EvalRow.reason`).")
    reasons_b: list[str] = Field(default_factory=list, description="Why, per trial of B.")
    change: Change = Field(description="better: B's pass rate is higher; worse: lower; same.")
    pages_a: list[str | None] = Field(default_factory=list, description=(
        "Per trial of A, its battle's trace page (trace.html, an absolute path), None where it has none."))
    pages_b: list[str | None] = Field(default_factory=list, description="Per trial of B, its trace page.")


class PairedTest(BaseModel):
    """The significance test on the paired per-task verdicts."""

    name: Literal["scenario permutation", "exact McNemar", "paired permutation"] = Field(description=(
        "scenario permutation: A and B swapped within whole scenarios (sums of per-task pass rates). The other "
        "two names are those of files written before issue 35 (tests that took tasks as independent)."))
    p_value: float = Field(description="Two-sided p-value.")
    a_only: int = Field(description="Tasks A did better on (one trial: passed in A, failed in B).")
    b_only: int = Field(description="Tasks B did better on.")
    scenarios: int | None = Field(default=None, description="Scenarios compared (None: a file before issue 35).")
    scenarios_differing: int | None = Field(default=None, description=(
        "Of which A's and B's sums differ: the test's sample (its smallest p is 2 / 2^this)."))


class PairedDifference(BaseModel):
    """TGC of A and B over the same tasks, their difference, its interval, the test and the verdict."""

    tasks: int = Field(description="Tasks compared.")
    tgc_a: float = Field(description="A's TGC over these tasks (mean per-task pass rate, points).")
    tgc_b: float = Field(description="B's TGC over these tasks.")
    difference: float = Field(description="tgc_b - tgc_a, points.")
    ci: Interval | None = Field(description="Paired scenario-aware interval of the difference (None with one scenario).")
    test: PairedTest = Field(description="The significance test.")
    minimum_detectable: float | None = Field(description=(
        "Smallest difference (points) these tasks detect with the stated power at alpha = 1 - level "
        "(see docs/statistics.md); None with fewer than two scenarios."))
    design_effect: float | None = Field(default=None, description=(
        "How alike a scenario's tasks are in both runs' pooled pass rates (1: independent; tasks per scenario: "
        "as one), used by minimum_detectable; None in files before issue 35."))
    verdict: Verdict = Field(description="b_better | a_better (p < alpha and the interval excludes 0) | cannot_tell.")
    message: str = Field(description="The verdict in plain words, with the minimum detectable difference.")


class Comparison(BaseModel):
    """`compare`'s result."""

    schema_version: Literal[1] = Field(default=COMPARISON_SCHEMA_VERSION, description="Record format version.")
    confidence_level: float = Field(description="Level of the intervals; alpha = 1 - level for the tests.")
    power: float = Field(description="Power the minimum detectable difference is stated at.")
    a: RunSide = Field(description="Run A.")
    b: RunSide = Field(description="Run B.")
    intersect: bool = Field(description="Compared on the shared tasks only (--intersect).")
    only_in_a: list[str] = Field(default_factory=list, description="Tasks of A not in B (left out, --intersect).")
    only_in_b: list[str] = Field(default_factory=list, description="Tasks of B not in A (left out, --intersect).")
    incomplete_tasks: list[str] = Field(default_factory=list, description=(
        "Shared tasks with a trial not judged in A or in B (infra or scope error, or no result): counted as not "
        "passed there, as the headline TGC counts them."))
    counts: dict[str, int] = Field(description=(
        "better / worse / same; with one trial in both runs also both / a_only / b_only / neither (passed in ...)."))
    overall: PairedDifference = Field(description="Over every compared task.")
    by_difficulty: dict[str, PairedDifference] = Field(description="The same per difficulty ('1'..'3', 'unknown').")
    tasks: list[TaskComparison] = Field(description="Every compared task, in A's task order.")
    standard_note: str | None = Field(default=None, description=(
        "Said before the verdict when a run is custom: the difference may come from its settings, not the agent."))
    reliability: Reliability | None = Field(default=None, description=(
        "When B is A's battles under faults (A without, B with a fault spec): r_fault, its interval, recovery by "
        "kind (`green_agent.reliability.r_fault`, docs/reliability.md)."))
