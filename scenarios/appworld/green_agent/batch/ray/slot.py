"""One world slot as a Ray actor: its node's servers, gateway and Blue, one battle at a time.

Contract (the driver side is `green_agent.batch.ray.executor`):
- `SlotActor(job)` holds nothing until `start()`: that checks the node's world against the driver's
  digest (building it when missing, `green_agent.batch.world_digest`), then starts the local pool's
  own slot (`green_agent.batch.live.slot_factory`: AppWorld servers, MCP gateway and a built-in Blue)
  on free loopback ports of its node, and returns the node it landed on. The slot lives as long as
  the actor.
- `run_battle(key, battle_id)` runs the local pool's own battle (`green_agent.batch.live.battle_fn`)
  into a scratch directory on the node and returns a `BattleShipment`: the result, every other file
  of the battle directory (archive, call records) as a tar, and the lines this battle added to the
  slot's call log. The scratch directory is removed afterwards: the driver holds the only copy.
- `stop()` stops the slot (it may run while a battle does: the actor has two threads, so the battle
  ends quickly as an infra error, as in the local pool) and returns the slot's server logs as a tar.
- An actor that dies without `stop()` (killed, out of memory) leaves no process behind: its slot
  reaper (`green_agent.runtime.reaper`, started with the slot) ends what it had started.

Nothing here imports Ray at module level: `node_info` asks Ray only when running inside a Ray worker.
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import subprocess
import tarfile
import tempfile
import threading
from contextlib import ExitStack
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from green_agent.batch.checkpoint import RESULT_FILE, BattleKey
from green_agent.runtime.forkserver import shutdown_fork_servers
from green_agent.batch.live import SlotEnv, battle_fn, slot_factory
from green_agent.runtime.reaper import start_reaper
from green_agent.batch.world_digest import ensure_world
from green_agent.local_battle import BUILTIN_BLUES
from kernel.errors import InfrastructureError, SlotBusyError
from green_agent.models.eval_run import RunConfig
from kernel.ports import free_port
from kernel.settings import Settings
from green_agent.runtime.slot import SlotSpec

SLOT_START_TRIES = 3
"""Fresh ports are drawn again when another slot on the same host took them first."""


class SlotJob(BaseModel):
    """What the driver hands a slot actor."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    settings: Settings = Field(description="The driver's settings (the node's APPWORLD_ROOT / APPWORLD_PYTHON win).")
    config: RunConfig = Field(description="The run's config (Blue, predictor, policy, deadline).")
    label: str = Field(description="Slot name in logs (`ray-slot<k>`).")
    world_digest: str = Field(description="Digest of the driver's built world.")


class NodeInfo(BaseModel):
    """Where a slot actor runs."""

    node_id: str = Field(description="Ray's node id (`local` outside Ray).")
    address: str = Field(description="The node's IP address.")
    hostname: str = Field(description="The node's host name.")
    pid: int = Field(description="The actor's process id on that node.")
    world_root: str = Field(description="The world the slot serves on that node.")
    niceness: int = Field(default=0, description="The slot's scheduling niceness (Ray starts workers at 15).")

    def name(self) -> str:
        return f"{self.hostname} ({self.address}, ray node {self.node_id[:12]})"


class BattleShipment(BaseModel):
    """One battle's evidence, sent from the node back to the driver."""

    result_json: str = Field(description="The battle's result.json.")
    files: bytes = Field(description="tar of the battle directory without result.json.")
    calls: bytes = Field(description="Lines the battle added to the slot's call log.")


def node_info(world_root: Path) -> NodeInfo:
    """This process's node, as Ray sees it (or the host, outside a Ray worker)."""
    node_id, address = "local", "127.0.0.1"
    try:
        import ray

        if ray.is_initialized():
            node_id, address = ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address()
    except ImportError:
        pass
    return NodeInfo(node_id=node_id, address=address, hostname=socket.gethostname(), pid=os.getpid(),
                    world_root=str(world_root))


def normal_priority() -> int:
    """Undo Ray's worker niceness (15) for the calling thread, whose children (the slot's servers, gateway and
    Blue) inherit it: at 15 they lose the CPU to every ordinary process of a busy node and battles stretch.
    Lowering a niceness needs privilege (root or CAP_SYS_NICE; else start nodes with `RAY_worker_niceness=0`).
    Returns the niceness in force. Linux keeps a niceness per thread, hence the thread id."""
    thread = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, thread, 0)
    except OSError:
        pass
    return os.getpriority(os.PRIO_PROCESS, thread)


def node_settings(settings: Settings, environ: dict[str, str] | None = None) -> Settings:
    """The driver's settings with this node's own world and AppWorld Python, where the node sets them."""
    environ = os.environ if environ is None else environ
    update = {name: Path(environ[var]) for name, var in (("appworld_root", "APPWORLD_ROOT"),
                                                         ("appworld_python", "APPWORLD_PYTHON")) if environ.get(var)}
    return settings.model_copy(update=update)


