"""Confidence intervals for proportions: Wilson over independent units, a cluster bootstrap over scenarios.

Contract:
- `wilson(successes, n, options, scale)`: the Wilson score interval of successes / n (statsmodels'
  `proportion_confint(method="wilson")`), times `scale` (100 for points, 1 for ratios); None when n = 0.
- `cluster_bootstrap(values, clusters, options, scale)`: the interval of the mean of `values` (each
  in [0, 1]: a battle's verdict, a task's pass^k) when units of one cluster (an AppWorld scenario:
  its task variants and their trials) are correlated. Scenarios are resampled with replacement and
  the statistic is sum(values) / count(units) over the resampled scenarios (scipy's
  `stats.bootstrap`, BCa, paired over each scenario's sum and count, seeded; the percentile method
  above `BCA_MAX_CLUSTERS` scenarios). When there are fewer
  than two scenarios, or every scenario has the same mean (all pass, all fail: the bootstrap has no
  spread to show), it returns the Wilson interval of the same units and says so in `method`.
- `mean_intervals(values, clusters, options, scale)`: both, as (cluster, wilson).
Both bounds are clipped to [0, scale] and rounded (2 decimals for points, 4 for ratios).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from green_agent.models.eval_run import Interval

DEFAULT_LEVEL = 0.95
DEFAULT_RESAMPLES = 4999
DEFAULT_SEED = 27
BATCH = 200
"""Resamples scipy evaluates at once: bounds memory at BATCH x scenarios floats, whatever the run's size."""
BCA_MAX_CLUSTERS = 1000
"""Above this many scenarios the percentile method is used: BCa's jackknife costs scenarios^2, and with that
many scenarios BCa's correction is negligible."""


class IntervalOptions(NamedTuple):
    """Level, bootstrap resamples and seed of every interval of one report."""

    level: float = DEFAULT_LEVEL
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED


def check_level(level: float) -> float:
    """The level if it is a usable confidence level (0.5 <= level < 1), else ValueError naming it."""
    if not 0.5 <= level < 1:
        raise ValueError(f"confidence level {level} is not in [0.5, 1): give e.g. 0.95")
    return level


def _rounded(low: float, high: float, scale: float, level: float, method: str) -> Interval:
    digits = 2 if scale > 1 else 4
    low, high = max(0.0, min(scale, low)), max(0.0, min(scale, high))
    return Interval(low=round(low, digits), high=round(high, digits), level=level, method=method)


def wilson(successes: float, n: int, options: IntervalOptions = IntervalOptions(), scale: float = 100.0,
           note: str = "") -> Interval | None:
    """Wilson score interval of successes / n, scaled; None when n is 0."""
    if n <= 0:
        return None
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, n, alpha=1 - options.level, method="wilson")
    return _rounded(float(low) * scale, float(high) * scale, scale, options.level, "wilson" + note)


def cluster_sums(values: Sequence[float], clusters: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster (sorted by id): the sum of its values and its number of units."""
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster ids")
    _, inverse = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    sums = np.bincount(inverse, weights=np.asarray(values, dtype=float))
    counts = np.bincount(inverse).astype(float)
    return sums, counts


def _ratio(sums: np.ndarray, counts: np.ndarray, axis: int = -1) -> np.ndarray:
    return sums.sum(axis=axis) / counts.sum(axis=axis)


class Bounds(NamedTuple):
    """Raw bootstrap bounds of a mean and how they were found."""

    low: float
    high: float
    method: str


def bootstrap_bounds(values: Sequence[float], clusters: Sequence[str], options: IntervalOptions = IntervalOptions()
                     ) -> Bounds | None:
    """Cluster-bootstrap bounds of mean(values) (any real values); None when it has no spread to show.

    None when there are fewer than two clusters or every cluster has the same mean.
    """
    if not len(values):
        return None
    sums, counts = cluster_sums(values, clusters)
    rates = sums / counts
    if len(sums) < 2 or np.ptp(rates) == 0:
        return None
    from scipy import stats

    kind = "BCa" if len(sums) <= BCA_MAX_CLUSTERS else "percentile"
    result = stats.bootstrap((sums, counts), _ratio, paired=True, vectorized=True, n_resamples=options.resamples,
                             batch=BATCH, confidence_level=options.level, method=kind,
                             rng=np.random.default_rng(options.seed))
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    method = f"cluster bootstrap over {len(sums)} scenarios ({kind}, {options.resamples} resamples, seed {options.seed})"
    if not (np.isfinite(low) and np.isfinite(high)):  # BCa undefined on this sample: fall back to percentiles
        tails = [(1 - options.level) / 2, (1 + options.level) / 2]
        low, high = (float(q) for q in np.quantile(result.bootstrap_distribution, tails))
        method = method.replace("BCa", "percentile")
    return Bounds(low, high, method)


def no_spread_reason(clusters: Sequence[str]) -> str:
    return "one scenario" if len(set(clusters)) < 2 else "every scenario alike"


def cluster_bootstrap(values: Sequence[float], clusters: Sequence[str], options: IntervalOptions = IntervalOptions(),
                      scale: float = 100.0) -> Interval | None:
    """Cluster (scenario) bootstrap interval of mean(values) in [0, 1]; Wilson when it cannot spread (module doc)."""
    if not len(values):
        return None
    bounds = bootstrap_bounds(values, clusters, options)
    if bounds is None:
        return wilson(float(np.sum(values)), len(values), options, scale,
                      f" ({no_spread_reason(clusters)}: no bootstrap spread)")
    return _rounded(bounds.low * scale, bounds.high * scale, scale, options.level, bounds.method)


def mean_intervals(values: Sequence[float], clusters: Sequence[str], options: IntervalOptions = IntervalOptions(),
                   scale: float = 100.0) -> tuple[Interval | None, Interval | None]:
    """(cluster bootstrap, Wilson) intervals of mean(values)."""
    return (cluster_bootstrap(values, clusters, options, scale),
            wilson(float(np.sum(values)), len(values), options, scale))
