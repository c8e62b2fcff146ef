"""`appworld-green analyze [LOG] [--battle-id B] [--task-id T]`: trajectory metrics of a call log as JSON.

Gold APIs come from the world's ground truth when the task id is known and the world data exists;
paginated APIs come from the world's API docs when they exist (else they are inferred from the
calls' arguments). Only the metrics JSON goes to stdout; notes go to stderr.

`--task-id` without `--battle-id` analyzes one battle: the latest of that task in the log (the one
whose last call is newest), and says so on stderr with the others' ids; the log is shared by every
battle the gateway served, so merging them would count one task's calls several times over.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from kernel.call_log_reader import CallLogReader
from kernel.errors import BadInputError
from kernel.settings import Settings
from green_agent.trajectory import analyze_log
from kernel.world_data import WorldData

_ID_PATTERN = re.compile(r"[A-Za-z0-9_.:\-]{1,128}")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("analyze", help="trajectory metrics of one battle/task from the gateway's call log")
    parser.add_argument("log", nargs="?", type=Path, help="JSONL call log (default: AGENTBEATS_MCP_LOG_PATH)")
    parser.add_argument("--battle-id", help="only the records of this battle")
    parser.add_argument("--task-id", help="only the records of this task; also selects the gold APIs")
    parser.add_argument("--appworld-root", type=Path, help="AppWorld root for gold APIs and API docs (default: APPWORLD_ROOT)")
    parser.add_argument("--scope", help="comma-separated predicted scope (app.api or app__api) for scope_recall")
    parser.set_defaults(func=run)


def _check_id(kind: str, value: str | None) -> None:
    if value is not None and not _ID_PATTERN.fullmatch(value):
        raise BadInputError(f"invalid {kind} {value[:80]!r}: use letters, digits and _ . : - (at most 128)")


def _world_inputs(world: WorldData, task_id: str | None) -> tuple[list[str] | None, list[str] | None]:
    """(gold APIs, paginated APIs) from the world, each None when the world cannot tell."""
    paginated = None
    if (world.data / "api_docs" / "standard").is_dir():
        paginated = [doc.dotted for apis in world.api_docs.values() for doc in apis.values() if doc.is_paginated]
    else:
        print(f"note: no API docs under {world.data}; paginated APIs inferred from call arguments", file=sys.stderr)
    gold = None
    if task_id is not None:
        if world.has_task(task_id):
            gold = world.gold_apis(task_id)
        else:
            print(f"note: task {task_id} not found under {world.data}; API selection scores left null", file=sys.stderr)
    return gold, paginated


def latest_battle(log: Path, task_id: str) -> str | None:
    """The task's latest battle in `log` (by its last call), saying on stderr which one and what else there is."""
    last: dict[str | None, str] = {}
    for record in CallLogReader(log, task_id=task_id):
        stamp = record.timestamp.isoformat()
        last[record.battle_id] = max(last.get(record.battle_id, stamp), stamp)
    battles = sorted((b for b in last if b is not None), key=lambda b: last[b])
    if not battles:
        return None
    if len(battles) > 1:
        others = ", ".join(reversed(battles[:-1][-5:])) + (" ..." if len(battles) > 6 else "")
        print(f"note: task {task_id} has {len(battles)} battles in {log}; analyzing the latest, {battles[-1]} (last call "
              f"{last[battles[-1]]}); pass --battle-id for another ({others})", file=sys.stderr)
    else:
        print(f"note: analyzing battle {battles[0]}, the only one of task {task_id} in {log}", file=sys.stderr)
    return battles[-1]


def run(args: argparse.Namespace, settings: Settings) -> int:
    _check_id("battle id", args.battle_id)
    _check_id("task id", args.task_id)
    log = args.log or settings.agentbeats_mcp_log_path
    world = WorldData(args.appworld_root or settings.appworld_root)
    gold, paginated = _world_inputs(world, args.task_id)
    scope = [name.strip() for name in args.scope.split(",") if name.strip()] if args.scope else None
    battle_id = args.battle_id
    if battle_id is None and args.task_id is not None:
        battle_id = latest_battle(log, args.task_id)
    metrics = analyze_log(log, battle_id=battle_id, task_id=args.task_id, gold_apis=gold,
                          scope=scope, paginated_apis=paginated)
    if not metrics.log_found:
        print(f"note: call log {log} does not exist; reporting zero calls", file=sys.stderr)
    print(metrics.model_dump_json(indent=2))
    return 0
