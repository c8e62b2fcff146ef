"""`appworld-green scope-eval`: measure a scope predictor against gold APIs on a split.

Prints one JSON object (predictor, tasks, recall, precision, f1, mean_apis, worst, ...) on stdout.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from green_agent.scoping.cache import DEFAULT_CACHE_DIR, PredictionCache
from green_agent.scoping.evaluate import evaluate_split
from green_agent.models.scope import PREDICTOR_CHOICES, PREDICTOR_HELP
from kernel.settings import Settings
from kernel.world_data import WorldData


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("scope-eval", help="score an API scope predictor against gold APIs on a split")
    parser.add_argument("--predictor", default="auto", choices=PREDICTOR_CHOICES,
                        help=PREDICTOR_HELP + " (default: auto)")
    parser.add_argument("--split", default=None, help="split to evaluate (default: DEFAULT_SPLIT, i.e. dev)")
    parser.add_argument("--appworld-root", type=Path, default=None, help="AppWorld root (default: APPWORLD_ROOT)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR, help="LLM prediction cache")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.appworld_root is not None:
        settings = settings.model_copy(update={"appworld_root": args.appworld_root})
    world = WorldData(settings.appworld_root).require()
    report = evaluate_split(world, args.split or settings.default_split, args.predictor, settings,
                            cache=PredictionCache(args.cache_dir))
    print(report.model_dump_json())
    return 0
