"""A local Ray instance that stays on loopback: rerun the command in a private network namespace.

Why: Ray binds every process of a node (GCS, raylet, object store, workers) to the machine's interface
address and ignores `--node-ip-address=127.0.0.1`, and Ray has no authentication: a local instance
that other machines can reach runs whatever code they send it. Inside a fresh network namespace
whose only interface is `lo`, Ray uses 127.0.0.1 and nothing outside the namespace can reach it.

So `eval --executor ray` without `--ray-address` reruns itself (same pid, via `exec`) as
`unshare --net -- sh -c 'ip link set lo up && exec "$@"' ...` when the machine has interfaces other
than `lo` and the process may create a namespace (root, `unshare` and `ip` present). Otherwise it
runs as is, and the CLI says that the instance is reachable beyond loopback. Inside the namespace
only this machine's own loopback services started there exist, so a Blue given as a URL is refused
in that mode: join a Ray cluster (`--ray-address`) instead. Nothing here imports Ray.
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Callable

NETNS_MARK = "APPWORLD_GREEN_PRIVATE_NETNS"
"""Set in the rerun command's environment (a second rerun would loop)."""


def interfaces() -> list[str]:
    """This process's network interfaces (its own namespace's: `/sys/class/net` shows the mount's)."""
    try:
        return sorted(name for _, name in socket.if_nameindex())
    except OSError:
        return []


def only_loopback(names: Callable[[], list[str]] = interfaces) -> bool:
    """This process's network namespace has no interface but `lo`."""
    return names() == ["lo"]


def can_unshare() -> bool:
    return os.geteuid() == 0 and shutil.which("unshare") is not None and shutil.which("ip") is not None


def private_netns_argv(argv: list[str], environ: dict[str, str] | None = None,
                       names: Callable[[], list[str]] = interfaces) -> list[str] | None:
    """The command line that reruns `argv` in a loopback-only namespace; None when not needed or not possible."""
    environ = os.environ if environ is None else environ
    if environ.get(NETNS_MARK) or only_loopback(names) or not can_unshare():
        return None
    return ["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "appworld-green", *argv]


def rerun_in_private_netns(argv: list[str]) -> None:
    """Replace this process by `argv` in a private network namespace (returns only if not needed or not possible)."""
    command = private_netns_argv(argv)
    if command is None:
        return
    os.execvpe(command[0], command, {**os.environ, NETNS_MARK: "1"})
