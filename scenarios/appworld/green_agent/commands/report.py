"""`appworld-green report DIR`: regenerate results.json, agentbeats_results.json and report.html.

Everything is recomputed from the files in the run directory (no battle is run, no server needed),
under the directory's writer lock (an `eval` still writing it makes this exit 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from green_agent.batch.rows import write_outputs
from green_agent.batch.run_lock import RunDirLock
from green_agent.commands.eval import add_confidence_argument, interval_options, summary
from kernel.errors import BadInputError
from kernel.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("report", help="regenerate an eval run's results.json and report.html from disk")
    parser.add_argument("dir", type=Path, help="the run directory (eval --out)")
    add_confidence_argument(parser)
    parser.add_argument("--json", action="store_true", help="print only results.json on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    if not Path(args.dir).is_dir():
        raise BadInputError(f"{args.dir} is not a directory: give an eval run directory (eval --out)")
    with RunDirLock(args.dir, "report"):  # an eval still writing the directory refuses us (exit 2)
        results = write_outputs(args.dir, interval_options(args, settings))
    print(results.model_dump_json(indent=2) if args.json else summary(results, args.dir))
    return 0
