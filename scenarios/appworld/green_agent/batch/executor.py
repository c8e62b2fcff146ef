"""Where battles run: the seam between the batch runner and the machines its slots live on.

An executor is a context manager (it connects on enter and releases everything it started on exit)
that gives `green_agent.batch.runner.BatchRunner` its two seams, unchanged whichever executor runs:
`slot_factory()` (worker index -> a context manager holding one live slot) and `battle_fn()` (one
battle on such a slot, its `result.json` written into the driver's battle directory). Attempts,
infra retries, checkpoints, resume and aggregates stay the runner's and the builder's, so they behave
the same everywhere. After the run, `nodes()` says which machines ran battles (recorded in the manifest).

- `local`: today's pool, `green_agent.batch.live`, on this machine.
- `ray`: slot actors on a Ray cluster (`green_agent.batch.ray_executor`, imported only when chosen,
  so the local path never imports Ray).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal, Protocol

from green_agent.batch.live import battle_fn, choose_slots, slot_factory
from green_agent.batch.runner import BattleFn, SlotFactory
from green_agent.models.eval_run import RunConfig, RunNode
from kernel.settings import Settings
from green_agent.runtime.slot import SlotSpec

ExecutorKind = Literal["local", "ray"]
EXECUTORS: tuple[ExecutorKind, ...] = ("local", "ray")


@dataclass(frozen=True)
class ExecutorPlan:
    """What any executor needs to start slots for a run."""

    settings: Settings
    config: RunConfig
    out: Path
    workers: int
    slot_specs: list[SlotSpec] | None = None
    first_slot: int = 0
    ray_address: str | None = None
    resume: bool = False
    """A resumed run takes the same slots it asks for (`first_slot`...), or says which one is busy."""


class Executor(Protocol):
    """See the module docstring."""

    kind: ExecutorKind

    def __enter__(self) -> "Executor": ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...

    def capacity(self) -> int:
        """How many slots can run at once (the runner uses at most this many workers)."""

    def slot_factory(self) -> SlotFactory: ...

    def battle_fn(self) -> BattleFn: ...

    def nodes(self) -> list[RunNode]: ...


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
        return slot_factory(self._specs, self.plan.settings, self.plan.config.blue, self.plan.out / "logs")

    def battle_fn(self) -> BattleFn:
        return battle_fn(self.plan.config)

    def nodes(self) -> list[RunNode]:
        return [RunNode(executor="local", node_id="local", address="127.0.0.1", hostname=socket.gethostname())]


def open_executor(kind: ExecutorKind, plan: ExecutorPlan) -> Executor:
    """The executor of that kind (not yet entered)."""
    if kind == "ray":
        from green_agent.batch.ray_executor import RayExecutor

        return RayExecutor(plan)
    return LocalExecutor(plan)
