"""The real parts the batch runner drives: world slots with their Blue, and one battle on them.

A live slot is a `WorldSlot` (APIs server + env server + MCP gateway, started and owned by us) plus
the Blue under test (a built-in Blue started beside it, or an A2A URL), with a per-slot copy of the
settings whose gateway call log is `<run>/logs/mcp-calls-<slot>.jsonl` (a small file per slot, so the
archive step's per-battle filter stays cheap). One battle is the core's `run_on_slot`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
from pydantic import ValidationError

from green_agent.batch.checkpoint import BattleKey
from green_agent.engine.config import BattleChoices
from green_agent.local_battle import open_blue, run_on_slot
from kernel.errors import BadInputError, InfrastructureError, SlotBusyError
from green_agent.models.eval_run import RunConfig
from green_agent.models.result import BattleResult
from kernel.ports import port_is_free
from kernel.settings import MAX_SLOTS, Settings
from kernel.task_ids import TaskRef
from green_agent.runtime.slot import SLOT_LOCK_DIR, SlotLock, SlotSpec, SlotUrls, WorldSlot, slot_key

RESUME_PORT_WAIT_S = 10.0
"""How long a `--resume` waits for its slot's ports (a killed run's reaper ends its servers within ~4 s)."""

BLUES_WITHOUT_GATEWAY = ("reference", "reference-retry", "reference-reckless", "reference-careful", "instruction-bound",
                         "noop")
"""Built-in Blues that learn the gateway URL from the task message, so they can start before the slot."""


@dataclass(frozen=True)
class SlotEnv:
    """What a battle needs from a running slot."""

    urls: SlotUrls
    blue_url: str
    settings: Settings


def parse_slot_ports(text: str) -> list[SlotSpec]:
    """`ENV:APIS:GW[,ENV:APIS:GW...]` -> explicit slot specs (tests use free ports this way)."""
    specs = []
    for part in text.split(","):
        try:
            env, apis, gateway = (int(p) for p in part.strip().split(":"))
        except ValueError:
            raise BadInputError(f"--slot-ports expects ENV:APIS:GATEWAY[,...] port triples, got {part!r}") from None
        try:
            specs.append(SlotSpec(env_port=env, apis_port=apis, gateway_port=gateway))
        except ValidationError as exc:
            raise BadInputError(f"--slot-ports {part.strip()!r}: {exc.errors()[0]['msg']}") from None
    return specs


def choose_slots(workers: int, first: int = 0, exact: bool = False,
                 wait_s: float = RESUME_PORT_WAIT_S, lock_dir: Path = SLOT_LOCK_DIR) -> list[SlotSpec]:
    """The first `workers` slot indices >= `first` that are free: three free ports and no slot lock held
    (a slot another run's battle holds in `lock_dir` would fail every battle put on it with SlotBusyError).

    `exact` (a `--resume`): slots `first`..`first + workers - 1` and no others; a busy one (ports or lock)
    is waited for up to `wait_s` (a killed run's slot reaper is still ending its servers), then refused
    with `SlotBusyError` naming its ports and what holds them, instead of moving to the next free slot."""
    if not 0 <= first or first + workers > MAX_SLOTS:
        raise BadInputError(f"--first-slot {first} with --workers {workers} needs slots {first}..{first + workers - 1}, "
                            f"but slots are numbered 0..{MAX_SLOTS - 1}: lower --first-slot, or give explicit "
                            "ports with --slot-ports ENV:APIS:GATEWAY[,...]")
    if exact:
        return [_free_or_refused(SlotSpec.for_index(index), wait_s, lock_dir) for index in range(first, first + workers)]
    chosen = []
    for index in range(first, MAX_SLOTS):
        spec = SlotSpec.for_index(index)
        if not _busy_ports(spec) and not _lock_of(spec, lock_dir).is_held():
            chosen.append(spec)
        if len(chosen) == workers:
            return chosen
    raise InfrastructureError(f"only {len(chosen)} of slots {first}..{MAX_SLOTS - 1} are free (free ports, no other "
                              f"run's slot lock in {lock_dir}), {workers} needed: stop what holds ports "
                              "8000/9000/10000 + 10*k or wait for the other run, or use fewer --workers")


def _busy_ports(spec: SlotSpec) -> list[int]:
    return [p for p in (spec.env_port, spec.apis_port, spec.gateway_port) if not port_is_free(p)]


def _lock_of(spec: SlotSpec, lock_dir: Path) -> SlotLock:
    return SlotLock(lock_dir, slot_key(spec.urls().env_url))  # the key a WorldSlot on `spec` locks


def _free_or_refused(spec: SlotSpec, wait_s: float, lock_dir: Path) -> SlotSpec:
    lock = _lock_of(spec, lock_dir)
    deadline = time.monotonic() + wait_s
    while (busy := _busy_ports(spec)) or lock.is_held():
        if time.monotonic() >= deadline:
            held_by = (f"port(s) {', '.join(map(str, busy))} held by {_holders(busy)}" if busy
                       else f"its lock {lock.path} held by another run's battle")
            raise SlotBusyError(f"--resume: slot {spec.index} is busy ({held_by}); it may be the interrupted "
                                "run's own servers: stop them, or resume on other slots with --first-slot")
        time.sleep(0.2)
    return spec


def _holders(ports: list[int]) -> str:
    """`pid N (name)` of the processes listening on `ports`, as far as this user may see them."""
    found = set()
    try:
        for conn in psutil.net_connections(kind="inet"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port in ports and conn.pid:
                try:
                    found.add(f"pid {conn.pid} ({psutil.Process(conn.pid).name()})")
                except psutil.Error:
                    found.add(f"pid {conn.pid}")
    except (psutil.Error, OSError):
        pass
    return ", ".join(sorted(found)) or "another process"


def slot_label(spec: SlotSpec) -> str:
    return f"slot{spec.index}" if spec.index is not None else f"port{spec.env_port}"


def slot_factory(specs: list[SlotSpec], settings: Settings, blue: str, log_dir: Path,  # noqa: ANN201
                 code: bool = False):
    """worker index -> context manager starting that worker's slot and Blue (see `SlotFactory`); `code`: the run
    is in code mode, so each slot's gateway readies its spare REPLs while the slot starts."""

    @contextmanager
    def start(index: int) -> Iterator[SlotEnv]:
        spec = specs[index]
        label = slot_label(spec)
        slot_settings = settings.model_copy(update={"agentbeats_mcp_log_path": log_dir / f"mcp-calls-{label}.jsonl"})
        slot_logs = log_dir / label
        world = WorldSlot(spec, appworld_root=settings.appworld_root, appworld_python=settings.appworld_python,
                          launch=settings.appworld_server_launch,
                          log_dir=slot_logs, mcp_log_path=slot_settings.agentbeats_mcp_log_path,
                          lock_dir=SLOT_LOCK_DIR, code_spares_at_start=code)
        with ExitStack() as stack:
            if blue in BLUES_WITHOUT_GATEWAY:  # start the Blue while the world starts (it needs no slot URL)
                blue_stack = stack.enter_context(ExitStack())
                with ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"blue-{label}") as pool:
                    starting = open_blue(blue, slot_settings, world.urls, slot_logs)
                    pending = pool.submit(blue_stack.enter_context, starting)
                    stack.enter_context(world)
                    blue_url = pending.result()
            else:
                stack.enter_context(world)
                blue_url = stack.enter_context(open_blue(blue, slot_settings, world.urls, slot_logs))
            yield SlotEnv(urls=world.urls, blue_url=blue_url, settings=slot_settings)

    return start


def battle_fn(config: RunConfig):  # noqa: ANN201
    """(key, SlotEnv, dir, battle id) -> BattleResult: one battle on a live slot (see `BattleFn`).

    Every battle of the run has the same choices (the run's config, defaults already filled) and carries
    its task as a resolved `TaskRef`; the battle id and run directory are passed once, to `run_on_slot`."""
    choices = BattleChoices(blue=config.blue, predictor=config.predictor, scope_policy=config.scope_policy,
                            interaction=config.interaction, deadline_s=config.deadline_s, faults=config.faults,
                            paraphrase=config.paraphrase)

    def run(key: BattleKey, env: SlotEnv, directory: Path, battle_id: str) -> BattleResult:
        task = TaskRef(task_id=key.task_id, source="id")  # the builder checked every id against the world
        return run_on_slot(task, choices, env.settings, env.urls, env.blue_url, directory, battle_id, trial=key.trial)

    return run
