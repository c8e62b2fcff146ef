"""`reliability.json` and `compare`'s `reliability` block: how much of a score survives a flaky world.

Written by `appworld-green reliability` (and put in a `Comparison` when run B is a fault run of run A's battles),
computed by `green_agent.reliability.r_fault` from two `results.json`: the same battles without faults (the
baseline) and with them. Definitions are in docs/reliability.md.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from green_agent.models.eval_run import Interval
from kernel.fault_spec import FaultSpec

RELIABILITY_SCHEMA_VERSION = 1


class KindRecovery(BaseModel):
    """Faults of one kind that reached the agent, and how many it got past."""

    injected: int = Field(ge=0, description="Faults of this kind that reached the agent.")
    recovered: int = Field(ge=0, description="Of which the same API later answered without a fault and succeeded.")
    rate: float | None = Field(description="recovered / injected (None: none injected).")
    loud: bool = Field(description="The agent was told (a failure); False for a silent kind (an empty page).")


class Reliability(BaseModel):
    """The reliability of one agent: the same battles without and with faults."""

    schema_version: Literal[1] = Field(default=RELIABILITY_SCHEMA_VERSION, description="Record format version.")
    faults: FaultSpec = Field(description="The fault spec of the faulted run.")
    baseline: str = Field(description="The run without faults (its directory or results.json).")
    faulted: str = Field(description="The run with faults.")
    tgc_baseline: float | None = Field(description="TGC without faults (over the compared tasks).")
    tgc_faults: float | None = Field(description="TGC with faults.")
    r_fault: float | None = Field(description="tgc_faults / tgc_baseline (None: the baseline passed nothing).")
    r_fault_ci: Interval | None = Field(default=None, description=(
        "Its paired interval over scenarios (`green_agent.reliability.ratio`); None: see r_fault_note."))
    r_fault_note: str | None = Field(default=None, description="Why there is no ratio or no interval, in words.")
    sgc_baseline: float | None = Field(default=None, description="SGC without faults.")
    sgc_faults: float | None = Field(default=None, description="SGC with faults.")
    r_fault_sgc: float | None = Field(default=None, description="sgc_faults / sgc_baseline.")
    r_fault_sgc_ci: Interval | None = Field(default=None, description="Its paired interval over scenarios.")
    faults_injected: int = Field(ge=0, description="Faults that reached the agent over the faulted run.")
    faults_recovered: int = Field(ge=0, description="Of which recovered.")
    faults_undelivered: int = Field(default=0, ge=0, description="Faults that never reached the agent (not counted).")
    recovery_by_kind: dict[str, KindRecovery] = Field(default_factory=dict, description="Recovery per kind.")
    recovery_loud: float | None = Field(default=None, description="Recovered / injected over the loud kinds.")
    recovery_silent: float | None = Field(default=None, description="Recovered / injected over the silent kinds.")
    lost_tasks: list[str] = Field(default_factory=list, description=(
        "Tasks that passed without faults and failed with them (more passed trials without than with)."))
    gained_tasks: list[str] = Field(default_factory=list, description="Tasks that passed more often with faults.")
    message: str = Field(description="The finding in plain words.")
