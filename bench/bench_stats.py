"""Statistics on a synthetic run: aggregates with every interval, and `compare`, at 10,000 tasks x 5 trials.

Run: `.venv/bin/python bench/bench_stats.py [--tasks N] [--trials K] [--runs R] [--quick]`.

Two synthetic runs of N tasks (3 per scenario, difficulties 1-3) x K trials are built as `EvalRow`s
(task i passes a trial with probability 0.3-0.8, seeded), the shape `results.json` holds. Each
measurement runs in a fresh subprocess that builds the rows first, then times one call and reports
the growth of its peak RSS (`ru_maxrss` after minus before the call), so the memory is the
statistics' own, not the rows'. R runs each, alternating, median and spread reported.
- `stats_aggregate_time`: `aggregate(...)` with every interval (TGC cluster bootstrap + Wilson, by
  difficulty, SGC, pass^k and pass@k for k = 1..K, stability) vs the same aggregate without them
  (the point figures alone: what `report` computed before intervals); target: under 5 s.
- `stats_compare_time`: `compare_runs(A, B)` (paired bootstrap, permutation test, per difficulty)
  vs the aggregate without intervals; target: under 5 s.
- `stats_peak_rss_delta_vs_size`: peak RSS growth of aggregate + compare at N tasks vs N/10 tasks:
  the bootstrap works in batches (`stats.intervals.BATCH` resamples at once), so its memory must not
  grow with the resamples; target: under 100 MiB at N.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit, figure, print_machine  # noqa: E402


def synthetic(tasks: int, trials: int, seed: int, shift: float = 0.0):  # noqa: ANN201 - EvalResults
    import random
    from datetime import datetime, timezone

    from green_agent.batch.aggregate import aggregate
    from green_agent.models.eval_run import EvalResults, EvalRow, RunConfig, RunManifest

    rng = random.Random(seed)
    ids = [f"s{i // 3:05d}_{i % 3 + 1}" for i in range(tasks)]
    skill = {t: 0.3 + 0.5 * ((i * 7919) % 100) / 100 + shift for i, t in enumerate(ids)}
    rows = [EvalRow(task_id=t, trial=k, scenario_id=t.rsplit("_", 1)[0], difficulty=i % 3 + 1, battle_id=f"b{i}-{k}",
                    status="completed", outcome=(o := "passed" if rng.random() < skill[t] else "failed"),
                    passed=o == "passed", result_path="r.json")
            for i, t in enumerate(ids) for k in range(1, trials + 1)]
    manifest = RunManifest(run_id=f"bench-{seed}", fingerprint="f", task_set_digest="d", task_ids=ids,
                           config=RunConfig(blue="synthetic", predictor="none", split="bench", trials=trials,
                                            deadline_s=1), appworld_root="/bench", created_at=datetime.now(timezone.utc))
    agg = aggregate(rows[:3], 3, 1)  # a placeholder: the measured call recomputes it
    return EvalResults(status="completed", manifest=manifest, rows=rows, aggregates=agg,
                       generated_at=datetime.now(timezone.utc))


def point_figures(rows, trials: int, ids):  # noqa: ANN001, ANN201 - the aggregate without intervals
    from green_agent.batch.aggregate import by_difficulty, pass_at_k, pass_hat_k, sgc, tgc

    expected = [(t, k) for t in ids for k in range(1, trials + 1)]
    return (tgc(rows, len(expected)), sgc(rows, expected), by_difficulty(rows),
            [pass_hat_k(rows, k) for k in range(1, trials + 1)], [pass_at_k(rows, k) for k in range(1, trials + 1)])


def worker(what: str, tasks: int, trials: int) -> None:
    from green_agent.batch.aggregate import aggregate
    from green_agent.batch.compare import compare_runs

    a = synthetic(tasks, trials, 1)
    b = synthetic(tasks, trials, 2, shift=0.02) if what in ("compare", "both") else None
    import scipy.stats  # noqa: F401 - imports are not the measured work
    import statsmodels.stats.power  # noqa: F401
    import statsmodels.stats.proportion  # noqa: F401

    before_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    if what in ("aggregate", "both"):
        aggregate(a.rows, len(a.rows), trials, a.manifest.task_ids)
    if what == "points":
        point_figures(a.rows, trials, a.manifest.task_ids)
    if what in ("compare", "both"):
        assert b is not None
        compare_runs(a, b, "a", "b")
    seconds = time.perf_counter() - started
    rss = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before_rss) / 1024
    print(json.dumps({"seconds": seconds, "rss_mib": rss}))


def measure(what: str, tasks: int, trials: int) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", what, "--tasks", str(tasks), "--trials", str(trials)],
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"worker {what} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def run_bench(tasks: int, trials: int, runs: int) -> list[dict]:
    found: dict[str, list[dict]] = {k: [] for k in ("aggregate", "points", "compare", "both", "both_small")}
    for _ in range(runs):
        for what in ("aggregate", "points", "compare", "both"):
            found[what].append(measure(what, tasks, trials))
        found["both_small"].append(measure("both", max(30, tasks // 10), trials))
    secs = {k: [m["seconds"] for m in v] for k, v in found.items()}
    rss = {k: [m["rss_mib"] for m in v] for k, v in found.items()}
    size = f"{tasks} tasks x {trials} trials"
    agg_s, cmp_s, base_s = median(secs["aggregate"]), median(secs["compare"]), median(secs["points"])
    big, small = median(rss["both"]), median(rss["both_small"])
    return [
        figure("stats_aggregate_time", "s", agg_s, base_s, secs["aggregate"], secs["points"],
               f"aggregate() with every interval on {size}, vs the point figures alone", ratio="value/baseline",
               target="< 5 s", meets_target=agg_s < 5.0, extra={"tasks": tasks, "trials": trials}),
        figure("stats_compare_time", "s", cmp_s, base_s, secs["compare"], secs["points"],
               f"compare_runs() of two runs of {size}, vs the point figures of one", ratio="value/baseline",
               target="< 5 s", meets_target=cmp_s < 5.0, extra={"tasks": tasks, "trials": trials}),
        figure("stats_peak_rss_delta_vs_size", "MiB", big, small, rss["both"], rss["both_small"],
               f"peak RSS growth of aggregate + compare at {tasks} tasks vs {max(30, tasks // 10)}",
               ratio="value/baseline", target="< 100 MiB at full size", meets_target=big < 100.0,
               extra={"tasks": tasks, "trials": trials}),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smoke mode: 2,000 tasks x 3 trials, one run")
    parser.add_argument("--worker", choices=("aggregate", "points", "compare", "both"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.tasks, args.trials)
        return
    print_machine("bench_stats")
    tasks, trials, runs = (2000, 3, 1) if args.quick else (args.tasks, args.trials, args.runs)
    for line in run_bench(tasks, trials, runs):
        emit(line)


if __name__ == "__main__":
    main()
