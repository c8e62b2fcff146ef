"""What a paraphrase adds to a battle: the same battles with and without `--paraphrase`, side by side in one run.

Run: `.venv/bin/python bench/bench_paraphrase.py [--strength strong] [--rounds K] [--quick] [--root DIR]`.

One world slot and one reference Blue are started once and reused. Each round runs every task of the dev split
twice, once in its own words and once in the strength's paraphrase from the world's authored set (the order of
the two alternates from task to task, so the machine's load drift hits both sides), each through
`local_battle.run_on_slot` as `battle` and `eval` run it (its config and deps built, the engine's eleven steps,
result.json written). One warm-up round is dropped. Every battle must pass (the reference Blue ignores the
wording), or the script fails.

Figures (one JSON line each, see bench/common.py):
- `paraphrase_battle_cost`: the median battle's wall time with the paraphrase vs without; ratio = value/baseline,
  target < 1.05 (within the noise): the choice is one hash, the gateway's answer one dict copy. Beside it
  `paired_ratio_median` (the median over (round, task) of the two sides' ratio: each pair ran back to back) and
  `step_median_ms` per side (the engine's steps, from result.json's timings: where a paraphrase could cost);
- `paraphrase_set_open_ms`: loading the set and gating one task's lines, done once per task per process (every
  battle after reuses it), vs the median battle without a paraphrase: the one-off cost, as a share of a battle.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scenarios" / "appworld"))

from common import bench_settings, dev_tasks, emit, figure, print_machine, remove_experiments, start_slot  # noqa: E402

TARGET = 1.05
STEPS = ("task_id", "setup", "scope", "task_message", "wait", "archive", "metrics", "report")
"""The engine's steps whose median time per battle is reported beside the figures (where a paraphrase could cost)."""


def one_battle(settings, urls, blue_url: str, task: str, spec, run_dir: Path,  # noqa: ANN001
               name: str) -> tuple[float, dict[str, float]]:
    from green_agent.engine.config import BattleChoices
    from green_agent.local_battle import run_on_slot
    from kernel.task_ids import TaskRef

    started = time.perf_counter()
    result = run_on_slot(TaskRef(task_id=task, source="id"), BattleChoices(blue="reference", predictor="all",
                                                                          paraphrase=spec),
                         settings, urls, blue_url, run_dir / name, name)
    wall = time.perf_counter() - started
    remove_experiments(settings.appworld_root, [result.experiment_name or ""])
    if result.outcome != "passed" or (spec is not None) != (result.paraphrase is not None):
        sys.exit(f"{name}: outcome {result.outcome}, paraphrase {result.paraphrase}: expected passed, as asked")
    return wall, result.timings


def set_open_ms(spec, settings, tasks: list[str]) -> float:  # noqa: ANN001
    """Median time to load the set and gate one task's lines, cold (what `open_paraphrases` does once, uncached)."""
    from green_agent.steps.wording import RunParaphrases, set_path
    from kernel.paraphrase_set import load_set
    from kernel.world_data import WorldData

    times = []
    for task in tasks:
        started = time.perf_counter()
        world = WorldData(settings.appworld_root)
        RunParaphrases(spec, load_set(set_path(spec, world)), world).check_tasks([task])
        times.append(1000 * (time.perf_counter() - started))
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--strength", default="strong", choices=("mild", "medium", "strong", "naturalistic"))
    parser.add_argument("--rounds", type=int, default=3, help="rounds over the dev split (after one warm-up)")
    parser.add_argument("--quick", action="store_true", help="one round of 5 tasks, no warm-up")
    parser.add_argument("--root", help="AppWorld root (default: the built world, APPWORLD_ROOT)")
    args = parser.parse_args()
    print_machine("bench_paraphrase")
    from green_agent.local_battle import open_blue
    from kernel.paraphrase_set import ParaphraseSpec

    spec = ParaphraseSpec(strength=args.strength)
    walls: dict[bool, list[float]] = {True: [], False: []}
    steps: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    pairs: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-paraphrase-") as tmp:
        settings = bench_settings(tmp, args.root)
        tasks = dev_tasks(settings)[:5] if args.quick else dev_tasks(settings)
        open_ms = set_open_ms(spec, settings, tasks)
        slot = start_slot(settings, tmp)
        try:
            with open_blue("reference", settings, slot.urls, Path(tmp) / "logs") as blue_url:
                rounds = 1 if args.quick else args.rounds + 1
                for r in range(rounds):
                    for i, task in enumerate(tasks):
                        pair = {}
                        for paraphrased in ((True, False) if (i + r) % 2 == 0 else (False, True)):
                            pair[paraphrased], timings = one_battle(
                                settings, slot.urls, blue_url, task, spec if paraphrased else None,
                                Path(tmp) / "runs", f"r{r}-{task}-{'p' if paraphrased else 'o'}")
                            if r > 0 or args.quick:  # the first round warms both sides up
                                walls[paraphrased].append(pair[paraphrased])
                                steps[paraphrased].append(timings)
                        if r > 0 or args.quick:
                            pairs.append(pair[True] / pair[False])
        finally:
            slot.stop()
    value, baseline = statistics.median(walls[True]), statistics.median(walls[False])
    extra = {"strength": args.strength, "tasks": len(tasks), "battles_per_side": len(walls[True]),
             "paired_ratio_median": round(statistics.median(pairs), 3),
             "step_median_ms": {side: {k: round(1000 * statistics.median(t.get(k, 0.0) for t in steps[on]), 2)
                                       for k in STEPS} for side, on in (("paraphrased", True), ("original", False))}}
    emit(figure("paraphrase_battle_cost", "s", value, baseline, walls[True], walls[False],
                f"a reference battle asked in the {args.strength} authored paraphrase vs in the task's own words "
                "(same slot and Blue, alternating)", ratio="value/baseline",
                target=f"< {TARGET}x (within the noise)", meets_target=value / baseline < TARGET, extra=extra))
    emit(figure("paraphrase_set_open_ms", "ms", open_ms, 1000 * baseline, [open_ms], [1000 * baseline],
                "loading the authored set and gating one task's lines (once per task per process) vs a whole "
                "battle without a paraphrase", ratio="value/baseline", extra=extra))
    return 0


if __name__ == "__main__":
    sys.exit(main())
