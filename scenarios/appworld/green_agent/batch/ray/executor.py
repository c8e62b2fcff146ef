"""The Ray executor: every world slot is a Ray actor on a cluster node; the driver keeps the run directory.

Contract (the interface is `green_agent.batch.executor.Executor`):
- Enter connects to the cluster at `plan.ray_address`, or starts a local Ray instance with `workers`
  units of the `appworld_slot` resource when no address is given; exit stops every slot actor and
  disconnects (and stops the local instance it started). A cluster with no `appworld_slot` resource
  is refused (`BadInputError`); its total caps the workers.
- A slot is one `SlotActor` (`green_agent.batch.ray.slot`) that needs one `appworld_slot` unit and no
  CPU, so Ray places it on a node that offers the resource; it owns that node's servers, gateway and
  built-in Blue for its lifetime and runs one battle at a time. The world check happens in its start.
- A battle is one actor call. Its shipment lands in the driver's battle directory: the evidence files
  first, then `result.json` (atomically, `run_dir` set to the driver's directory), so a driver killed
  mid-landing leaves no result and the battle is rerun by `--resume`; the battle's call-log lines are
  appended to `<out>/logs/mcp-calls-<slot>.jsonl`.
- Faults: actors have `max_restarts=0` and `max_task_retries=0`. Ray detects a dead actor or node and
  fails the call in flight (`SlotActorDiedError`); Ray never replays a battle (a replay would run it
  twice under one battle id). The runner records that attempt as an infra error and retries it under
  a new battle id on a fresh actor, which Ray places on any node with a free slot. What a dead actor
  had started is ended by its slot reaper (`green_agent.runtime.reaper`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

from green_agent.batch.checkpoint import BattleKey
from green_agent.batch.executor_plan import ExecutorKind, ExecutorPlan
from green_agent.batch.ray.slot import BattleShipment, NodeInfo, SlotActor, SlotJob, unpack_into
from green_agent.batch.runner import BattleFn, SlotFactory
from green_agent.batch.world_digest import world_digest
from kernel.errors import BadInputError, GreenError, InfrastructureError
from green_agent.models.eval_run import RunNode
from green_agent.models.result import BattleResult
from green_agent.models.result_assembly import write_result

log = logging.getLogger(__name__)

SLOT_RESOURCE = "appworld_slot"
"""The custom resource a node offers once per world slot it can hold (`ray start --resources`)."""
SLOT_START_TIMEOUT_S = 900.0
"""A slot's start: a world build on a fresh node (about a minute) plus AppWorld's imports."""
SLOT_STOP_TIMEOUT_S = 60.0
BATTLE_MARGIN_S = 600.0
"""Beyond the Blue's deadline: setup, scoping, evaluation, archive and shipping."""
RAY_NAMESPACE = "appworld-green"
RemoteSlot = ray.remote(SlotActor)


class SlotActorDiedError(InfrastructureError):
    """The slot actor (or its node) died while it held a battle."""


@dataclass(frozen=True)
class RaySlot:
    """A live slot actor, as the runner's battles see it."""

    actor: Any
    node: NodeInfo
    label: str


