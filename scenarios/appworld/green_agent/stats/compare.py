"""The paired comparison of two runs over the same tasks: difference, interval, test, verdict.

Input: one `TaskComparison` per shared task (judged trials and passes in A and in B). Output
(`PairedDifference`), with per-task pass rates r = passed / judged trials:
- TGC of each side = 100 * mean(r); the difference = TGC_B - TGC_A (points);
- its interval: scenario-aware and paired (`cluster.difference_bounds` over r_B - r_A: B's gains and
  losses each bounded over the scenarios, joined); None with one scenario. Two identical runs get an
  interval around 0 as wide as "no change seen on G scenarios" allows, not 0 to 0;
- the test: a paired permutation test over scenarios (`scipy.stats.permutation_test`,
  `permutation_type="samples"` on per-scenario sums of A's and B's rates: A and B swapped within a
  whole scenario, scenarios with no difference left out; exact up to 2^scenarios <= `options.resamples`,
  else that many seeded random swaps). It respects scenarios as the interval does: with G differing
  scenarios its smallest p is 2 / 2^G, so five or fewer can never reach p < 0.05;
- the minimum detectable difference (`power.minimum_detectable_difference`, over scenarios);
- the verdict: B (or A) is better when p < alpha = 1 - level *and* the interval excludes 0; else
  "cannot tell". The message always states the minimum detectable difference in plain words.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from green_agent.models.comparison import PairedDifference, PairedTest, TaskComparison, Verdict
from green_agent.models.eval_run import Interval
from green_agent.stats.cluster import cluster_fit, difference_bounds
from green_agent.stats.intervals import BATCH, ONE_SCENARIO, IntervalOptions
from green_agent.stats.power import DEFAULT_POWER, assumption, minimum_detectable_difference

def _rates(tasks: Sequence[TaskComparison]) -> tuple[np.ndarray, np.ndarray]:
    a = np.array([t.passed_a / t.trials_a for t in tasks], dtype=float)
    b = np.array([t.passed_b / t.trials_b for t in tasks], dtype=float)
    return a, b


def difference_interval(diff: np.ndarray, clusters: list[str], options: IntervalOptions) -> Interval | None:
    """Paired scenario-aware interval of 100 * mean(diff), in points; None with one scenario."""
    if not len(diff):
        return None
    bounds = difference_bounds(diff, clusters, options.level)
    if bounds is None:
        return None
    return Interval(low=round(100 * bounds.low, 2), high=round(100 * bounds.high, 2), level=options.level,
                    method=bounds.method)


def _sum_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return (y - x).sum(axis=axis)


def scenario_sums(tasks: Sequence[TaskComparison]) -> tuple[np.ndarray, np.ndarray]:
    """Per scenario (sorted): the sum of its tasks' pass rates in A and in B."""
    a, b = _rates(tasks)
    ids = sorted({t.scenario_id for t in tasks})
    index = {s: i for i, s in enumerate(ids)}
    codes = np.array([index[t.scenario_id] for t in tasks], dtype=np.int64)
    return np.bincount(codes, weights=a, minlength=len(ids)), np.bincount(codes, weights=b, minlength=len(ids))


def paired_test(tasks: Sequence[TaskComparison], options: IntervalOptions) -> PairedTest:
    """The paired permutation test over scenarios (module docstring)."""
    a, b = _rates(tasks)
    a_only, b_only = int(np.sum(a > b)), int(np.sum(b > a))
    sum_a, sum_b = scenario_sums(tasks)
    differ = ~np.isclose(sum_a, sum_b)  # swapping a tied scenario changes nothing: the same null distribution
    if differ.sum() < 2:  # one differing scenario: its two sign patterns are as extreme as each other
        p = 1.0
    else:
        from scipy.stats import permutation_test

        p = permutation_test((sum_a[differ], sum_b[differ]), _sum_difference, permutation_type="samples",
                             vectorized=True, batch=BATCH, n_resamples=options.resamples,
                             rng=np.random.default_rng(options.seed)).pvalue
    return PairedTest(name="scenario permutation", p_value=float(min(1.0, p)), a_only=a_only, b_only=b_only,
                      scenarios=len(sum_a), scenarios_differing=int(differ.sum()))


