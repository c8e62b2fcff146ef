"""World slots: one APIs server + env server + MCP gateway per concurrent battle.

Slot k listens on base port + k * SLOT_PORT_STRIDE (slot 0 = 8000 / 9000 / 10000, the seed's ports),
or on explicit ports (tests use free ones). A `SlotLock` (an `fcntl` lock on a file named after the
slot's env server's resolved address and port, in the machine-wide `SLOT_LOCK_DIR`; every loopback
spelling is one key) makes sure two battles never use one slot at
once, whoever started its servers and whatever their runs directories.

`WorldSlot` owns its processes (start, always stop); `WorldSlot.attach(urls)` wraps servers that are
already running (`world up`) without owning them. An owned slot creates the slot's credentials
(`kernel.slot_credentials`) before anything starts and removes them when it stops.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from pathlib import Path
from types import TracebackType
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, model_validator

from green_agent.runtime.appworld_servers import AppWorldServers, AppWorldServerSpec
from kernel.errors import InfrastructureError, SlotBusyError
from kernel.file_lock import release, try_lock
from green_agent.runtime.processes import ManagedProcess
from kernel.ports import port_is_free
from kernel.settings import DEFAULT_APIS_PORT, DEFAULT_ENV_PORT, DEFAULT_GATEWAY_PORT, MAX_SLOTS, SLOT_PORT_STRIDE
from kernel.slot_credentials import PRIVATE_DIR, SlotCredentials, remove_credentials, save_credentials

GATEWAY_READY_TIMEOUT_S = 60.0
SLOT_LOCK_DIR = PRIVATE_DIR / "slot-locks"
"""Machine-wide (per user), not per runs dir: two battles with different RUNS_DIR still see each other's lock."""


class SlotUrls(BaseModel):
    """Where one slot's servers answer."""

    env_url: str = Field(description="AppWorld environment server.")
    apis_url: str = Field(description="AppWorld APIs server.")
    gateway_url: str | None = Field(default=None, description="MCP gateway (None: run without one, tests only).")

    def ports(self) -> set[int]:
        """The ports these URLs name (to keep other servers off them)."""
        return {port for url in (self.env_url, self.apis_url, self.gateway_url)
                if url and (port := urlsplit(url).port) is not None}


class SlotSpec(BaseModel):
    """Ports of one world slot."""

    index: int | None = Field(default=None, description="Slot number, or None for explicit ports.")
    env_port: int = Field(description="Environment server port.")
    apis_port: int = Field(description="APIs server port.")
    gateway_port: int = Field(description="MCP gateway port.")
    gateway_host: str = Field(default="127.0.0.1", description=(
        "Address the gateway's Blue-facing listener binds to and is named by (a Blue on another host needs "
        "a reachable one; the control listener stays on loopback)."))

    @model_validator(mode="after")
    def _ports_are_distinct(self) -> "SlotSpec":
        ports = {"env": self.env_port, "apis": self.apis_port, "gateway": self.gateway_port}
        if len(set(ports.values())) < len(ports):
            raise ValueError(f"a slot needs three different ports, got {ports}")
        return self

    @classmethod
    def for_index(cls, index: int) -> "SlotSpec":
        if not 0 <= index < MAX_SLOTS:
            raise InfrastructureError(f"slot {index} is out of range: use 0..{MAX_SLOTS - 1}")
        offset = index * SLOT_PORT_STRIDE
        return cls(index=index, env_port=DEFAULT_ENV_PORT + offset, apis_port=DEFAULT_APIS_PORT + offset,
                   gateway_port=DEFAULT_GATEWAY_PORT + offset)

    def urls(self, with_gateway: bool = True) -> SlotUrls:
        """The slot's URLs on loopback (the gateway's on `gateway_host`)."""
        return SlotUrls(env_url=f"http://127.0.0.1:{self.env_port}", apis_url=f"http://127.0.0.1:{self.apis_port}",
                        gateway_url=f"http://{self.gateway_host}:{self.gateway_port}" if with_gateway else None)


class SlotLock:
    """An exclusive, non-blocking lock on one slot (released on close or process exit)."""

    def __init__(self, lock_dir: Path, key: str) -> None:
        self.path = Path(lock_dir) / f"slot-{key}.lock"
        self._fd: int | None = None

    def acquire(self) -> "SlotLock":
        fd = try_lock(self.path)
        if fd is None:
            raise SlotBusyError(f"world slot {self.path.stem} is running another battle (lock {self.path}); "
                                "wait for it or use another --slot")
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            release(self._fd)
            self._fd = None

    def is_held(self) -> bool:
        """Whether someone (another process, or another lock in this one) holds this slot's lock right now.

        A snapshot for choosing slots: the lock is tried and at once released, so it may be taken just after."""
        if self._fd is not None:
            return True
        fd = try_lock(self.path)
        if fd is None:
            return True
        release(fd)
        return False


LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")


def resolved_host(host: str) -> str:
    """The address a host name stands for: `loopback` for any loopback name or address, else its first IP.

    A name that does not resolve is kept as written (lower case): it names no reachable slot anyway.
    """
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return "loopback"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        try:
            address = ipaddress.ip_address(socket.getaddrinfo(host, None)[0][4][0])
        except (OSError, ValueError, IndexError):
            return host
    return "loopback" if address.is_loopback else address.compressed


def slot_key(env_url: str) -> str:
    """Lock key of a slot: its env server's resolved address and port, filesystem-safe.

    `http://localhost:8060`, `http://127.0.0.1:8060` and `http://[::1]:8060` are one slot (`loopback-8060`).
    """
    parts = urlsplit(env_url if "://" in env_url else f"http://{env_url}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        port = 0
    host = resolved_host(parts.hostname or "")
    return "".join(c if c.isalnum() else "-" for c in f"{host}-{port}").strip("-")


class WorldSlot:
    """Context manager: lock the slot, start (or attach to) its servers, always stop what it started."""

    def __init__(self, spec: SlotSpec | None, *, appworld_root: Path, appworld_python: Path, log_dir: Path,
                 mcp_log_path: Path, lock_dir: Path, with_gateway: bool = True, urls: SlotUrls | None = None,
                 launch: Literal["fork", "exec"] = "fork", code_spares_at_start: bool = False) -> None:
        """`code_spares_at_start`: a code-mode run's slot; its gateway spawns its spare REPLs as it starts."""
        self.spec = spec
        self.owned = spec is not None
        self.urls = urls if urls is not None else spec.urls(with_gateway)  # type: ignore[union-attr]
        self.lock = SlotLock(lock_dir, slot_key(self.urls.env_url))
        self.servers: AppWorldServers | None = None
        self.gateway: ManagedProcess | None = None
        self.credentials: SlotCredentials | None = None
        if spec is not None:
            self.credentials = SlotCredentials()
            self.servers = AppWorldServers(AppWorldServerSpec(
                appworld_root=appworld_root, appworld_python=appworld_python, env_port=spec.env_port,
                apis_port=spec.apis_port, log_dir=log_dir, launch=launch, credentials=self.credentials))
            if with_gateway:
                self.gateway = ManagedProcess(
                    f"MCP gateway :{spec.gateway_port}",
                    [str(Path(sys.executable).parent / "appworld-green"), "mcp", "--remote-apis-url", self.urls.apis_url,
                     "--host", spec.gateway_host, "--port", str(spec.gateway_port), "--log-path", str(mcp_log_path),
                     "--appworld-root", str(appworld_root)]
                    + (["--code-spares-at-start"] if code_spares_at_start else []),
                    log_dir / f"gateway-{spec.gateway_port}.log")

    @classmethod
    def attach(cls, urls: SlotUrls, *, lock_dir: Path) -> "WorldSlot":
        """A slot whose servers someone else runs: locked while used, never started or stopped by us."""
        return cls(None, appworld_root=Path("."), appworld_python=Path("."), log_dir=Path("."),
                   mcp_log_path=Path("."), lock_dir=lock_dir, urls=urls)

    def start(self) -> "WorldSlot":
        self.lock.acquire()
        try:
            if self.owned:
                self._start_processes()
        except BaseException:
            self.stop()
            raise
        return self

    def start_unlocked(self) -> "WorldSlot":
        """Start this slot's processes without the battle lock (`world up` serves slots; battles lock them)."""
        try:
            self._start_processes()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_processes(self) -> None:
        assert self.spec is not None and self.servers is not None
        busy = [p for p in (self.spec.env_port, self.spec.apis_port, self.spec.gateway_port)
                if (p != self.spec.gateway_port or self.gateway) and not port_is_free(p)]
        if busy:
            raise InfrastructureError(f"port(s) {', '.join(map(str, busy))} on 127.0.0.1 already in use: "
                                      "stop what holds them, attach with --env-url/--apis-url/--gateway-url, "
                                      "or pick another --slot")
        save_credentials(self.spec.apis_port, self.credentials)  # before the gateway: it reads them at start
        if self.gateway is not None:
            self.gateway.start()  # starts in parallel with the AppWorld servers; it needs only the docs on disk
        self.servers.start()
        if self.gateway is not None:
            self.gateway.wait_ready(f"{self.urls.gateway_url}/health", timeout_s=GATEWAY_READY_TIMEOUT_S)

    def stop(self) -> None:
        """Stop what we started (gateway first), then release the lock. Safe to call twice."""
        try:
            if self.gateway is not None:
                self.gateway.stop()
            if self.servers is not None:
                self.servers.stop()
            if self.spec is not None:
                remove_credentials(self.spec.apis_port)
        finally:
            self.lock.release()

    def __enter__(self) -> "WorldSlot":
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