class RayExecutor:
    """See the module docstring."""

    kind: ExecutorKind = "ray"

    def __init__(self, plan: ExecutorPlan) -> None:
        self.plan = plan
        self._started_ray = False
        self._digest = ""
        self._nodes: list[RunNode] = []
        self._capacity = 0

    def __enter__(self) -> "RayExecutor":
        self._digest = world_digest(self.plan.settings.appworld_root)
        self._connect()
        try:
            self._capacity = int(ray.cluster_resources().get(SLOT_RESOURCE, 0))
            if self._capacity < 1:
                raise BadInputError(f"the Ray cluster at {self.plan.ray_address} has no node offering the "
                                    f"{SLOT_RESOURCE!r} resource: start each node with "
                                    f"`ray start ... --resources '{{\"{SLOT_RESOURCE}\": N}}'` (N slots per node)")
        except BaseException:
            self._disconnect()
            raise
        return self

    def _connect(self) -> None:
        options: dict[str, Any] = {"namespace": RAY_NAMESPACE, "include_dashboard": False, "log_to_driver": False}
        if self.plan.ray_address:
            ray.init(address=self.plan.ray_address, **options)
        else:
            os.environ.setdefault("RAY_worker_niceness", "0")  # the instance we start: slots at normal priority
            ray.init(resources={SLOT_RESOURCE: self.plan.workers}, num_cpus=os.cpu_count() or 1,
                     **options)
        self._started_ray = True

    def _disconnect(self) -> None:
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._disconnect()

    def capacity(self) -> int:
        return self._capacity

    def nodes(self) -> list[RunNode]:
        return list(self._nodes)

    def slot_factory(self) -> SlotFactory:
        @contextmanager
        def start(index: int) -> Iterator[RaySlot]:
            label = f"ray-slot{index}"
            job = SlotJob(settings=self.plan.settings, config=self.plan.config, label=label,
                          world_digest=self._digest)
            actor = RemoteSlot.options(resources={SLOT_RESOURCE: 1}, num_cpus=0, max_concurrency=2,
                                       max_restarts=0, max_task_retries=0).remote(job)
            try:
                node = _call(actor.start.remote(), SLOT_START_TIMEOUT_S, f"slot {label}: start")
                self._note(node)
                log.info("slot %s: actor on node %s", label, node.name())
                if node.niceness > 0:
                    log.warning("slot %s runs at niceness %d on node %s (Ray's default for workers): start that node "
                                "with RAY_worker_niceness=0 so battles do not yield to every other process",
                                label, node.niceness, node.name())
                yield RaySlot(actor=actor, node=node, label=label)
            finally:
                self._stop(actor, label)

        return start

    def _note(self, node: NodeInfo) -> None:
        record = RunNode(executor="ray", node_id=node.node_id, address=node.address, hostname=node.hostname)
        if record not in self._nodes:
            self._nodes.append(record)

    def _stop(self, actor: Any, label: str) -> None:
        """Stop the slot's servers (keeping their logs), then end the actor; never raises."""
        try:
            logs = ray.get(actor.stop.remote(), timeout=SLOT_STOP_TIMEOUT_S)
            unpack_into(logs, self.plan.out / "logs" / label)
        except Exception as exc:  # a dead actor has nothing left to stop; its raylet reaps the rest
            log.info("slot %s: stop: %s", label, type(exc).__name__)
        ray.kill(actor, no_restart=True)

    def battle_fn(self) -> BattleFn:
        timeout_s = self.plan.config.deadline_s + BATTLE_MARGIN_S
        calls_dir = self.plan.out / "logs"

        def run(key: BattleKey, slot: RaySlot, directory: Path, battle_id: str) -> BattleResult:
            shipment = _call(slot.actor.run_battle.remote(tuple(key), battle_id), timeout_s,
                             f"battle {battle_id} on node {slot.node.name()}")
            return land(shipment, directory, calls_dir / f"mcp-calls-{slot.label}.jsonl")

        return run


def land(shipment: BattleShipment, directory: Path, calls_log: Path) -> BattleResult:
    """Write a battle's shipment into the driver's run directory; `result.json` last (see the contract)."""
    unpack_into(shipment.files, directory)
    if shipment.calls:
        calls_log.parent.mkdir(parents=True, exist_ok=True)
        with open(calls_log, "ab") as handle:
            handle.write(shipment.calls)
    result = BattleResult.model_validate_json(shipment.result_json).model_copy(update={"run_dir": str(directory)})
    write_result(result, directory)
    return result


def _call(ref: Any, timeout_s: float, what: str) -> Any:
    """`ray.get` with our errors: the actor's own GreenError as is, a dead actor or node as SlotActorDiedError."""
    try:
        return ray.get(ref, timeout=timeout_s)
    except RayTaskError as exc:
        cause = exc.cause
        if isinstance(cause, GreenError):
            raise cause from None
        raise InfrastructureError(f"{what}: {type(cause).__name__}: {cause}") from None
    except RayActorError as exc:
        raise SlotActorDiedError(f"{what}: the slot actor died ({type(exc).__name__}); "
                                 "the battle is retried on a fresh slot") from None
    except GetTimeoutError:
        raise InfrastructureError(f"{what}: no answer within {timeout_s:.0f} s") from None