def verdict_of(test: PairedTest, ci: Interval | None, difference: float, alpha: float) -> Verdict:
    significant = test.p_value < alpha and ci is not None and (ci.low > 0 or ci.high < 0)
    if not significant or difference == 0:
        return "cannot_tell"
    return "b_better" if difference > 0 else "a_better"


def plain_words(verdict: Verdict, diff: PairedDifference, level: float, power: float, measured: bool = True) -> str:
    """The verdict and the minimum detectable difference as sentences."""
    n = diff.tasks
    ci = f"{level * 100:g}% CI {diff.ci.low:+.1f} to {diff.ci.high:+.1f}" if diff.ci else ONE_SCENARIO
    figures = f"{diff.difference:+.1f} points ({ci}; {diff.test.name} p = {diff.test.p_value:.2g})"
    if verdict == "cannot_tell":
        head = f"Cannot tell A and B apart on {n} task(s): B - A = {figures}."
    else:
        head = f"{'B' if verdict == 'b_better' else 'A'} is better: B - A = {figures} on {n} task(s)."
    if diff.minimum_detectable is None:
        return head + " One scenario is too few to detect any difference."
    pooled = (diff.tgc_a + diff.tgc_b) / 200
    return (head + f" A difference below {diff.minimum_detectable:.0f} points cannot be told apart from noise "
            f"on {n} tasks in {diff.test.scenarios} scenarios ({power * 100:g}% power at the {(1 - level) * 100:g}% "
            f"level; {assumption(pooled, diff.design_effect, measured)}).")


def design_effect(pooled: np.ndarray, scenarios: list[str]) -> tuple[float, bool]:
    """How alike the tasks of a scenario are, from both runs' pooled per-task rates: cluster-robust variance of
    their mean / its variance if tasks were independent, in [1, tasks per scenario]; the largest when undefined.

    Returns (design effect, whether the runs showed it)."""
    per_scenario = len(pooled) / max(1, len(set(scenarios)))
    fit = cluster_fit(pooled, scenarios)
    independent = float(np.var(pooled, ddof=1)) / len(pooled) if len(pooled) > 1 else 0.0
    if fit.scenarios < 2 or independent <= 0:  # every pooled rate alike: nothing shows how alike a scenario's are
        return per_scenario, False
    return min(per_scenario, max(1.0, fit.variance / independent)), True  # scenario means all equal: 1


def paired_difference(tasks: Sequence[TaskComparison], options: IntervalOptions = IntervalOptions(),
                      power: float = DEFAULT_POWER) -> PairedDifference:
    """Difference, interval, test, minimum detectable difference and verdict over `tasks` (module docstring)."""
    a, b = _rates(tasks)
    diff = b - a
    ci = difference_interval(diff, [t.scenario_id for t in tasks], options)
    test = paired_test(tasks, options)
    tgc_a, tgc_b = round(100 * float(a.mean()), 2), round(100 * float(b.mean()), 2)
    difference = round(100 * float(diff.mean()), 2)
    pooled = (a + b) / 2
    scenarios = [t.scenario_id for t in tasks]
    effect, measured = design_effect(pooled, scenarios)
    mdd = minimum_detectable_difference(len(tasks), float(pooled.mean()), max(t.trials_a for t in tasks),
                                        max(t.trials_b for t in tasks), alpha=1 - options.level, power=power,
                                        scenarios=len(set(scenarios)), design_effect=effect)
    verdict = verdict_of(test, ci, difference, 1 - options.level)
    result = PairedDifference(tasks=len(tasks), tgc_a=tgc_a, tgc_b=tgc_b, difference=difference, ci=ci, test=test,
                              minimum_detectable=mdd, design_effect=round(effect, 2), verdict=verdict, message="")
    return result.model_copy(update={"message": plain_words(verdict, result, options.level, power, measured)})
