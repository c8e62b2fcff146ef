"""The running battle's fault plan, and the questions the gateway asks it: fault this call, or forward it?

`BattleFaults.next(battle, generation, tool)` answers None at once when the running battle has no fault spec
(the path of a run without faults is one attribute check), and for a call that is no longer the running
battle's (the forwarder's gate refuses it). A battle's plan starts at its first faultable call and is dropped
when a newer battle is set (`generation`, `mcp_gateway.scope`).

A 429's retry-after is the API's rule in tools mode: once a planned `rate_limit` fault reached the agent
(`rate_limited`), a call of the same API before `RETRY_AFTER_S` has passed is answered 429 again
(`held_back`: the planned fault it repeats, marked `enforced`), without drawing from the plan. Code mode does not
enforce it: AppWorld's REPL refuses `time.sleep` and its clock is frozen at the task's datetime, so code has no
way to wait inside an execution (docs/reliability.md).
"""

from __future__ import annotations

import time

import anyio

from mcp_gateway.faults.answers import RETRY_AFTER_S, FaultAnswer, fault_answer
from mcp_gateway.faults.plan import FaultPlan, PlannedFault
from mcp_gateway.models import BattleState
from mcp_gateway.tools import ToolSpec


class BattleFaults:
    """One plan per battle generation (module docstring)."""

    def __init__(self) -> None:
        self._generation: int | None = None
        self._plan: FaultPlan | None = None
        self._held: dict[str, tuple[float, PlannedFault]] = {}

    def next(self, battle: BattleState | None, generation: int, current: int, tool: ToolSpec) -> PlannedFault | None:
        """The planned fault of this call of `tool` (generation `generation`, `current` the running one), or None."""
        if battle is None or battle.faults is None or generation != current:
            return None
        self._start(battle, generation)
        assert self._plan is not None
        return self._plan.next(tool)

    def held_back(self, battle: BattleState | None, generation: int, tool: ToolSpec) -> PlannedFault | None:
        """The planned 429 this call of `tool` comes too early after (tools mode), or None (module docstring)."""
        if battle is None or battle.faults is None or battle.interaction != "tools" or generation != self._generation:
            return None
        held = self._held.get(tool.name)
        if held is None or time.monotonic() >= held[0]:
            return None
        return held[1]

    def rate_limited(self, generation: int, tool: ToolSpec, planned: PlannedFault) -> None:
        """A planned 429 of `tool` reached the agent: its retry-after starts now."""
        if generation == self._generation:
            self._held[tool.name] = (time.monotonic() + RETRY_AFTER_S, planned)

    def _start(self, battle: BattleState, generation: int) -> None:
        if self._generation != generation or self._plan is None:
            assert battle.faults is not None
            self._generation = generation
            self._plan = FaultPlan(battle.faults, battle.task_id or battle.battle_id, battle.trial)
            self._held = {}


async def answered(planned: PlannedFault, tool: ToolSpec, battle: BattleState) -> FaultAnswer:
    """The fault's answer, after its delay (a `timeout` holds the call `timeout_s` first; no lock is held)."""
    assert battle.faults is not None
    if planned.kind == "timeout":
        await anyio.sleep(battle.faults.timeout_s)
    return fault_answer(planned.kind, tool, battle.faults.timeout_s)
