"""The running battle's fault plan, and the one question the gateway asks it: fault this call, or forward it?

`BattleFaults.next(battle, generation, tool)` answers None at once when the running battle has no fault spec
(the path of a run without faults is one attribute check), and for a call that is no longer the running
battle's (the forwarder's gate refuses it). A battle's plan starts at its first faultable call and is dropped
when a newer battle is set (`generation`, `mcp_gateway.scope`).
"""

from __future__ import annotations

import anyio

from mcp_gateway.faults.answers import FaultAnswer, fault_answer
from mcp_gateway.faults.plan import FaultPlan, PlannedFault
from mcp_gateway.models import BattleState
from mcp_gateway.tools import ToolSpec


class BattleFaults:
    """One plan per battle generation (module docstring)."""

    def __init__(self) -> None:
        self._generation: int | None = None
        self._plan: FaultPlan | None = None

    def next(self, battle: BattleState | None, generation: int, current: int, tool: ToolSpec) -> PlannedFault | None:
        """The planned fault of this call of `tool` (generation `generation`, `current` the running one), or None."""
        if battle is None or battle.faults is None or generation != current:
            return None
        if self._generation != generation or self._plan is None:
            self._generation = generation
            self._plan = FaultPlan(battle.faults, battle.task_id or battle.battle_id, battle.trial)
        return self._plan.next(tool)


async def answered(planned: PlannedFault, tool: ToolSpec, battle: BattleState) -> FaultAnswer:
    """The fault's answer, after its delay (a `timeout` holds the call `timeout_s` first; no lock is held)."""
    assert battle.faults is not None
    if planned.kind == "timeout":
        await anyio.sleep(battle.faults.timeout_s)
    return fault_answer(planned.kind, tool, battle.faults.timeout_s)
