"""Confidence intervals for proportions: Wilson over independent units, a scenario-aware one over scenarios.

Contract:
- `wilson(successes, n, options, scale)`: the Wilson score interval of successes / n (statsmodels'
  `proportion_confint(method="wilson")`), times `scale` (100 for points, 1 for ratios); None when n = 0.
- `cluster_interval(values, clusters, options, scale)`: the interval of the mean of `values` (each in
  [0, 1]: a battle's verdict, a task's pass^k, a scenario-trial's SGC verdict) when units of one
  cluster (an AppWorld scenario: its task variants and their trials) are correlated: Wilson over the
  effective number of units with Student's t over the scenarios, or Clopper-Pearson over the
  scenarios when every unit passed or none did (`green_agent.stats.cluster.proportion_bounds`; it
  holds its level from 2 scenarios up, measured by `bench/bench_stats_coverage.py`). None with no
  values or one scenario (`ONE_SCENARIO` says why in words): no interval can hold there.
- `cluster_intervals(requests, options, scale)`: many of them.
- `mean_intervals(values, clusters, options, scale)`: both, as (cluster, wilson).
Both bounds are clipped to [0, scale] and rounded (2 decimals for points, 4 for ratios).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from green_agent.models.eval_run import Interval
from green_agent.stats.cluster import proportion_bounds

DEFAULT_LEVEL = 0.95
DEFAULT_RESAMPLES = 999
"""Random resamples of `compare`'s permutation test when it cannot enumerate every sign pattern."""
DEFAULT_SEED = 27
BATCH = 200
"""Resamples scipy evaluates at once: bounds memory at BATCH x scenarios floats, whatever the run's size."""


class IntervalOptions(NamedTuple):
    """Level of every interval of one report; resamples and seed of its random draws (permutation test, spread)."""

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


ONE_SCENARIO = "no interval: one scenario cannot show how scenarios vary"


def cluster_interval(values: Sequence[float], clusters: Sequence[str], options: IntervalOptions = IntervalOptions(),
                     scale: float = 100.0) -> Interval | None:
    """Scenario-aware interval of mean(values), each in [0, 1] (`cluster.proportion_bounds`); None below 2 scenarios."""
    if not len(values):
        return None
    bounds = proportion_bounds(values, clusters, options.level)
    if bounds is None:
        return None
    return _rounded(bounds.low * scale, bounds.high * scale, scale, options.level, bounds.method)


def cluster_intervals(requests: Sequence[tuple[Sequence[float], Sequence[str]]],
                      options: IntervalOptions = IntervalOptions(), scale: float | Sequence[float] = 100.0
                      ) -> list[Interval | None]:
    """`cluster_interval` of each (values, clusters) request; `scale` is one for all, or one per request."""
    scales = [float(scale)] * len(requests) if isinstance(scale, (int, float)) else list(scale)
    if len(scales) != len(requests):
        raise ValueError(f"{len(requests)} requests but {len(scales)} scales")
    return [cluster_interval(values, clusters, options, s) for (values, clusters), s in zip(requests, scales)]


def mean_intervals(values: Sequence[float], clusters: Sequence[str], options: IntervalOptions = IntervalOptions(),
                   scale: float = 100.0) -> tuple[Interval | None, Interval | None]:
    """(scenario-aware, Wilson) intervals of mean(values)."""
    return (cluster_interval(values, clusters, options, scale),
            wilson(float(np.sum(values)), len(values), options, scale))
