"""A participant URL must not name one of our own services: the Green connects only to the purple.

`refuse_own_services(url, role, slot_specs)` raises `RequestError` before an assessment starts when `url`'s
host is this machine (a loopback, unspecified or local interface address, or a name resolving to one) and
its port is ours: a port this process or any process it started listens on (the assessment server, world
slots, gateways and their control listeners, the bridge), or a port of the world slots the server is
configured to use (they start later, per assessment). Else the bridge would post the purple's turns to
our own gateway or to `serve` itself, and their answers would become "the purple's reply".
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

import psutil

from green_agent.a2a.request import RequestError
from green_agent.runtime.slot import SlotSpec
from kernel.settings import MAX_SLOTS

DEFAULT_PORTS = {"http": 80, "https": 443}


def refuse_own_services(url: str, role: str, slot_specs: Iterable[SlotSpec] | None) -> None:
    """Raise RequestError if `url` names one of our services on this host (see the module docstring)."""
    parts = urlsplit(url)
    port = parts.port or DEFAULT_PORTS.get(parts.scheme, 0)
    if not parts.hostname or not _is_this_host(parts.hostname):
        return
    if port in own_ports(slot_specs):
        raise RequestError(f"participants.{role} names port {port} of this host, which is one of the Green's own "
                           "services: give the URL of the agent under test")


def own_ports(slot_specs: Iterable[SlotSpec] | None) -> set[int]:
    """Ports our process tree listens on, and every port of the configured world slots."""
    specs = list(slot_specs) if slot_specs else [SlotSpec.for_index(i) for i in range(MAX_SLOTS)]
    ports = {p for spec in specs for p in (spec.env_port, spec.apis_port, spec.gateway_port)}
    me = psutil.Process(os.getpid())
    for process in [me, *me.children(recursive=True)]:
        try:
            ports.update(c.laddr.port for c in process.net_connections(kind="inet")
                         if c.status == psutil.CONN_LISTEN and c.laddr)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return ports


def _is_this_host(hostname: str) -> bool:
    try:
        infos = socket.getaddrinfo(hostname, None)
    except (socket.gaierror, UnicodeError):
        return False  # it cannot be reached at all: the card check says so
    local = {address.address.split("%")[0] for addresses in psutil.net_if_addrs().values() for address in addresses}
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if address.is_loopback or address.is_unspecified or str(address) in local:
            return True
    return False
