"""`world up` / `world down`: long-running world slots that outlive the CLI that started them.

`start_slots(n)` starts slots 0..n-1 (APIs server + env server + MCP gateway each, on 127.0.0.1),
waits until every server answers and records each process in a state file, so that
`stop_slots()` stops exactly those processes later (a PID is only signalled while its command
line still is the one we started: a recycled PID is never killed). If anything fails, or the
user interrupts start-up, every process already started is stopped before the error propagates.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import psutil
from pydantic import BaseModel, Field

from kernel.atomic import atomic_write_text
from kernel.errors import InfrastructureError
from green_agent.runtime.processes import stop_process_group
from kernel.settings import MAX_SLOTS, Settings
from green_agent.runtime.slot import SlotSpec, SlotUrls, WorldSlot
from kernel.slot_credentials import port_of, remove_credentials

STATE_FILE_NAME = "world-slots.json"


class RecordedProcess(BaseModel):
    """One process `world up` started."""

    name: str = Field(description="Human name (server and port).")
    pid: int = Field(description="Process id (also its process-group id).")
    cmdline: list[str] = Field(description="Command line at start, to recognise the process later.")


class RunningSlot(BaseModel):
    """One slot started by `world up`."""

    index: int = Field(description="Slot number.")
    urls: SlotUrls = Field(description="Where its servers answer.")
    processes: list[RecordedProcess] = Field(description="Its processes.")


class WorldState(BaseModel):
    """The state file of `world up`."""

    started_at: datetime = Field(description="When `world up` finished starting (UTC).")
    appworld_root: str = Field(description="The world served.")
    slots: list[RunningSlot] = Field(default_factory=list, description="Running slots.")


def state_path(settings: Settings) -> Path:
    return settings.runs_dir / STATE_FILE_NAME


def start_slots(settings: Settings, count: int, log_dir: Path | None = None) -> WorldState:
    """Start `count` slots and record them; stop all of them if any fails or start-up is interrupted."""
    if not 1 <= count <= MAX_SLOTS:
        raise InfrastructureError(f"--slots must be between 1 and {MAX_SLOTS}, not {count}")
    if state_path(settings).is_file() and _live_slots(read_state(settings)):
        raise InfrastructureError(f"world slots are already up (see {state_path(settings)}); run `appworld-green world down` first")
    log_dir = log_dir or settings.runs_dir / "world-logs"
    started: list[WorldSlot] = []
    try:
        for index in range(count):
            slot = WorldSlot(SlotSpec.for_index(index), appworld_root=settings.appworld_root,
                             appworld_python=settings.appworld_python, log_dir=log_dir,
                             mcp_log_path=settings.agentbeats_mcp_log_path,
                             lock_dir=settings.runs_dir / ".world-up-locks" / str(os.getpid()),
                             launch="exec")  # they outlive us and `world down` checks their command lines
            started.append(slot)
            slot.start_unlocked()
        state = WorldState(started_at=datetime.now(timezone.utc), appworld_root=str(settings.appworld_root),
                           slots=[_record(i, slot) for i, slot in enumerate(started)])
        _write_state(settings, state)
        return state
    except BaseException:
        for slot in reversed(started):
            slot.stop()
        raise


def stop_slots(settings: Settings) -> list[str]:
    """Stop every process recorded by `world up`; return what was stopped. No state: nothing to do."""
    path = state_path(settings)
    if not path.is_file():
        return []
    stopped = []
    for slot in read_state(settings).slots:
        for process in reversed(slot.processes):
            if _is_same_process(process):
                stop_process_group(process.pid)
                stopped.append(f"{process.name} (pid {process.pid})")
        remove_credentials(port_of(slot.urls.apis_url))
    path.unlink(missing_ok=True)
    return stopped


def read_state(settings: Settings) -> WorldState:
    return WorldState.model_validate_json(state_path(settings).read_text())


def _record(index: int, slot: WorldSlot) -> RunningSlot:
    processes = [p for p in (slot.servers.apis if slot.servers else None, slot.servers.environment if slot.servers else None,
                             slot.gateway) if p is not None and p.pid is not None]
    return RunningSlot(index=index, urls=slot.urls, processes=[
        RecordedProcess(name=p.name, pid=p.pid, cmdline=p.argv) for p in processes])


def _write_state(settings: Settings, state: WorldState) -> None:
    atomic_write_text(state_path(settings), json.dumps(state.model_dump(mode="json"), indent=2))


def _is_same_process(process: RecordedProcess) -> bool:
    """True while `pid` still runs the command we started (guards against PID reuse)."""
    try:
        cmdline = psutil.Process(process.pid).cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
    return cmdline[-len(process.cmdline[1:]):] == process.cmdline[1:] if process.cmdline[1:] else False


def _live_slots(state: WorldState) -> list[RunningSlot]:
    return [slot for slot in state.slots if any(_is_same_process(p) for p in slot.processes)]
