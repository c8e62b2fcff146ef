"""`appworld-green analyze RUN|LOG [--task-id T] [--trial K] [--battle-id B]`: trajectory metrics of one battle as JSON.

RUN is a run folder, and only that run is read: a battle's folder (`battle --out`: its own battle), or an eval
run's (`eval --out`, an assessment's: the battle of `--task-id`, trial `--trial`), found through the run-folder
reader (`green_agent.runfolder`); the battle's archived call records (`mcp_calls.jsonl`) are analyzed, with its
task's gold APIs and the scope it was given (unless `--scope` says otherwise). LOG is a call log file named
explicitly (a gateway's own, e.g. `world up`'s); there is no default, so no other run's log is ever read by
accident.

Gold APIs come from the world's ground truth when the task id is known and the world data exists;
paginated APIs come from the world's API docs when they exist (else they are inferred from the
calls' arguments). Only the metrics JSON goes to stdout; notes go to stderr.

With a LOG, `--task-id` without `--battle-id` analyzes one battle: the latest of that task in the log (the one
whose last call is newest), and says so on stderr with the others' ids; a gateway's log holds every
battle it served, so merging them would count one task's calls several times over.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import NamedTuple

from green_agent.runfolder.limits import CALL_LOG
from green_agent.runfolder.reader import RunFolder, battle_folder
from green_agent.steps.archive import CALLS_FILE
from kernel.call_log_reader import CallLogReader
from kernel.errors import BadInputError
from kernel.settings import Settings
from green_agent.trajectory import analyze_log
from kernel.world_data import WorldData

_ID_PATTERN = re.compile(r"[A-Za-z0-9_.:\-]{1,128}")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("analyze", help="trajectory metrics of one battle/task from the gateway's call log")
    parser.add_argument("run", type=Path, metavar="RUN|LOG", help="a run folder (battle --out; eval --out with "
                        "--task-id), or a gateway's JSONL call log")
    parser.add_argument("--battle-id", help="a call log: only the records of this battle")
    parser.add_argument("--task-id", help="the task (a run folder: its battle; a call log: its records); also selects "
                                          "the gold APIs")
    parser.add_argument("--trial", type=int, default=1, help="an eval run folder: the trial of the task (default 1)")
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


class _Input(NamedTuple):
    """What to analyze: the log, and the battle, task and scope that select and score its records."""

    log: Path
    battle_id: str | None
    task_id: str | None
    scope: list[str] | None


def _from_run(args: argparse.Namespace) -> _Input:
    """The battle of the run folder `args.run`: its archived call records, its battle, task and scope."""
    found = battle_folder(args.run, args.task_id, args.trial)
    log = found.path / CALLS_FILE
    RunFolder(found.path).file(log, CALL_LOG)  # within its size limit, inside the folder (None: no calls archived)
    result = found.result
    if result is None:
        print(f"note: {found.path} has no readable result.json; analyzing every record of its call log",
              file=sys.stderr)
        return _Input(log, args.battle_id, args.task_id, None)
    print(f"note: analyzing battle {result.battle_id} of task {result.task_id} ({found.path})", file=sys.stderr)
    scope = result.scope.apis if result.scope is not None else None
    return _Input(log, result.battle_id, result.task_id, scope)


def _from_log(args: argparse.Namespace) -> _Input:
    battle_id = args.battle_id
    if battle_id is None and args.task_id is not None:
        battle_id = latest_battle(args.run, args.task_id)
    return _Input(args.run, battle_id, args.task_id, None)


def run(args: argparse.Namespace, settings: Settings) -> int:
    _check_id("battle id", args.battle_id)
    _check_id("task id", args.task_id)
    chosen = _from_run(args) if args.run.is_dir() else _from_log(args)
    world = WorldData(args.appworld_root or settings.appworld_root)
    gold, paginated = _world_inputs(world, chosen.task_id)
    scope = [name.strip() for name in args.scope.split(",") if name.strip()] if args.scope else chosen.scope
    metrics = analyze_log(chosen.log, battle_id=chosen.battle_id, task_id=chosen.task_id, gold_apis=gold,
                          scope=scope, paginated_apis=paginated)
    if not metrics.log_found:
        print(f"note: call log {chosen.log} does not exist; reporting zero calls", file=sys.stderr)
    print(metrics.model_dump_json(indent=2))
    return 0