def build_node_world(settings: Settings, root: Path) -> None:
    """Build the offline world into `root` with this node's AppWorld Python (deterministic)."""
    from green_agent.runtime.world_build import build_world

    build_world(settings, root=root)


class SlotActor:
    """A world slot owned by one actor; see the module docstring."""

    def __init__(self, job: SlotJob) -> None:
        self.job = job
        self.settings = node_settings(job.settings)
        self._stack: ExitStack | None = None
        self._env: SlotEnv | None = None
        self._home: Path | None = None
        self._log_offset = 0
        self._lock = threading.Lock()
        self._reaper: subprocess.Popen | None = None

    def start(self) -> NodeInfo:
        """Check (or build) the node's world, start the slot; the node it runs on."""
        node = node_info(self.settings.appworld_root).model_copy(update={"niceness": normal_priority()})
        ensure_world(self.settings.appworld_root, self.job.world_digest, node.name(),
                     lambda root: build_node_world(self.settings, root))
        with self._lock:
            self._home = Path(tempfile.mkdtemp(prefix=f"appworld-green-{self.job.label}-"))
            if self._reaper is None:
                self._reaper = start_reaper(os.getpid(), self._home)
            self._stack, self._env = self._start_slot(self._home / "logs", node)
        return node

    def _start_slot(self, log_dir: Path, node: NodeInfo) -> tuple[ExitStack, SlotEnv]:
        error: Exception | None = None
        # A built-in Blue runs beside the slot and reaches the gateway on loopback; a Blue given as a URL runs
        # elsewhere and is handed the node's address (its per-battle token is what guards the endpoint).
        gateway_host = "127.0.0.1" if self.job.config.blue in BUILTIN_BLUES else node.address
        for _ in range(SLOT_START_TRIES):
            env_port = free_port()
            apis_port = free_port(avoid={env_port})
            spec = SlotSpec(env_port=env_port, apis_port=apis_port, gateway_port=free_port(avoid={env_port, apis_port}),
                            gateway_host=gateway_host)
            stack = ExitStack()
            try:
                env = stack.enter_context(slot_factory([spec], self.settings, self.job.config.blue, log_dir,
                                                       code=self.job.config.interaction == "code")(0))
                return stack, env
            except (SlotBusyError, InfrastructureError) as exc:  # a port raced away: draw again
                stack.close()
                error = exc
                if not isinstance(exc, SlotBusyError) and "already in use" not in str(exc):
                    raise
        raise InfrastructureError(f"slot {self.job.label}: no free ports after {SLOT_START_TRIES} tries ({error})")

    def run_battle(self, key: tuple[str, int], battle_id: str) -> BattleShipment:
        """One battle on this slot (see the module docstring)."""
        env, home = self._env, self._home
        if env is None or home is None:
            raise InfrastructureError(f"slot {self.job.label} is not running")
        directory = home / "battles" / battle_id
        normal_priority()  # the Green's own steps of the battle run in this thread
        try:
            result = battle_fn(self.job.config)(BattleKey(*key), env, directory, battle_id)
            return BattleShipment(result_json=result.model_dump_json(), files=pack_dir(directory, skip={RESULT_FILE}),
                                  calls=self._new_calls(env.settings.agentbeats_mcp_log_path))
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def _new_calls(self, log_path: Path) -> bytes:
        """The call-log lines written since the previous battle."""
        try:
            with open(log_path, "rb") as handle:
                handle.seek(self._log_offset)
                data = handle.read()
        except FileNotFoundError:
            return b""
        complete = data[:data.rfind(b"\n") + 1]
        self._log_offset += len(complete)
        return complete

    def stop(self) -> bytes:
        """Stop the slot (safe twice, safe during a battle); its server logs as a tar."""
        with self._lock:
            stack, self._stack, self._env = self._stack, None, None
            home, self._home = self._home, None
        if stack is not None:
            stack.close()
        shutdown_fork_servers()  # the warm AppWorld process would outlive a worker that Ray kills
        if home is None:
            return b""
        try:
            return pack_dir(home / "logs", skip=_call_logs(home / "logs"))
        finally:
            shutil.rmtree(home, ignore_errors=True)

    def ping(self) -> int:
        """The actor's pid (tests and health checks)."""
        return os.getpid()


def pack_dir(directory: Path, skip: set[str] = frozenset()) -> bytes:  # type: ignore[assignment]
    """A gzip'd tar of `directory`'s files (paths relative to it), top-level names in `skip` left out."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        if directory.is_dir():
            for child in sorted(directory.iterdir()):
                if child.name not in skip:
                    archive.add(child, arcname=child.name)
    return buffer.getvalue()


def unpack_into(data: bytes, directory: Path) -> None:
    """Extract a `pack_dir` tar into `directory` (regular files and folders only, nothing outside it)."""
    if not data:
        return
    directory.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        archive.extractall(directory, filter="data")


def _call_logs(directory: Path) -> set[str]:
    """The slot's call logs: already shipped battle by battle."""
    return {p.name for p in directory.glob("mcp-calls-*.jsonl")} if directory.is_dir() else set()
