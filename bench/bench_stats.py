"""Statistics on a synthetic run: aggregates with every interval, and `compare`, at 10,000 tasks x 5 trials.

Run: `.venv/bin/python bench/bench_stats.py [--tasks N] [--trials K] [--runs R] [--quick]`.

Two synthetic runs of N tasks (3 per scenario, difficulties 1-3) x K trials are built as `EvalRow`s
(task i passes a trial with probability 0.3-0.8, seeded), the shape `results.json` holds. Each
measurement runs in a fresh subprocess that builds the rows first, then times one call and reports
the growth of its peak RSS (`ru_maxrss` after minus before the call), so the memory is the
statistics' own, not the rows'. R runs each, alternating, median and spread reported.
- `stats_aggregate_time`: `aggregate(...)` with every interval (TGC scenario-aware + Wilson, by
  difficulty, SGC, pass^k and pass@k for k = 1..K, stability) vs the same aggregate without them
  (the point figures alone: what `report` computed before intervals); target: under 5 s.
- `stats_intervals_vs_bootstrap_speedup`: the aggregate's scenario-aware intervals (the same requests,
  `cluster_intervals`, issue 35) vs one paired scipy BCa bootstrap per quantity over the same
  scenarios (`legacy_bounds`, 4999 resamples: the method before issue 27b and 35), side by side.
- `stats_compare_time`: `compare_runs(A, B)` (paired interval, scenario permutation test, per
  difficulty) vs the aggregate without intervals; target: under 5 s.
- `stats_aggregate_rss_vs_resamples`: aggregate's peak RSS growth with 4 x 4999 resamples vs 4999
  (they now only size compare's permutation test and the spread draws); target: ratio < 1.2.
- `stats_aggregate_rss_vs_size`: aggregate's peak RSS growth at N tasks vs N/10, beside the rows' own
  RSS at both sizes; target: it grows no more than the rows do.
- `stats_peak_rss_delta`: aggregate + compare at N tasks, vs the RSS of one run's rows; target < 100 MiB.
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


def legacy_bounds(values, clusters, options):  # noqa: ANN001, ANN201 - the pre-35 method, for the side-by-side
    """One paired scipy bootstrap per quantity over (per-scenario sums, counts): how intervals were found before."""
    import numpy as np
    from scipy import stats

    from green_agent.stats.intervals import BATCH

    ids = sorted(set(clusters))
    index = {c: i for i, c in enumerate(ids)}
    codes = np.array([index[c] for c in clusters], dtype=np.int64)
    sums = np.bincount(codes, weights=np.asarray(values, dtype=float), minlength=len(ids))
    counts = np.bincount(codes, minlength=len(ids)).astype(float)
    if len(sums) < 2 or np.ptp(sums / counts) == 0:
        return None
    return stats.bootstrap((sums, counts), lambda s, c, axis=-1: s.sum(axis=axis) / c.sum(axis=axis), paired=True,
                           vectorized=True, n_resamples=options.resamples, batch=BATCH, confidence_level=options.level,
                           method="BCa" if len(sums) <= 1000 else "percentile",
                           rng=np.random.default_rng(options.seed)).confidence_interval


def worker(what: str, tasks: int, trials: int, resamples: int) -> None:
    from green_agent.batch.aggregate import aggregate, interval_requests, per_task_trials
    from green_agent.batch.compare import compare_runs
    from green_agent.stats.intervals import IntervalOptions, cluster_intervals

    import scipy.stats  # noqa: F401 - imports are not the measured work
    import statsmodels.stats.power  # noqa: F401
    import statsmodels.stats.proportion  # noqa: F401

    options = IntervalOptions(resamples=resamples)
    start_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    a = synthetic(tasks, trials, 1)
    b = synthetic(tasks, trials, 2, shift=0.02) if what in ("compare", "both") else None

    expected = [(t, k) for t in a.manifest.task_ids for k in range(1, trials + 1)]
    requests = (interval_requests(a.rows, trials, expected, len(expected), per_task_trials(a.rows))[0]
                if what in ("shared", "legacy") else None)
    before_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    if what in ("aggregate", "both"):
        aggregate(a.rows, len(a.rows), trials, a.manifest.task_ids, options)
    if what == "points":
        point_figures(a.rows, trials, a.manifest.task_ids)
    if what == "shared":
        cluster_intervals(requests, options)
    if what == "legacy":
        [legacy_bounds(values, clusters, options) for values, clusters in requests]
    if what in ("compare", "both"):
        assert b is not None
        compare_runs(a, b, "a", "b", options=options)
    seconds = time.perf_counter() - started
    rss = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before_rss) / 1024
    print(json.dumps({"seconds": seconds, "rss_mib": rss, "input_mib": (before_rss - start_rss) / 1024,
                      "bootstraps": len(requests) if requests else None}))


def measure(what: str, tasks: int, trials: int, resamples: int = 4999) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", what, "--tasks", str(tasks), "--trials", str(trials),
                           "--resamples", str(resamples)], capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"worker {what} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


PLAN = {"aggregate": ("aggregate", 1, 1), "points": ("points", 1, 1), "compare": ("compare", 1, 1),
        "both": ("both", 1, 1), "shared": ("shared", 1, 1), "legacy": ("legacy", 1, 1),
        "aggregate_small": ("aggregate", 10, 1), "aggregate_4x_resamples": ("aggregate", 1, 4)}
"""measurement -> (worker, tasks divided by, resamples multiplied by)."""


def run_bench(tasks: int, trials: int, runs: int) -> list[dict]:
    found: dict[str, list[dict]] = {k: [] for k in PLAN}
    small = max(30, tasks // 10)
    for _ in range(runs):
        for key, (what, divide, times) in PLAN.items():
            found[key].append(measure(what, tasks if divide == 1 else small, trials, 4999 * times))
    secs = {k: [m["seconds"] for m in v] for k, v in found.items()}
    rss = {k: [m["rss_mib"] for m in v] for k, v in found.items()}
    med = {k: median(v) for k, v in secs.items()}
    mem = {k: median(v) for k, v in rss.items()}
    size, extra = f"{tasks} tasks x {trials} trials", {"tasks": tasks, "trials": trials}
    input_big = median([m["input_mib"] for m in found["aggregate"]])
    input_small = median([m["input_mib"] for m in found["aggregate_small"]])
    return [
        figure("stats_aggregate_time", "s", med["aggregate"], med["points"], secs["aggregate"], secs["points"],
               f"aggregate() with every interval on {size}, vs the point figures alone", ratio="value/baseline",
               target="< 5 s", meets_target=med["aggregate"] < 5.0, extra=extra),
        figure("stats_intervals_vs_bootstrap_speedup", "s", med["shared"], med["legacy"], secs["shared"],
               secs["legacy"], f"the {found['shared'][0]['bootstraps']} scenario-aware intervals of one aggregate on "
               f"{size} vs one paired scipy BCa bootstrap per quantity (the method before issue 35)", extra=extra),
        figure("stats_compare_time", "s", med["compare"], med["points"], secs["compare"], secs["points"],
               f"compare_runs() of two runs of {size}, vs the point figures of one", ratio="value/baseline",
               target="< 5 s", meets_target=med["compare"] < 5.0, extra=extra),
        figure("stats_aggregate_rss_vs_resamples", "MiB", mem["aggregate_4x_resamples"], mem["aggregate"],
               rss["aggregate_4x_resamples"], rss["aggregate"],
               f"peak RSS growth of aggregate() with 19,996 resamples vs 4,999 on {size}: flat (ratio ~1)",
               ratio="value/baseline", target="ratio < 1.2", meets_target=mem["aggregate_4x_resamples"] < 1.2 * max(
                   mem["aggregate"], 1.0), extra=extra),
        figure("stats_aggregate_rss_vs_size", "MiB", mem["aggregate"], mem["aggregate_small"], rss["aggregate"],
               rss["aggregate_small"], f"peak RSS growth of aggregate() at {tasks} tasks vs {small}; the rows "
               f"themselves grow {input_big:.0f} MiB vs {input_small:.0f} MiB", ratio="value/baseline",
               target="grows no more than the rows", meets_target=mem["aggregate"] / max(mem["aggregate_small"], 1.0)
               <= max(1.0, input_big / max(input_small, 1.0)),
               extra={**extra, "rows_mib": round(input_big, 1), "rows_mib_small": round(input_small, 1)}),
        figure("stats_peak_rss_delta", "MiB", mem["both"], input_big, rss["both"], [input_big],
               f"peak RSS growth of aggregate + compare at {size}, vs the RSS of building one run's rows",
               ratio="value/baseline", target="< 100 MiB at full size", meets_target=mem["both"] < 100.0, extra=extra),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smoke mode: 2,000 tasks x 3 trials, one run")
    parser.add_argument("--worker", choices=("aggregate", "points", "compare", "both", "shared", "legacy"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--resamples", type=int, default=4999, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.tasks, args.trials, args.resamples)
        return
    print_machine("bench_stats")
    tasks, trials, runs = (2000, 3, 1) if args.quick else (args.tasks, args.trials, args.runs)
    for line in run_bench(tasks, trials, runs):
        emit(line)


if __name__ == "__main__":
    main()
