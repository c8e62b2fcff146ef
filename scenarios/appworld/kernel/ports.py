"""Loopback ports: is one free, and a fresh one (the Green, the gateway and the tests all ask).

`free_port` asks the kernel for an ephemeral port, unless the process tree was given a port band
(`PORT_BAND_ENV`, `LOW-HIGH`): then it draws free ports of that band only. Two process trees that
each ask the kernel can be handed one port between a `free_port` and its server's bind (an AppWorld
server binds seconds later); two trees on disjoint bands cannot. The test suite gives each of its
pytest-xdist workers a band of its own (tests/conftest.py); nothing else sets one.
"""

from __future__ import annotations

import collections
import os
import random
import socket
import threading
from collections.abc import Collection
from typing import NamedTuple

from kernel.errors import InfrastructureError

PORT_BAND_ENV = "APPWORLD_GREEN_PORT_BAND"
"""`LOW-HIGH` (inclusive): the only ports `free_port` hands out in this process and its children. Unset: the
kernel's ephemeral ports. It is plumbing between a parent and its children (as the slot reaper's tag is),
not a setting a user makes."""


class PortBand(NamedTuple):
    """An inclusive range of ports."""

    low: int
    high: int


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True if nothing listens on host:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def port_band() -> PortBand | None:
    """This process's port band (`PORT_BAND_ENV`), or None; a malformed one is an error, never ignored."""
    text = os.environ.get(PORT_BAND_ENV, "").strip()
    if not text:
        return None
    try:
        low, high = (int(part) for part in text.split("-"))
    except ValueError:
        raise InfrastructureError(f"{PORT_BAND_ENV}={text!r} is not LOW-HIGH (two port numbers)") from None
    if not 1024 <= low <= high <= 65535:
        raise InfrastructureError(f"{PORT_BAND_ENV}={text!r}: need 1024 <= LOW <= HIGH <= 65535")
    return PortBand(low, high)


_RECENT_PORTS: collections.deque[int] = collections.deque(maxlen=1024)
"""Ports `free_port` returned lately in this process: the kernel may offer a just-released port again,
and a caller asking for three ports in a row (one slot) would then start two servers on one port.
Bounded: a port handed out 1024 calls ago is bound by its server by now, or was abandoned."""
_RECENT_PORTS_LOCK = threading.Lock()
_BAND_RANDOM = random.SystemRandom()
"""Not the `random` module's shared generator: a test that seeds that one must not make two processes draw alike."""


def free_port(host: str = "127.0.0.1", avoid: Collection[int] = ()) -> int:
    """A port that is free right now, not among the last 1024 this process handed out, and not in `avoid`
    (ports promised to servers that may not be listening yet, e.g. a slot's): the kernel's ephemeral
    choice, or one of this process's port band (see the module docstring)."""
    band = port_band()
    with _RECENT_PORTS_LOCK:
        for _ in range(1000):
            port = _from_band(band, host) if band else _from_kernel(host)
            if port is not None and port not in _RECENT_PORTS and port not in avoid:
                _RECENT_PORTS.append(port)
                return port
    where = f"port band {band.low}-{band.high}" if band else "ephemeral port"
    raise InfrastructureError(f"no fresh {where} on {host} after 1000 tries")


def _from_kernel(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _from_band(band: PortBand, host: str) -> int | None:
    port = _BAND_RANDOM.randint(band.low, band.high)
    return port if port_is_free(port, host) else None
