"""Build the offline AppWorld world from our task pack (runs in `.venv-appworld` only).

Usage:
    python build.py [--root DIR] [--only-validate | --paraphrases-only] [--extra-scenario FILE ...]

Writes `<root>/data` (root: `--root`, else `APPWORLD_ROOT`): API docs, the 12 base DBs, every task
of the pack in AppWorld's native format, `datasets/{train,dev,all}.txt` and the authored paraphrase set
`paraphrases/authored.jsonl`. `--paraphrases-only` writes only that set into an existing world (no AppWorld
import, nothing else touched). The pack is validated
first; nothing is written when it is malformed. The world is built in a staging folder next to
`<root>/data` and renamed into place; `<root>/data/.built` (a digest of the pack and builder
sources) is written last. Two builds of the same sources give identical files.

Exit codes: 0 built (or valid), 2 malformed pack or bad arguments, 1 build failure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import traceback
from pathlib import Path

from builder.paraphrases import write_authored_set
from pack import PackError, load_scenarios, source_digest
from pack.types import SPLITS, ScenarioDef

STAMP_NAME = ".built"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Build the offline AppWorld world from the task pack.")
    parser.add_argument("--root", help="AppWorld root to build into (default: $APPWORLD_ROOT)")
    steps = parser.add_mutually_exclusive_group()
    steps.add_argument("--only-validate", action="store_true", help="validate the pack, write nothing")
    steps.add_argument("--paraphrases-only", action="store_true",
                       help="write only <root>/data/paraphrases/authored.jsonl into an existing world")
    parser.add_argument("--extra-scenario", action="append", default=[], type=Path, metavar="FILE",
                        help="also load this scenario module (checking a draft outside pack/scenarios)")
    return parser.parse_args(argv)


def load_and_validate(extra: list[Path]) -> list[ScenarioDef]:
    """Every scenario, validated. Raises `PackError` naming the task and field of each problem."""
    from builder.validate import validate_pack

    for path in extra:
        if not path.is_file():
            raise PackError(f"{path}: no such scenario file")
    scenarios = load_scenarios(extra)
    validate_pack(scenarios)
    return scenarios


def build(root: Path, scenarios: list[ScenarioDef], digest: str) -> dict[str, float]:
    """Build into a staging dir under `root`, then swap it in as `root/data`. Returns step timings."""
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f".build-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        timings = _build_into(staging, scenarios)
        _swap_into_place(root, staging / "data")
        (root / "data" / STAMP_NAME).write_text(json.dumps({"digest": digest, "tasks": _task_ids(scenarios)}) + "\n")
        return timings
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _build_into(staging: Path, scenarios: list[ScenarioDef]) -> dict[str, float]:
    # AppWorld resolves every data path from APPWORLD_ROOT at call time: point it at the staging root.
    os.environ["APPWORLD_ROOT"] = str(staging)
    from builder.api_docs import api_doc_rows, build_api_docs
    from builder.base_dbs import build_base_dbs
    from builder.files import write_text
    from builder.tasks import build_task

    data_dir = str(staging / "data")
    timings: dict[str, float] = {}
    started = time.perf_counter()
    collection = build_api_docs(data_dir)
    timings["api_docs"] = time.perf_counter() - started
    started = time.perf_counter()
    build_base_dbs(scenarios, api_doc_rows(collection))
    timings["base_dbs"] = time.perf_counter() - started
    started = time.perf_counter()
    for scenario in scenarios:
        for task in sorted(scenario.tasks, key=lambda t: t.variant):
            build_task(data_dir, scenario, task)
    timings["tasks"] = time.perf_counter() - started
    for split in SPLITS:
        ids = _task_ids([s for s in scenarios if s.split == split])
        write_text(os.path.join(data_dir, "datasets", f"{split}.txt"), "".join(f"{i}\n" for i in ids))
    write_text(os.path.join(data_dir, "datasets", "all.txt"), "".join(f"{i}\n" for i in _task_ids(scenarios)))
    write_authored_set(Path(data_dir), scenarios)
    return timings


def _swap_into_place(root: Path, new_data: Path) -> None:
    """Replace `root/data` by `new_data` with renames (same filesystem), old data removed after."""
    target = root / "data"
    retired = root / f".data-old-{os.getpid()}"
    if target.exists():
        target.rename(retired)
    new_data.rename(target)
    shutil.rmtree(retired, ignore_errors=True)


def _task_ids(scenarios: list[ScenarioDef]) -> list[str]:
    return sorted(scenario.task_id(task) for scenario in scenarios for task in scenario.tasks)


def _write_paraphrases_only(root: Path, scenarios: list[ScenarioDef]) -> int:
    if not (root / "data" / "tasks").is_dir():
        print(f"error: no built world at {root / 'data'}: build it first (without --paraphrases-only)", file=sys.stderr)
        return 2
    path = write_authored_set(root / "data", scenarios)
    print(f"wrote {sum(1 for _ in path.open())} authored paraphrases to {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    root_text = args.root or os.environ.get("APPWORLD_ROOT")
    try:
        scenarios = load_and_validate(args.extra_scenario)
    except PackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    count = sum(len(s.tasks) for s in scenarios)
    if args.only_validate:
        print(f"task pack OK: {len(scenarios)} scenarios, {count} tasks")
        return 0
    if not root_text:
        print("error: no AppWorld root: pass --root DIR or set APPWORLD_ROOT", file=sys.stderr)
        return 2
    root = Path(root_text).resolve()
    if args.paraphrases_only:
        return _write_paraphrases_only(root, scenarios)
    started = time.perf_counter()
    try:
        timings = build(root, scenarios, source_digest(args.extra_scenario))
    except PackError as exc:  # a seed function failed: still the author's definition
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # an unexpected failure is a bug: keep its traceback, then say it in one line
        traceback.print_exc()
        print(f"error: world build failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    steps = " | ".join(f"{name} {seconds:.1f}s" for name, seconds in timings.items())
    print(f"built {count} tasks of {len(scenarios)} scenarios into {root / 'data'} "
          f"in {time.perf_counter() - started:.1f}s ({steps})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
