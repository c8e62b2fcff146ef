"""What every executor shares: its kind, the plan it starts slots from, and the protocol it implements.

Declared apart from `green_agent.batch.executor` (the local pool and the chooser) so the Ray executor
can implement the protocol without importing the module that imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal, Protocol

from green_agent.batch.runner import BattleFn, SlotFactory
from green_agent.models.eval_run import RunConfig, RunNode
from green_agent.runtime.slot import SlotSpec
from kernel.settings import Settings

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
    """An executor, as `green_agent.batch.executor`'s docstring describes it."""

    kind: ExecutorKind

    def __enter__(self) -> "Executor": ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...

    def capacity(self) -> int:
        """How many slots can run at once (the runner uses at most this many workers)."""

    def slot_factory(self) -> SlotFactory: ...

    def battle_fn(self) -> BattleFn: ...

    def nodes(self) -> list[RunNode]: ...
