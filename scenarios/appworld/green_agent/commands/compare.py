"""`appworld-green compare RUN_A RUN_B`: is B better than A on the same tasks? (and when the data cannot say).

Reads each run's `results.json` (a run directory or the file) through the run-folder reader
(`green_agent.runfolder`: a hostile one is refused, exit 2), compares B against A
(`green_agent.batch.compare`), prints a terminal table (or only the `Comparison` JSON with --json),
and with `--out FILE` also writes it: `FILE.html` gets the HTML page, any other name the JSON.
Exit codes: 0 whatever the verdict, 2 when the runs are not comparable (different task sets, splits
or worlds: the message names the difference), a file is missing, or a run folder breaks a reader's rule.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from green_agent.batch.compare import compare_runs
from green_agent.batch.compare_report import render_compare_html, text_table
from green_agent.commands.eval import add_confidence_argument, interval_options
from green_agent.runfolder.reader import read_eval_results
from green_agent.stats.power import DEFAULT_POWER
from kernel.atomic import atomic_write_text
from kernel.errors import BadInputError
from kernel.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("compare", help="paired comparison of two eval runs over the same tasks")
    parser.add_argument("run_a", type=Path, help="run A: an eval run directory (or its results.json)")
    parser.add_argument("run_b", type=Path, help="run B, compared against A (differences are B - A)")
    parser.add_argument("--intersect", action="store_true",
                        help="compare on the tasks both runs share (default: refuse different task sets)")
    parser.add_argument("--out", type=Path, help="also write the comparison: FILE.html the page, else the JSON")
    add_confidence_argument(parser)
    parser.add_argument("--json", action="store_true", help="print only the comparison JSON on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    options = interval_options(args, settings)
    dirs = tuple(p if p.is_dir() else p.parent for p in (Path(args.run_a), Path(args.run_b)))
    comparison = compare_runs(read_eval_results(args.run_a), read_eval_results(args.run_b), str(args.run_a),
                              str(args.run_b), intersect=args.intersect, options=options, power=DEFAULT_POWER,
                              run_dirs=dirs)  # type: ignore[arg-type]
    if args.out:
        if args.out.is_dir():
            raise BadInputError(f"--out {args.out} is a directory: give a file name (.html for the page, else JSON)")
        html = args.out.suffix.lower() in (".html", ".htm")
        atomic_write_text(args.out, render_compare_html(comparison, args.out.resolve().parent) if html
                          else comparison.model_dump_json(indent=2))
    print(comparison.model_dump_json(indent=2) if args.json else text_table(comparison))
    if args.out:
        what = "the comparison page (open it in a browser)" if html else "the comparison JSON"
        print(f"wrote {what}: {args.out.resolve()}", file=sys.stderr if args.json else sys.stdout)
    return 0
