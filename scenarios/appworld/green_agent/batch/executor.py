"""Where battles run: the seam between the batch runner and the machines its slots live on.

An executor (the `Executor` protocol, declared in `green_agent.batch.executor_plan`) is a context
manager (it connects on enter and releases everything it started on exit) that gives
`green_agent.batch.runner.BatchRunner` its two seams, unchanged whichever executor runs:
`slot_factory()` (worker index -> a context manager holding one live slot) and `battle_fn()` (one
battle on such a slot, its `result.json` written into the driver's battle directory). Attempts,
infra retries, checkpoints, resume and aggregates stay the runner's and the builder's, so they behave
the same everywhere. After the run, `nodes()` says which machines ran battles (recorded in the manifest).

- `local`: today's pool, `green_agent.batch.live`, on this machine.
- `ray`: slot actors on a Ray cluster (`green_agent.batch.ray.executor`, imported only when chosen,
  so the local path never imports Ray).
"""

from __future__ import annotations

import socket

from green_agent.batch.executor_plan import Executor, ExecutorKind, ExecutorPlan
from green_agent.batch.live import battle_fn, choose_slots, slot_factory
from green_agent.batch.runner import BattleFn, SlotFactory
from green_agent.models.eval_run import RunNode
from green_agent.runtime.slot import SlotSpec

class LocalExecutor:
    """The local pool: `workers` slots on this machine's loopback."""

    kind: ExecutorKind = "local"

    def __init__(self, plan: ExecutorPlan) -> None:
        self.plan = plan
        self._specs: list[SlotSpec] = []

    def __enter__(self) -> "LocalExecutor":
        plan = self.plan
        self._specs = (plan.slot_specs[:plan.workers] if plan.slot_specs
                       else choose_slots(plan.workers, plan.first_slot, exact=plan.resume))
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def capacity(self) -> int:
        return len(self._specs)

    def slot_factory(self) -> SlotFactory:
        return slot_factory(self._specs, self.plan.settings, self.plan.config.blue, self.plan.out / "logs",
                            code=self.plan.config.interaction == "code")

    def battle_fn(self) -> BattleFn:
        return battle_fn(self.plan.config)

    def nodes(self) -> list[RunNode]:
        return [RunNode(executor="local", node_id="local", address="127.0.0.1", hostname=socket.gethostname())]


def open_executor(kind: ExecutorKind, plan: ExecutorPlan) -> Executor:
    """The executor of that kind (not yet entered)."""
    if kind == "ray":
        from green_agent.batch.ray.executor import RayExecutor

        return RayExecutor(plan)
    return LocalExecutor(plan)
