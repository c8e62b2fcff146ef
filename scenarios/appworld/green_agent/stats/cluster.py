"""Small-sample, scenario-aware bounds of a mean: Wilson with a cluster design effect, and a paired difference.

Contract (raw bounds in the values' own unit; `intervals` rounds, scales and names them):
- `cluster_fit(values, clusters)`: statsmodels' cluster-robust (CR1) variance of mean(values), with
  G - 1 degrees of freedom for G scenarios (`OLS(...).fit(cov_type="cluster", use_t=True)`).
- `proportion_bounds(values, clusters, level)`: bounds of mean(values), each value in [0, 1] (a
  verdict, a task's pass^k), when the units of one scenario are correlated. It is the Wilson score
  interval (statsmodels' `proportion_confint`) over an *effective* number of units, n / deff, where
  the design effect deff = cluster-robust variance / the variance of n independent units at this
  rate (p(1 - p) / n, the largest a [0, 1] value allows), kept in [1, n]; its quantile is Student's
  t (scipy) with G - 1 degrees of freedom (the variance is estimated from G scenarios), and at most
  twice the number of scenarios that hold the rarer outcome (`informative_scenarios`: when two of 56
  scenarios hold every failure, the spread was learned from two), passed to statsmodels as the normal
  level with that quantile. When the rate is 0 or 1 there is no variance to estimate: the interval is
  Clopper-Pearson's (exact, `method="beta"`) over the G scenarios, each counted once as if its tasks
  were one coin (the widest reading the data allow). Bounds stay in [0, 1]. None below two scenarios.
- `difference_bounds(diff, clusters, level)`: bounds of mean(diff), each in [-1, 1] (a task's pass
  rate in B minus in A), by the method of variance estimates recovery (Zou & Donner 2008; Newcombe's
  paired-difference construction): diff = u - v with u = max(diff, 0), v = max(-diff, 0), each bounded
  by `proportion_bounds`, joined with their cluster-robust correlation (one statsmodels fit of u and v
  stacked). Two identical runs give u = v = 0, hence +-(Clopper-Pearson's bound of 0 changes over G
  scenarios), not 0 to 0: no change on 7 scenarios does not rule out a change on 40% of tasks like these.
Measured in `bench/bench_stats_coverage.py` (docs/statistics.md has the figures).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import sqrt
from typing import NamedTuple

import numpy as np


class ClusterFit(NamedTuple):
    mean: float
    variance: float
    scenarios: int


class Raw(NamedTuple):
    """Bounds of a mean and how they were found."""

    low: float
    high: float
    method: str


def _codes(clusters: Sequence[str]) -> np.ndarray:
    return np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)[1]


def cluster_fit(values: Sequence[float], clusters: Sequence[str]) -> ClusterFit:
    """Mean and cluster-robust (CR1) variance of mean(values) over the scenarios (statsmodels)."""
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster ids")
    import statsmodels.api as sm

    y, codes = np.asarray(values, dtype=float), _codes(clusters)
    scenarios = int(codes.max()) + 1 if len(codes) else 0
    if scenarios < 2 or np.ptp(y) == 0:
        return ClusterFit(float(y.mean()) if len(y) else 0.0, 0.0, scenarios)
    fit = sm.OLS(y, np.ones(len(y))).fit(cov_type="cluster", cov_kwds={"groups": codes}, use_t=True)
    return ClusterFit(float(fit.params[0]), float(fit.cov_params()[0, 0]), scenarios)


def t_alpha(level: float, scenarios: int) -> float:
    """The normal two-sided alpha whose quantile is Student's t quantile at `level` with scenarios - 1 df."""
    from scipy import stats

    return float(2 * stats.norm.sf(stats.t.ppf((1 + level) / 2, scenarios - 1)))


def informative_scenarios(values: Sequence[float], clusters: Sequence[str], rate: float) -> int:
    """Scenarios that hold the rarer outcome: with a pass when the rate is below 1/2, else with a non-pass."""
    codes = _codes(clusters)
    sums = np.bincount(codes, weights=np.asarray(values, dtype=float))
    counts = np.bincount(codes)
    means = sums / counts
    return int(np.sum(means > 0) if rate < 0.5 else np.sum(means < 1))


def proportion_bounds(values: Sequence[float], clusters: Sequence[str], level: float) -> Raw | None:
    """Wilson over the effective number of units, t with G - 1 df (module docstring); None below 2 scenarios."""
    from statsmodels.stats.proportion import proportion_confint

    fit = cluster_fit(values, clusters)
    n, g, p = len(values), fit.scenarios, min(1.0, max(0.0, fit.mean))
    if g < 2:
        return None
    independent = p * (1 - p) / n
    if independent <= 0:  # every unit passed (or none did): nothing to estimate a variance from
        low, high = proportion_confint(round(p) * g, g, alpha=1 - level, method="beta")
        return Raw(float(low), float(high), f"clopper-pearson over {g} scenarios (each counted once: "
                                            f"every unit {'passed' if p else 'failed'})")
    effective = n if fit.variance <= 0 else min(n, max(1.0, n * independent / fit.variance))
    df = min(g - 1, 2 * informative_scenarios(values, clusters, p))
    low, high = proportion_confint(p * effective, effective, alpha=t_alpha(level, df + 1), method="wilson")
    return Raw(max(0.0, float(low)), min(1.0, float(high)),
               f"wilson with a scenario design effect over {g} scenarios ({effective:.1f} effective units of {n}, "
               f"t with {df} df)")


def _correlation(u: np.ndarray, v: np.ndarray, clusters: Sequence[str]) -> float:
    """Cluster-robust correlation of mean(u) and mean(v): one statsmodels fit of both, stacked; 0 if undefined."""
    if np.ptp(u) == 0 or np.ptp(v) == 0:
        return 0.0
    import statsmodels.api as sm

    codes = _codes(clusters)
    design = np.vstack([np.column_stack([np.ones(len(u)), np.zeros(len(u))]),
                        np.column_stack([np.zeros(len(v)), np.ones(len(v))])])
    cov = sm.OLS(np.concatenate([u, v]), design).fit(cov_type="cluster", cov_kwds={"groups": np.concatenate(
        [codes, codes])}).cov_params()
    scale = sqrt(cov[0, 0] * cov[1, 1])
    return float(cov[0, 1] / scale) if scale > 0 else 0.0


def difference_bounds(diff: Sequence[float], clusters: Sequence[str], level: float) -> Raw | None:
    """Bounds of mean(diff), diff in [-1, 1], from the bounds of its two parts (module docstring)."""
    d = np.asarray(diff, dtype=float)
    u, v = np.clip(d, 0, None), np.clip(-d, 0, None)
    up, down = proportion_bounds(u, clusters, level), proportion_bounds(v, clusters, level)
    if up is None or down is None:
        return None
    mu, mv, r = float(u.mean()), float(v.mean()), _correlation(u, v, clusters)
    below = sqrt(max(0.0, (mu - up.low) ** 2 + (down.high - mv) ** 2 - 2 * r * (mu - up.low) * (down.high - mv)))
    above = sqrt(max(0.0, (up.high - mu) ** 2 + (mv - down.low) ** 2 - 2 * r * (up.high - mu) * (mv - down.low)))
    point, g = mu - mv, len(set(map(str, clusters)))
    return Raw(max(-1.0, point - below), min(1.0, point + above),
               f"paired: B's gains and losses each by wilson with a scenario design effect over {g} scenarios, "
               "joined by their cluster-robust correlation (MOVER)")
