"""`reliability.json` (schema 2): an agent's reliability profile, every axis one `reliability` run asked for.

Written by `appworld-green reliability` and carried by the A2A artifact (`profile`), computed by
`green_agent.reliability.profile` from the run's folders: one baseline (no faults, the original wording) shared by
every arm; each arm one perturbation (a fault rate of the sweep, or a paraphrase strength). Definitions and sources
are in docs/reliability.md. The r_fault block of one faulted run against its baseline (`compare`'s) stays
`green_agent.models.reliability.Reliability` (schema 1); a fault arm carries it as `recovery`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from green_agent.models.eval_run import Interval
from green_agent.models.reliability import Reliability
from kernel.fault_spec import FaultSpec

PROFILE_SCHEMA_VERSION = 2
ArmAxis = Literal["faults", "paraphrase"]


class LostTask(BaseModel):
    """A battle of an arm that failed where the baseline passed the same task and trial, and why."""

    arm: str = Field(description="The arm's name (its folder).")
    task_id: str = Field(description="The task.")
    trial: int = Field(ge=1, description="The trial.")
    cause: str = Field(description="One line: the first unrecovered fault, or the wording it lost under.")
    answer: str | None = Field(default=None, description="The answer the agent gave (paraphrase arms), bounded.")
    trace: str | None = Field(default=None, description="The battle's trace.html, relative to the profile folder.")


class Arm(BaseModel):
    """One perturbation against the shared baseline, over the same tasks and trials."""

    name: str = Field(description="Its folder under the profile's, e.g. `faults-rate0.3`, `paraphrase-strong`.")
    axis: ArmAxis = Field(description="What was perturbed.")
    rate: float | None = Field(default=None, description="faults: the sweep's rate.")
    strength: str | None = Field(default=None, description="paraphrase: the strength.")
    faults: FaultSpec | None = Field(default=None, description="faults: the arm's spec (its salt never written).")
    tgc: float | None = Field(default=None, description="The arm's TGC over the compared task-trials.")
    sgc: float | None = Field(default=None, description="The arm's SGC.")
    ratio: float | None = Field(default=None, description="TGC arm / TGC baseline, not capped (r_fault, R_prompt).")
    ratio_ci: Interval | None = Field(default=None, description="Its paired scenario-clustered interval.")
    ratio_sgc: float | None = Field(default=None, description="SGC arm / SGC baseline.")
    ratio_sgc_ci: Interval | None = Field(default=None, description="Its interval.")
    note: str | None = Field(default=None, description="Why there is no ratio or no interval, in words.")
    lost_tasks: list[str] = Field(default_factory=list, description="Tasks passed more often in the baseline.")
    gained_tasks: list[str] = Field(default_factory=list, description="Tasks passed more often in the arm.")
    recovery: Reliability | None = Field(default=None, description="faults: recovery by kind (the r_fault block).")
    battles: int = Field(default=0, ge=0, description="Battles of the arm with a result.")
    infra_errors: int = Field(default=0, ge=0, description="Of which infrastructure errors (not the agent's).")


class CurvePoint(BaseModel):
    """One point of the fault sweep's curve."""

    rate: float = Field(description="The fault rate.")
    ratio: float | None = Field(description="r_fault at that rate.")
    low: float | None = Field(default=None, description="Its interval's low end.")
    high: float | None = Field(default=None, description="Its interval's high end.")


class Figure(BaseModel):
    """A figure in [0, 1] over the tasks (or battles), with its scenario-aware interval."""

    value: float | None = Field(description="The figure (None: nothing to compute it from).")
    ci: Interval | None = Field(default=None, description="Scenario-aware interval (None: see `note`).")
    note: str | None = Field(default=None, description="Why there is no value or interval.")


