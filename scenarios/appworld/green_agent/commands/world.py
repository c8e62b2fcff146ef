"""`appworld-green world build|up|down`: build the offline world; start and stop world slots.

Thin wrappers: `build` over `green_agent.runtime.world_build` (the builder runs as a subprocess; its
output streams straight to this terminal), `up` and `down` over `green_agent.runtime.world_service`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from kernel.settings import MAX_SLOTS, Settings
from green_agent.runtime.world_build import build_world
from green_agent.runtime.world_service import start_slots, stop_slots


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
