"""Coverage of the shipped confidence intervals on simulated runs with few to many scenarios.

Run: `.venv/bin/python bench/bench_stats_coverage.py [--reps N] [--resamples B] [--quick]`.

A 95% interval promises that over many runs like this one it holds the true figure 95 times in 100.
This script checks the promise by simulation, calling the intervals the aggregate and `compare` ship
(`green_agent.stats.intervals`, `green_agent.stats.compare`), beside Wilson's over the same units:
- a run is G scenarios (G in 2, 3, 5, 7, 15, 56: two, the dev split's 7, a shard's few, AppWorld's
  test_normal 56) x 3 tasks x K trials (K = 1 and 3);
- scenario s has a pass probability q_s drawn from a Beta shape (the agent's skill on that story); its
  task j has p_sj ~ Beta(4 q_s, 4 (1 - q_s)) (variants of one story are alike, not equal); each
  trial passes with p_sj. Shapes: Beta(1.5, 1.5), Beta(0.5, 0.5) (all-or-nothing stories), Beta(2, 5),
  and all-near-0 Beta(0.3, 15) / all-near-1 Beta(15, 0.3);
- truth is the population figure (what "tasks like these" means): TGC = E[p], SGC = E[prod_j p_sj]
  (all three tasks pass in one trial), pass^K = E[p^K], each from 400,000 simulated scenarios;
- compare's difference: B runs the same tasks with p_B = 1 - (1 - p)^2 (B better) or p_B = p (equal
  agents, independent runs); truth E[p_B - p].
Per (figure, G, K), coverage is the share of `--reps` runs whose interval holds the truth, pooled
over the shapes and the worst shape; mean width is in points (ratio x 100 for pass^K). The Monte
Carlo standard error of a coverage c over n runs is sqrt(c (1 - c) / n): 0.011 at 0.95 over 400 runs
(the worst shape's), 0.005 pooled over 5 shapes.

Figures (one JSON line per figure and size, as `common.figure` prints them): `stats_coverage_<figure>_k<K>_g<G>`,
value = our interval's pooled coverage, baseline = Wilson's over the same units, breakdown per shape
(coverage, mean width, how often no interval was given); target >= 0.93 at the 0.95 level for every
shape. A readable table goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit, figure, print_machine  # noqa: E402

SIZES = (2, 3, 5, 7, 15, 56)
TASKS = 3
SHAPES = {"beta(1.5,1.5)": (1.5, 1.5), "beta(0.5,0.5)": (0.5, 0.5), "beta(2,5)": (2.0, 5.0),
          "near 0": (0.3, 15.0), "near 1": (15.0, 0.3)}
TASK_CONCENTRATION = 4.0
LEVEL = 0.95
TARGET = 0.93


def task_probs(rng: np.random.Generator, shape: tuple[float, float], scenarios: int) -> np.ndarray:
    """(scenarios, TASKS) pass probabilities: a scenario's q, its tasks' p ~ Beta(4q, 4(1-q))."""
    q = np.clip(rng.beta(*shape, size=(scenarios, 1)), 1e-6, 1 - 1e-6)
    return rng.beta(TASK_CONCENTRATION * q, TASK_CONCENTRATION * (1 - q), size=(scenarios, TASKS))


def better(p: np.ndarray) -> np.ndarray:
    return 1 - (1 - p) ** 2


def truths(rng: np.random.Generator, trials: int) -> dict[str, dict[str, float]]:
    """Population values per shape (400,000 scenarios each)."""
    found = {}
    for name, shape in SHAPES.items():
        p = task_probs(rng, shape, 400_000)
        found[name] = {"tgc": float(p.mean()), "sgc": float(p.prod(axis=1).mean()),
                       "pass_hat_k": float((p ** trials).mean()), "diff_better": float((better(p) - p).mean()),
                       "diff_equal": 0.0}
    return found


class Shipped:
    """The intervals the aggregate and `compare` ship, through their public functions (old or new code)."""

    def __init__(self, resamples: int) -> None:
        from green_agent.stats import intervals

        self.intervals = intervals
        self.options = intervals.IntervalOptions(level=LEVEL, resamples=resamples)
        self.new = hasattr(intervals, "cluster_interval")  # issue 35's; before it, the scenario bootstrap
        self.cluster = intervals.cluster_interval if self.new else intervals.cluster_bootstrap

    def mean(self, values: list[float], clusters: list[str]):  # noqa: ANN201 - Interval | None
        return self.cluster(values, clusters, self.options, 1.0)

    def sgc(self, values: list[float], clusters: list[str]):  # noqa: ANN201
        if not self.new:  # before issue 35: Wilson over scenario-trials
            return self.intervals.wilson(float(sum(values)), len(values), self.options, 1.0)
        return self.cluster(values, clusters, self.options, 1.0)

    def wilson(self, values: list[float]):  # noqa: ANN201
        return self.intervals.wilson(float(sum(values)), len(values), self.options, 1.0)

    def difference(self, diff: np.ndarray, clusters: list[str]):  # noqa: ANN201 - Interval in points
        from green_agent.stats.compare import difference_interval

        return difference_interval(diff, clusters, self.options)


class Tally:
    """Coverage and width of one interval over many runs: hits, widths, runs without an interval."""

    def __init__(self) -> None:
        self.hits: list[bool] = []
        self.widths: list[float] = []
        self.missing = 0

    def add(self, interval, truth: float, scale: float = 1.0) -> None:  # noqa: ANN001
        if interval is None:  # no interval printed: counts as not holding the truth
            self.missing += 1
            self.hits.append(False)
            return
        low, high = interval.low / scale, interval.high / scale
        self.hits.append(low - 1e-9 <= truth <= high + 1e-9)
        self.widths.append(100 * (high - low))

    def coverage(self) -> float:
        return float(np.mean(self.hits)) if self.hits else float("nan")

    def width(self) -> float:
        return float(np.mean(self.widths)) if self.widths else float("nan")


def simulate(shipped: Shipped, scenarios: int, trials: int, reps: int, truth: dict, seed: int
             ) -> dict[str, dict[str, dict[str, Tally]]]:
    """figure -> shape -> {"ours", "wilson"} tallies over `reps` simulated runs."""
    rng = np.random.default_rng(seed)
    figures = ("tgc", "sgc", "pass_hat_k", "diff_better", "diff_equal") if trials > 1 else (
        "tgc", "sgc", "diff_better", "diff_equal")
    tallies = {f: {s: {"ours": Tally(), "wilson": Tally()} for s in SHAPES} for f in figures}
    task_clusters = [f"s{g}" for g in range(scenarios) for _ in range(TASKS)]
    unit_clusters = [c for c in task_clusters for _ in range(trials)]
    scen_clusters = [f"s{g}" for g in range(scenarios) for _ in range(trials)]
    for shape_name, shape in SHAPES.items():
        t = truth[shape_name]
        for _ in range(reps):
            p = task_probs(rng, shape, scenarios)
            a = rng.random((scenarios, TASKS, trials)) < p[..., None]
            units = a.astype(float).ravel().tolist()
            tallies["tgc"][shape_name]["ours"].add(shipped.mean(units, unit_clusters), t["tgc"])
            tallies["tgc"][shape_name]["wilson"].add(shipped.wilson(units), t["tgc"])
            scen = a.all(axis=1).astype(float).ravel().tolist()  # (scenario, trial) all tasks passed
            tallies["sgc"][shape_name]["ours"].add(shipped.sgc(scen, scen_clusters), t["sgc"])
            tallies["sgc"][shape_name]["wilson"].add(shipped.wilson(scen), t["sgc"])
            if trials > 1:
                hat = a.all(axis=2).astype(float).ravel().tolist()  # pass^K with K = n: every trial passed
                tallies["pass_hat_k"][shape_name]["ours"].add(shipped.mean(hat, task_clusters), t["pass_hat_k"])
                tallies["pass_hat_k"][shape_name]["wilson"].add(shipped.wilson(hat), t["pass_hat_k"])
            rate_a = a.mean(axis=2).ravel()
            for kind, p_b in (("diff_better", better(p)), ("diff_equal", p)):
                b = rng.random((scenarios, TASKS, trials)) < p_b[..., None]
                diff = b.mean(axis=2).ravel() - rate_a
                tallies[kind][shape_name]["ours"].add(shipped.difference(diff, task_clusters), t[kind], 100.0)
                tallies[kind][shape_name]["wilson"].add(None, t[kind])  # no Wilson for a paired difference
    return tallies


def figures_of(tallies: dict, scenarios: int, trials: int, reps: int) -> list[dict]:
    lines = []
    for name, by_shape in tallies.items():
        ours = [by_shape[s]["ours"].coverage() for s in SHAPES]
        wil = [by_shape[s]["wilson"].coverage() for s in SHAPES]
        pooled = float(np.mean(ours))
        has_wilson = not name.startswith("diff")
        breakdown = {s: {"coverage": round(by_shape[s]["ours"].coverage(), 3),
                         "width": round(by_shape[s]["ours"].width(), 1),
                         "no_interval": by_shape[s]["ours"].missing,
                         **({"wilson_coverage": round(by_shape[s]["wilson"].coverage(), 3),
                             "wilson_width": round(by_shape[s]["wilson"].width(), 1)} if has_wilson else {})}
                     for s in SHAPES}
        lines.append(figure(
            f"stats_coverage_{name}_k{trials}_g{scenarios}", "coverage", pooled,
            float(np.mean(wil)) if has_wilson else None, ours, wil if has_wilson else None,
            f"{name}: share of {reps} simulated runs per shape ({scenarios} scenarios x {TASKS} tasks x {trials} "
            f"trials) whose {LEVEL:g} interval holds the truth, ours (pooled over shapes) vs Wilson's",
            ratio="value/baseline", target=f">= {TARGET} for every shape", meets_target=min(ours) >= TARGET,
            extra={"scenarios": scenarios, "trials": trials, "reps": reps, "worst_shape": round(min(ours), 3),
                   "mean_width": round(float(np.nanmean([by_shape[s]["ours"].width() for s in SHAPES])), 1),
                   "wilson_mean_width": round(float(np.nanmean([by_shape[s]["wilson"].width() for s in SHAPES])), 1)
                   if has_wilson else None, "by_shape": breakdown}))
    return lines


def table(lines: list[dict]) -> str:
    rows = [f"{'figure':<14}{'K':>2}{'G':>4}  {'ours: pooled':>12} {'worst':>6} {'width':>6}   "
            f"{'wilson':>6} {'width':>6}"]
    for line in lines:
        name = line["name"].removeprefix("stats_coverage_").rsplit("_k", 1)[0]
        wilson = f"{line['baseline']:>6.3f} {line['wilson_mean_width']:>6.1f}" if line["baseline"] is not None else ""
        rows.append(f"{name:<14}{line['trials']:>2}{line['scenarios']:>4}  {line['value']:>12.3f} "
                    f"{line['worst_shape']:>6.3f} {line['mean_width']:>6.1f}   {wilson}")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400, help="simulated runs per shape, size and trials")
    parser.add_argument("--resamples", type=int, default=999, help="bootstrap resamples, where one is used")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--trials", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--quick", action="store_true", help="smoke mode: 30 runs per shape at 2 and 7 scenarios")
    args = parser.parse_args()
    print_machine("bench_stats_coverage")
    reps, sizes = (30, [2, 7]) if args.quick else (args.reps, args.sizes)
    started = time.perf_counter()
    lines: list[dict] = []
    for trials in args.trials:
        truth = truths(np.random.default_rng(args.seed), trials)
        for scenarios in sizes:
            tallies = simulate(Shipped(args.resamples), scenarios, trials, reps, truth,
                               args.seed * 1000 + scenarios * 10 + trials)
            for line in figures_of(tallies, scenarios, trials, reps):
                emit(line)
                lines.append(line)
    print(table(lines), file=sys.stderr)
    print(f"# {time.perf_counter() - started:.0f} s, {reps} runs per shape", file=sys.stderr)


if __name__ == "__main__":
    main()
