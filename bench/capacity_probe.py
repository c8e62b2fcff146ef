"""What one running eval's processes cost in memory, by world slot and role (bench_capacity.py's sampler).

Contract: `classify(eval_pid, slots)` walks the eval process's tree once and names every process by the
slot it belongs to and its role, from facts the processes show: a forked AppWorld server is a child of
the fork server and is told apart by the port it listens on; a gateway by the `--port` in its argv; a
REPL (code mode) is anything under a gateway. The Blue, the eval process itself and its reaper are not
part of a slot and are counted apart (`outside`). `pss_kib(pid)` reads /proc/PID/smaps_rollup (PSS:
private pages plus a share of every page shared with other processes), so summing it over processes
never counts a shared page twice. `Sampler` samples in a thread until stopped and keeps every sample.
"""

from __future__ import annotations

import threading
import time
from typing import NamedTuple

import psutil

SLOT_ROLES = ("apis", "environment", "gateway", "repl")


class SlotPorts(NamedTuple):
    """The three ports of one world slot (as passed to `eval --slot-ports`)."""

    env: int
    apis: int
    gateway: int


def pss_kib(pid: int) -> int:
    """PSS of `pid` in KiB from /proc/PID/smaps_rollup; 0 when the process is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return 0
    return 0


def _listening_ports(process: psutil.Process) -> set[int]:
    try:
        return {c.laddr.port for c in process.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN}
    except (psutil.Error, OSError):
        return set()


def _gateway_port(cmdline: list[str]) -> int | None:
    if "mcp" not in cmdline or "--port" not in cmdline:
        return None
    try:
        return int(cmdline[cmdline.index("--port") + 1])
    except (IndexError, ValueError):
        return None


def classify(eval_pid: int, slots: list[SlotPorts]) -> dict[int, tuple[str, str]]:
    """pid -> (owner, role): owner is "slot<i>", "machine" (the fork server) or "outside" (eval, Blue, reaper)."""
    by_port: dict[int, tuple[int, str]] = {}
    for index, ports in enumerate(slots):
        by_port.update({ports.env: (index, "environment"), ports.apis: (index, "apis"),
                        ports.gateway: (index, "gateway")})
    try:
        root = psutil.Process(eval_pid)
        processes = root.children(recursive=True)
    except psutil.Error:
        return {}
    names: dict[int, tuple[str, str]] = {eval_pid: ("outside", "eval")}
    gateways: dict[int, int] = {}
    for process in processes:
        try:
            cmdline = process.cmdline()
        except psutil.Error:
            continue
        port = _gateway_port(cmdline)
        if port in by_port:
            gateways[process.pid] = by_port[port][0]
            names[process.pid] = (f"slot{by_port[port][0]}", "gateway")
        elif any(part.endswith("serve.py") for part in cmdline):
            owned = [by_port[p] for p in _listening_ports(process) if p in by_port]
            names[process.pid] = (f"slot{owned[0][0]}", owned[0][1]) if owned else ("machine", "forkserver")
        elif any("blue_agent" in part for part in cmdline):
            names[process.pid] = ("outside", "blue")
    for process in processes:  # REPLs and their sandboxes: anything under a gateway
        if process.pid in names:
            continue
        try:
            ancestors = {parent.pid for parent in process.parents()}
        except psutil.Error:
            continue
        slot = next((index for pid, index in gateways.items() if pid in ancestors), None)
        names[process.pid] = (f"slot{slot}", "repl") if slot is not None else ("outside", "other")
    return names


class Sample(NamedTuple):
    """One sample: PSS (KiB) by (owner, role), and how many processes each has."""

    at_s: float
    pss_kib: dict[tuple[str, str], int]
    processes: dict[tuple[str, str], int]

    def slot_total_kib(self) -> int:
        """Every slot's processes plus the machine's fork server: what the slots cost together."""
        return sum(v for (owner, _), v in self.pss_kib.items() if owner != "outside")

    def slots_present(self) -> int:
        return len({owner for owner, role in self.pss_kib if owner.startswith("slot") and role == "gateway"})


def sample(eval_pid: int, slots: list[SlotPorts], started: float) -> Sample:
    pss: dict[tuple[str, str], int] = {}
    counts: dict[tuple[str, str], int] = {}
    for pid, key in classify(eval_pid, slots).items():
        pss[key] = pss.get(key, 0) + pss_kib(pid)
        counts[key] = counts.get(key, 0) + 1
    return Sample(time.monotonic() - started, pss, counts)


class Sampler(threading.Thread):
    """Samples the eval's processes every `interval_s` until `stop()`."""

    def __init__(self, eval_pid: int, slots: list[SlotPorts], interval_s: float) -> None:
        super().__init__(daemon=True, name="capacity-sampler")
        self.eval_pid, self.slots, self.interval_s = eval_pid, slots, interval_s
        self.samples: list[Sample] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        started = time.monotonic()
        while not self._stop_event.is_set():
            self.samples.append(sample(self.eval_pid, self.slots, started))
            self._stop_event.wait(self.interval_s)

    def stop(self) -> list[Sample]:
        self._stop_event.set()
        self.join(timeout=30)
        return self.samples
