"""`appworld-green compat {install,status}`: the agentbeats 1.2.6 compatibility layer."""

from __future__ import annotations

import argparse
import json

from green_agent.agentbeats_compat.install import install, status
from kernel.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("compat", help="install or check the agentbeats 1.2.6 compatibility layer")
    parser.add_argument("action", choices=["install", "status"])
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "install":
        for line in install() or ["agentbeats compatibility layer already in place"]:
            print(line)
        return 0
    report = status()
    print(json.dumps(report))
    return 0 if all(report.values()) else 1
