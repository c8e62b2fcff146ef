"""HTTP sessions for the services a battle talks to.

Loopback services (the slot's AppWorld servers and gateway, a local Blue) get a session that ignores
proxy settings from the environment: an `HTTP_PROXY` without `NO_PROXY=127.0.0.1` would otherwise
send AppWorld calls to the proxy, and reading those variables costs about 0.5 ms per request (a
scan of `os.environ` inside requests), which was ~15 % of the Green's own time per battle. Other
hosts (a remote Blue, the AgentBeats backend) keep the environment's settings.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

import requests

LOOPBACK_NAMES = {"localhost"}


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def configure_for(session: requests.Session, url: str) -> requests.Session:
    """Set `session` up for `url` (see the module docstring) and return it."""
    session.trust_env = not is_loopback(url)
    return session


def session_for(url: str) -> requests.Session:
    """A new session set up for `url`."""
    return configure_for(requests.Session(), url)
