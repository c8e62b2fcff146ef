"""The paired comparison of two runs over the same tasks: difference, interval, test, verdict.

Input: one `TaskComparison` per shared task (judged trials and passes in A and in B). Output
(`PairedDifference`), with per-task pass rates r = passed / judged trials:
- TGC of each side = 100 * mean(r); the difference = TGC_B - TGC_A (points);
- its interval: a paired cluster bootstrap (`intervals.bootstrap_bounds` over r_B - r_A, scenarios
  resampled); when every scenario has the same difference (two identical runs, or B passes
  everything A fails) there is no spread and the interval is that difference alone, said in `method`;
- the test: with one trial in both runs, the exact McNemar test (`scipy.stats.binomtest` on the
  discordant tasks, p = 0.5); else a paired permutation test on the per-task pass rates
  (`scipy.stats.permutation_test`, `permutation_type="samples"`: A's and B's rate swapped within a
  task, tied tasks left out; exact up to 2^tasks <= `PERMUTATION_RESAMPLES`, else that many seeded
  random swaps: p to 0.001, and scipy's paired generator stays fast on 10,000 tasks). Both take tasks as independent
  pairs, as McNemar does; the interval is the figure that respects scenarios;
- the minimum detectable difference (`power.minimum_detectable_difference`);
- the verdict: B (or A) is better when p < alpha = 1 - level *and* the interval excludes 0; else
  "cannot tell". The message always states the minimum detectable difference in plain words.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from green_agent.models.comparison import PairedDifference, PairedTest, TaskComparison, Verdict
from green_agent.models.eval_run import Interval
from green_agent.stats.intervals import BATCH, IntervalOptions, bootstrap_bounds, no_spread_reason
from green_agent.stats.power import DEFAULT_POWER, assumption, minimum_detectable_difference

PERMUTATION_RESAMPLES = 999


def _rates(tasks: Sequence[TaskComparison]) -> tuple[np.ndarray, np.ndarray]:
    a = np.array([t.passed_a / t.trials_a for t in tasks], dtype=float)
    b = np.array([t.passed_b / t.trials_b for t in tasks], dtype=float)
    return a, b


def difference_interval(diff: np.ndarray, clusters: list[str], options: IntervalOptions) -> Interval | None:
    """Paired cluster-bootstrap interval of 100 * mean(diff), in points."""
    if not len(diff):
        return None
    bounds = bootstrap_bounds(diff, clusters, options)
    if bounds is None:
        point = round(100 * float(diff.mean()), 2)
        return Interval(low=point, high=point, level=options.level,
                        method=f"{no_spread_reason(clusters)}: no bootstrap spread")
    return Interval(low=round(100 * bounds.low, 2), high=round(100 * bounds.high, 2), level=options.level,
                    method="paired " + bounds.method)


def _sum_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return (y - x).sum(axis=axis)


def paired_test(tasks: Sequence[TaskComparison], options: IntervalOptions) -> PairedTest:
    """Exact McNemar with one trial on both sides, else the paired permutation test (module docstring)."""
    a, b = _rates(tasks)
    a_only, b_only = int(np.sum(a > b)), int(np.sum(b > a))
    single = all(t.trials_a == 1 and t.trials_b == 1 for t in tasks)
    if single:
        from scipy.stats import binomtest

        p = binomtest(b_only, a_only + b_only, 0.5).pvalue if a_only + b_only else 1.0
        return PairedTest(name="exact McNemar", p_value=float(p), a_only=a_only, b_only=b_only)
    differ = a != b  # swapping a tied pair changes nothing: leaving ties out gives the same null distribution
    if not differ.any():
        p = 1.0
    else:
        from scipy.stats import permutation_test

        p = permutation_test((a[differ], b[differ]), _sum_difference, permutation_type="samples", vectorized=True, batch=BATCH,
                             n_resamples=PERMUTATION_RESAMPLES, rng=np.random.default_rng(options.seed)).pvalue
    return PairedTest(name="paired permutation", p_value=float(min(1.0, p)), a_only=a_only, b_only=b_only)


def verdict_of(test: PairedTest, ci: Interval | None, difference: float, alpha: float) -> Verdict:
    significant = test.p_value < alpha and ci is not None and (ci.low > 0 or ci.high < 0)
    if not significant or difference == 0:
        return "cannot_tell"
    return "b_better" if difference > 0 else "a_better"


def plain_words(verdict: Verdict, diff: PairedDifference, level: float, power: float) -> str:
    """The verdict and the minimum detectable difference as sentences."""
    n = diff.tasks
    ci = f"{level * 100:g}% CI {diff.ci.low:+.1f} to {diff.ci.high:+.1f}" if diff.ci else "no interval"
    figures = f"{diff.difference:+.1f} points ({ci}; {diff.test.name} p = {diff.test.p_value:.2g})"
    if verdict == "cannot_tell":
        head = f"Cannot tell A and B apart on {n} task(s): B - A = {figures}."
    else:
        head = f"{'B' if verdict == 'b_better' else 'A'} is better: B - A = {figures} on {n} task(s)."
    if diff.minimum_detectable is None:
        return head + " One task is too few to detect any difference."
    pooled = (diff.tgc_a + diff.tgc_b) / 200
    return (head + f" A difference below {diff.minimum_detectable:.0f} points cannot be told apart from noise "
            f"on {n} tasks ({power * 100:g}% power at the {(1 - level) * 100:g}% level; {assumption(pooled)}).")


def paired_difference(tasks: Sequence[TaskComparison], options: IntervalOptions = IntervalOptions(),
                      power: float = DEFAULT_POWER) -> PairedDifference:
    """Difference, interval, test, minimum detectable difference and verdict over `tasks` (module docstring)."""
    a, b = _rates(tasks)
    diff = b - a
    ci = difference_interval(diff, [t.scenario_id for t in tasks], options)
    test = paired_test(tasks, options)
    tgc_a, tgc_b = round(100 * float(a.mean()), 2), round(100 * float(b.mean()), 2)
    difference = round(100 * float(diff.mean()), 2)
    mdd = minimum_detectable_difference(len(tasks), float((a.sum() + b.sum()) / (2 * len(tasks))),
                                        max(t.trials_a for t in tasks), max(t.trials_b for t in tasks),
                                        alpha=1 - options.level, power=power)
    verdict = verdict_of(test, ci, difference, 1 - options.level)
    result = PairedDifference(tasks=len(tasks), tgc_a=tgc_a, tgc_b=tgc_b, difference=difference, ci=ci, test=test,
                              minimum_detectable=mdd, verdict=verdict, message="")
    return result.model_copy(update={"message": plain_words(verdict, result, options.level, power)})
