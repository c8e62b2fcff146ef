"""Loopback ports: is one free, and a fresh ephemeral one (the Green, the gateway and the tests all ask)."""

from __future__ import annotations

import collections
import socket
import threading
from collections.abc import Collection

from kernel.errors import InfrastructureError


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True if nothing listens on host:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


_RECENT_PORTS: collections.deque[int] = collections.deque(maxlen=1024)
"""Ports `free_port` returned lately in this process: the kernel may offer a just-released port again,
and a caller asking for three ports in a row (one slot) would then start two servers on one port.
Bounded: a port handed out 1024 calls ago is bound by its server by now, or was abandoned."""
_RECENT_PORTS_LOCK = threading.Lock()


def free_port(host: str = "127.0.0.1", avoid: Collection[int] = ()) -> int:
    """An ephemeral port that is free right now, not among the last 1024 this process handed out, and
    not in `avoid` (ports promised to servers that may not be listening yet, e.g. a slot's)."""
    with _RECENT_PORTS_LOCK:
        for _ in range(1000):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.bind((host, 0))
                port = sock.getsockname()[1]
            if port not in _RECENT_PORTS and port not in avoid:
                _RECENT_PORTS.append(port)
                return port
    raise InfrastructureError(f"no fresh ephemeral port on {host} after 1000 tries")
