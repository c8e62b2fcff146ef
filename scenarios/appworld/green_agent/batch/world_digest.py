"""The built world's identity on a node: a content digest, and the check a slot makes before it starts.

Contract:
- `world_digest(root)` is sha256 over every file under `<root>/data` (relative path and bytes, in
  sorted path order). The offline build is deterministic, so two nodes that built the same pack with
  the same builder hold the same digest; a world copied from elsewhere (the real dataset) is compared
  as it is.
- `task_digests(root, task_ids)` is, per task, the first 16 hex digits of sha256 over its folder
  `<root>/data/tasks/<id>` (relative path and bytes of every file, in sorted order): what a run's
  manifest records so `compare` can tell whether two runs saw the same tasks.
- `ensure_world(root, expected, node, build)` makes the node's world match the driver's: a world that
  is missing (no `data/.built` stamp) is built first (one builder per root at a time, under a file
  lock); a world whose digest differs is refused with `WorldMismatchError`, naming the node, the root
  and both digests. It never rebuilds a world that exists: a mismatch is the operator's to resolve.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path

from kernel.errors import BadInputError
from kernel.file_lock import release, try_lock
from green_agent.runtime.world_build import STAMP_NAME

BUILD_LOCK_WAIT_S = 900.0
LOCK_POLL_S = 0.5


class WorldMismatchError(BadInputError):
    """A node's world is not the driver's (or could not be built there)."""


def _folder_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def world_digest(root: Path) -> str:
    """sha256 of `<root>/data`: every file's relative path and bytes, in sorted order."""
    return _folder_digest(Path(root) / "data")


def task_digests(root: Path, task_ids: list[str]) -> dict[str, str]:
    """task id -> 16 hex digits of sha256 over `<root>/data/tasks/<id>` (see the module docstring)."""
    return {task: _folder_digest(Path(root) / "data" / "tasks" / task)[:16] for task in task_ids}


def is_built(root: Path) -> bool:
    return (Path(root) / "data" / STAMP_NAME).is_file()


def ensure_world(root: Path, expected: str, node: str, build: Callable[[Path], object]) -> str:
    """Build the node's world if missing, then require its digest to be `expected`; returns the digest.

    Raises:
        WorldMismatchError: the world differs from the driver's, or the build failed.
    """
    root = Path(root)
    if not is_built(root):
        _build_once(root, node, build)
    found = world_digest(root)
    if found != expected:
        raise WorldMismatchError(
            f"node {node}: the world at {root} (digest {found[:12]}) is not the driver's (digest {expected[:12]}): "
            "build both from the same checkout (`appworld-green world build`), or point APPWORLD_ROOT on that node "
            "at a copy of the driver's world")
    return found


def _build_once(root: Path, node: str, build: Callable[[Path], object]) -> None:
    """Build `root` unless another slot on this node is building it (then wait for that build)."""
    lock_path = root.parent / f".{root.name}.build.lock"
    deadline = time.monotonic() + BUILD_LOCK_WAIT_S
    while (fd := try_lock(lock_path)) is None:
        if time.monotonic() > deadline:
            raise WorldMismatchError(f"node {node}: gave up waiting for another build of {root} (lock {lock_path})")
        time.sleep(LOCK_POLL_S)
    try:
        if is_built(root):
            return
        try:
            build(root)
        except Exception as exc:
            raise WorldMismatchError(f"node {node}: the world at {root} is missing and building it failed: "
                                     f"{type(exc).__name__}: {exc}") from exc
    finally:
        release(fd)
