"""Ray clusters for tests, each in a network namespace of its own whose only interface is `lo`.

This machine allows network traffic to loopback only, and Ray binds to the machine's interface
address: in a fresh namespace (`unshare --net`, then `ip link set lo up`) it uses 127.0.0.1. The
namespace lives as long as its holder process (`tests/ray_cluster_holder.py`); commands run in it
with `nsenter --net=/proc/<holder>/ns/net`. On exit the cluster is shut down and every process still
in the namespace (all of them ours: nothing else can enter it) is killed by pid and reported, so a
test that leaks a raylet, a GCS or an AppWorld server fails. Needs root, `unshare` and `nsenter`.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest

HOLDER = Path(__file__).with_name("ray_cluster_holder.py")
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 90.0
CLI = str(Path(sys.executable).parent / "appworld-green")


def require_namespaces() -> None:
    """Skip unless this process may create network namespaces."""
    if os.geteuid() != 0 or not (shutil.which("unshare") and shutil.which("nsenter") and shutil.which("ip")):
        pytest.skip("Ray tests run in a private network namespace: they need root, unshare, nsenter and ip")


def in_namespace(inode: int) -> list[psutil.Process]:
    """Live processes whose network namespace is `inode`."""
    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if os.stat(f"/proc/{proc.pid}/ns/net").st_ino == inode:
                found.append(proc)
        except OSError:
            continue
    return found


def describe(procs: list[psutil.Process]) -> list[str]:
    out = []
    for proc in procs:
        try:
            out.append(f"{proc.pid} {' '.join(proc.cmdline())[:120]}")
        except psutil.Error:
            continue
    return out


class NetnsCluster:
    """A running cluster: its address and a way to run commands beside it."""

    def __init__(self, holder: subprocess.Popen, address: str) -> None:
        self.holder, self.address = holder, address
        self.inode = os.stat(f"/proc/{holder.pid}/ns/net").st_ino

    def argv(self, argv: list[str]) -> list[str]:
        return ["nsenter", f"--net=/proc/{self.holder.pid}/ns/net", "--", *argv]

    def run(self, argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(argv), **kwargs)

    def popen(self, argv: list[str], **kwargs: Any) -> subprocess.Popen:
        return subprocess.Popen(self.argv(argv), **kwargs)

    def processes(self) -> list[psutil.Process]:
        return [p for p in in_namespace(self.inode) if p.pid != self.holder.pid]

    def slot_actors(self) -> list[psutil.Process]:
        """Ray worker processes that hold a slot actor (Ray titles them `ray::SlotActor...`)."""
        found = []
        for proc in self.processes():
            try:
                if " ".join(proc.cmdline()).startswith("ray::SlotActor"):
                    found.append(proc)
            except psutil.Error:
                continue
        return found


@contextmanager
def netns_cluster(nodes: int = 2, slots_per_node: int = 1, env: dict[str, str] | None = None) -> Iterator[NetnsCluster]:
    """Start a cluster in a fresh namespace; shut it down and check that nothing is left (see the module docstring)."""
    require_namespaces()
    holder = subprocess.Popen(
        ["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "holder", sys.executable, str(HOLDER),
         str(nodes), str(slots_per_node)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env or dict(os.environ))
    inode = None
    try:
        inode = _namespace_of(holder)
        cluster = NetnsCluster(holder, _read_address(holder))
        yield cluster
    finally:
        leftovers = _stop(holder, inode)
    assert not leftovers, f"processes left in the test's network namespace (killed): {leftovers}"


def _namespace_of(holder: subprocess.Popen) -> int:
    own = os.stat("/proc/self/ns/net").st_ino
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # `unshare` has replaced itself by the holder once the inode differs
        inode = os.stat(f"/proc/{holder.pid}/ns/net").st_ino
        if inode != own:
            return inode
        time.sleep(0.05)
    raise RuntimeError("the cluster holder never entered its own network namespace")


def _read_address(holder: subprocess.Popen) -> str:
    selector = selectors.DefaultSelector()
    selector.register(holder.stdout, selectors.EVENT_READ)
    if not selector.select(timeout=START_TIMEOUT_S):
        raise RuntimeError(f"the Ray cluster did not start within {START_TIMEOUT_S:.0f} s")
    line = holder.stdout.readline()
    if not line:
        raise RuntimeError(f"the cluster holder exited (code {holder.wait()}) before the cluster was up")
    return json.loads(line)["address"]


def _stop(holder: subprocess.Popen, inode: int | None) -> list[str]:
    """Shut the cluster down; kill (by pid) and return whatever is still in the namespace."""
    if holder.poll() is None:
        holder.stdin.close()
        try:
            holder.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()
    if inode is None:
        return []
    deadline = time.monotonic() + 15  # raylet workers exit a moment after the raylet
    while (left := in_namespace(inode)) and time.monotonic() < deadline:
        time.sleep(0.5)
    described = describe(left)
    for proc in left:
        try:
            proc.send_signal(signal.SIGKILL)
        except psutil.Error:
            continue
    return described