class Consistency(BaseModel):
    """How alike a task's repeated trials are (the baseline's trials; trials >= 2)."""

    trials: int = Field(ge=2, description="Trials per task.")
    tasks: int = Field(ge=0, description="Tasks with every trial judged (the figures' units).")
    pass_hat_k: dict[str, Figure] = Field(description="k -> pass^k: mean over tasks of C(c, k) / C(n, k).")
    outcome: Figure = Field(description="Mean over tasks of (2p - 1)^2, p the task's pass share over its trials.")
    trajectory: Figure = Field(description="Mean over tasks of the mean pairwise similarity of the trials' API "
                                           "call sequences (difflib's ratio over app.api names in call order).")
    resource: Figure = Field(description="exp(-mean coefficient of variation) over the tasks and resources.")
    resource_by: dict[str, float | None] = Field(default_factory=dict, description=(
        "Per resource (calls, seconds, tokens where reported): exp(-mean CV) over the tasks."))


class SafetyBattle(BaseModel):
    """A battle that changed the world beyond what the task asked."""

    arm: str = Field(description="`baseline` or the arm's name.")
    task_id: str = Field(description="The task.")
    trial: int = Field(ge=1, description="The trial.")
    requirement: str | None = Field(default=None, description="AppWorld's failed no_op_pass test, in its words.")
    changes: str | None = Field(default=None, description="What the battle changed, per app.table (+added "
                                                          "~changed -deleted).")
    trace: str | None = Field(default=None, description="The battle's trace.html, relative to the profile folder.")


class Safety(BaseModel):
    """The share of judged battles with a failed collateral-damage test (AppWorld's `no_op_pass`)."""

    battles: int = Field(ge=0, description="Judged battles over the baseline and every arm.")
    violations: int = Field(ge=0, description="Of which a no_op_pass test failed (outcome collateral_damage).")
    share: Figure = Field(description="violations / battles, clustered by scenario.")
    by_kind: dict[str, int] = Field(default_factory=dict, description=(
        "Over the violating battles: tables with rows added, with UPDATE statements (changed), with DELETE "
        "statements (deleted), from each battle's trace `world_changes`."))
    by_run: dict[str, int] = Field(default_factory=dict, description="Violations per run (baseline, arms).")
    examples: list[SafetyBattle] = Field(default_factory=list, description="The violating battles (bounded).")


class AxisLine(BaseModel):
    """One line of the profile's head: an axis, its figure and interval, a sentence."""

    axis: str = Field(description="e.g. `R_fault @ 0.3`, `R_prompt strong`, `pass^3`, `safety`.")
    value: float | None = Field(description="The figure.")
    ci: Interval | None = Field(default=None, description="Its interval.")
    sentence: str = Field(description="What it says, read in seconds.")


class ReliabilityProfile(BaseModel):
    """An agent's reliability profile: the baseline, the arms, the curve, consistency, safety, the lost tasks."""

    schema_version: Literal[2] = Field(default=PROFILE_SCHEMA_VERSION, description="Record format version.")
    blue: str = Field(description="The agent under test.")
    tasks: int = Field(ge=0, description="Tasks of the task set.")
    scenarios: int = Field(ge=0, description="Their scenarios.")
    trials: int = Field(ge=1, description="Trials per task, in every run.")
    baseline: str = Field(description="The baseline's folder (no faults, the original wording).")
    tgc_baseline: float | None = Field(description="The baseline's TGC.")
    arms: list[Arm] = Field(default_factory=list, description="The arms, in run order.")
    curve: list[CurvePoint] = Field(default_factory=list, description="The fault sweep, by rate.")
    consistency: Consistency | None = Field(default=None, description="With trials >= 2 (the baseline's).")
    safety: Safety = Field(description="Collateral damage over every battle of the profile.")
    axes: list[AxisLine] = Field(default_factory=list, description="The head: one line per axis.")
    lost: list[LostTask] = Field(default_factory=list, description="Every arm's lost battles, with causes.")
    fault_salt: str | None = Field(default=None, description=(
        "The fault arms' shared secret, published once every arm is over (None before, and without fault arms)."))
    fault_commitment: str | None = Field(default=None, description="Its SHA-256, committed when the run started.")
    message: str = Field(description="The profile in two sentences.")
