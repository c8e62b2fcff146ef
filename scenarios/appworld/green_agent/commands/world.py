"""`appworld-green world build|up|down`: build the offline world; start and stop world slots.

`up` and `down` are thin wrappers over `green_agent.runtime.world_service`.

The builder (`scenarios/appworld/world/build.py`) imports AppWorld, so it runs as a subprocess with
`settings.appworld_python`; its output streams straight to this terminal. Its exit codes map to our
errors: 2 (malformed task pack) -> `BadInputError`, anything else non-zero -> `InfrastructureError`.
"""

from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path

from kernel.errors import AppWorldUnavailableError, BadInputError, InfrastructureError
from kernel.settings import MAX_SLOTS, SCENARIO_DIR, Settings
from green_agent.runtime.world_service import start_slots, stop_slots

WORLD_DIR = SCENARIO_DIR / "world"
BUILD_SCRIPT = WORLD_DIR / "build.py"
STAMP_NAME = ".built"
PACK_ERROR_EXIT = 2


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("world", help="build the offline AppWorld world; start/stop world slots")
    actions = parser.add_subparsers(dest="world_action", metavar="ACTION", required=True)
    build = actions.add_parser("build", help="build <root>/data from the task pack (runs in .venv-appworld)")
    build.add_argument("--root", type=Path, help="AppWorld root to build into (default: settings.appworld_root)")
    build.add_argument("--only-validate", action="store_true", help="check the task pack, write nothing")
    build.set_defaults(func=run_build)
    up = actions.add_parser("up", help="start N world slots (APIs + env server + MCP gateway each) on 127.0.0.1")
    up.add_argument("--slots", type=int, default=1, help=f"how many slots, 1..{MAX_SLOTS} (slot k: ports 8000/9000/10000 + 10k)")
    up.add_argument("--foreground", action="store_true", help="stay attached; Ctrl-C stops the slots")
    up.set_defaults(func=run_up)
    down = actions.add_parser("down", help="stop the slots `world up` started")
    down.set_defaults(func=run_down)


def run_build(args: argparse.Namespace, settings: Settings) -> int:
    root = build_world(settings, root=args.root, only_validate=args.only_validate)
    if not args.only_validate:
        print(f"world ready: {root / 'data'}")
    return 0


def run_up(args: argparse.Namespace, settings: Settings) -> int:
    state = start_slots(settings, args.slots)
    for slot in state.slots:
        print(f"slot {slot.index}: env {slot.urls.env_url}  apis {slot.urls.apis_url}  "
              f"mcp {slot.urls.gateway_url}/mcp (SSE {slot.urls.gateway_url}/sse)")
    if not args.foreground:
        print("world slots are up; stop them with `appworld-green world down`")
        return 0
    print("serving; press Ctrl-C to stop")
    try:
        while True:
            time.sleep(3600)
    finally:
        stop_slots(settings)


def run_down(args: argparse.Namespace, settings: Settings) -> int:
    stopped = stop_slots(settings)
    print("\n".join(f"stopped {name}" for name in stopped) if stopped else "no world slots were up")
    return 0


def builder_command(settings: Settings, root: Path, only_validate: bool = False) -> list[str]:
    """The builder's argv (also used by tests that drive the builder directly)."""
    command = [str(settings.appworld_python), str(BUILD_SCRIPT), "--root", str(root)]
    return command + (["--only-validate"] if only_validate else [])


def build_world(settings: Settings, root: Path | None = None, only_validate: bool = False) -> Path:
    """Run the builder; return the root it built. Output streams to this process's stdout/stderr.

    Raises:
        AppWorldUnavailableError: the AppWorld virtualenv's Python is missing.
        BadInputError: the task pack is malformed (the builder named the task and field above).
        InfrastructureError: the build failed for another reason, or left no `.built` stamp.
    """
    root = Path(root or settings.appworld_root).resolve()
    if not Path(settings.appworld_python).is_file():
        raise AppWorldUnavailableError(
            f"AppWorld's Python not found at {settings.appworld_python}: run `make venvs` "
            "(or set APPWORLD_PYTHON to the python of a virtualenv with appworld==0.1.3.post1)"
        )
    returncode = subprocess.run(builder_command(settings, root, only_validate), cwd=WORLD_DIR, check=False).returncode
    if returncode == PACK_ERROR_EXIT:
        raise BadInputError("the task pack is malformed (see the problems listed above); fix the named fields")
    if returncode != 0:
        raise InfrastructureError(f"world build failed (builder exit code {returncode}); see its output above")
    if not only_validate and not (root / "data" / STAMP_NAME).is_file():
        raise InfrastructureError(f"world build finished but {root / 'data' / STAMP_NAME} is missing")
    return root
