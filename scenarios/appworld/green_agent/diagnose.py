"""Name the dead service behind an infrastructure error.

When a battle step fails, the error we see is the symptom at the service we called: a dead
AppWorld APIs server shows up as the env server answering HTTP 500 (remote-APIs mode), a dead
gateway as a Blue that never finishes. `dead_services` probes every service of the slot once
(short timeout, any HTTP answer counts as alive) and `explain` puts the dead ones first in the
error message, so the user reads which server to restart.
"""

from __future__ import annotations

import requests

PROBE_TIMEOUT_S = 2.0


def probe(url: str, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """None if `url` answers (any status); else the transport error's class name."""
    try:
        requests.get(url, timeout=timeout_s)
    except requests.RequestException as exc:
        return type(exc).__name__
    return None


def dead_services(services: dict[str, str | None], timeout_s: float = PROBE_TIMEOUT_S) -> list[str]:
    """`'<name> at <url> is not answering (<error>)'` for every service (name -> base URL) that is down."""
    dead = []
    for name, url in services.items():
        if not url:
            continue
        path = "/health" if "gateway" in name.lower() else "/"
        problem = probe(url.rstrip("/") + path, timeout_s)
        if problem is not None:
            dead.append(f"{name} at {url} is not answering ({problem})")
    return dead


def explain(message: str, services: dict[str, str | None]) -> str:
    """`message` prefixed by the dead services, if any (unchanged when every service answers)."""
    dead = dead_services(services)
    if not dead:
        return message
    return (f"{'; '.join(dead)}: it died or was stopped; restart the world slot and rerun the battle. "
            f"Failure seen: {message}")
