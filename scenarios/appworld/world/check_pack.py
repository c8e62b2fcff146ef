"""Check built tasks with AppWorld's own evaluator, in-process (runs in `.venv-appworld` only).

For every task: the reference solution must succeed, and doing nothing must fail with honest labels
(every `no_op_pass` test passes and every `no_op_fail` test fails when the agent does nothing).

Usage:
    python check_pack.py [--root DIR] [--split all|train|dev] [TASK_ID ...]

Exit code 0 when every task checks out, 1 when any does not, 2 for bad arguments or a missing world.
Outputs go to `<root>/experiments/outputs/check_pack-{gold,noop}/` (never into `<root>/data`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

CANARY_PREFIX = "# Canary String:"


class Outcome(NamedTuple):
    """One evaluation: AppWorld's success flag and which tests passed/failed (with their labels)."""

    success: bool
    passed: list[dict[str, Any]]
    failed: list[dict[str, Any]]

    @property
    def score(self) -> str:
        return f"{len(self.passed)}/{len(self.passed) + len(self.failed)}"


def evaluate_run(task_id: str, experiment: str, code: str | None) -> Outcome:
    """Open the task's world, run `code` (None: do nothing), evaluate, close."""
    from appworld import AppWorld

    with AppWorld(task_id=task_id, experiment_name=experiment, raise_on_failure=False) as world:
        if code is not None:
            output = world.execute(code)
            if output.startswith("Execution failed"):
                print(f"  {task_id}: reference solution raised:\n{output}", file=sys.stderr)
        tracker = world.evaluate(suppress_errors=True)
    return Outcome(tracker.success, list(tracker.passes), list(tracker.failures))


def reference_code(data_dir: Path, task_id: str) -> str:
    path = data_dir / "tasks" / task_id / "ground_truth" / "compiled_solution.py"
    lines = [line for line in path.read_text().splitlines() if not line.startswith(CANARY_PREFIX)]
    return "\n".join(lines) + "\nsolution(apis, requester)\n"


def check_task(data_dir: Path, task_id: str) -> list[str]:
    """Problems of one task (empty when the gold run succeeds and the no-op run fails honestly)."""
    problems: list[str] = []
    gold = evaluate_run(task_id, "check_pack-gold", reference_code(data_dir, task_id))
    if not gold.success:
        failing = "; ".join(f["requirement"].splitlines()[0] for f in gold.failed)
        problems.append(f"reference solution fails {len(gold.failed)} test(s): {failing}")
    noop = evaluate_run(task_id, "check_pack-noop", None)
    if noop.success:
        problems.append("doing nothing succeeds")
    for test in noop.passed:
        if test["label"] != "no_op_pass":
            problems.append(f"labelled {test['label']} but passes when nothing is done: {test['requirement'][:70]!r}")
    for test in noop.failed:
        if test["label"] != "no_op_fail":
            problems.append(f"labelled {test['label']} but fails when nothing is done: {test['requirement'][:70]!r}")
    status = "ok" if not problems else "MISMATCH"
    print(f"{task_id}: gold {gold.score} success={gold.success} | no-op {noop.score} success={noop.success} | {status}")
    for problem in problems:
        print(f"    - {problem}")
    return problems


def task_ids_of(data_dir: Path, split: str) -> list[str]:
    path = data_dir / "datasets" / f"{split}.txt"
    return [line.split(":")[0].strip() for line in path.read_text().splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Reference solution succeeds, no-op fails, for each task.")
    parser.add_argument("--root", help="AppWorld root (default: $APPWORLD_ROOT)")
    parser.add_argument("--split", default="all", help="dataset file to check when no task id is given")
    parser.add_argument("task_ids", nargs="*", help="only these tasks")
    args = parser.parse_args(argv)
    root = args.root or os.environ.get("APPWORLD_ROOT")
    if not root or not (Path(root) / "data" / "datasets").is_dir():
        print(f"error: no built world at {root!r}: pass --root DIR (run build.py first)", file=sys.stderr)
        return 2
    os.environ["APPWORLD_ROOT"] = str(Path(root).resolve())  # read by AppWorld at call time
    data_dir = Path(root).resolve() / "data"
    task_ids = args.task_ids or task_ids_of(data_dir, args.split)
    started = time.perf_counter()
    bad = [task_id for task_id in task_ids if check_task(data_dir, task_id)]
    print(f"checked {len(task_ids)} tasks in {time.perf_counter() - started:.1f}s: "
          f"{len(task_ids) - len(bad)} ok, {len(bad)} mismatched{': ' + ', '.join(bad) if bad else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
