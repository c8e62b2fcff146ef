"""Confidence intervals for proportions: Wilson over independent units, a cluster bootstrap over scenarios.

Contract:
- `wilson(successes, n, options, scale)`: the Wilson score interval of successes / n (statsmodels'
  `proportion_confint(method="wilson")`), times `scale` (100 for points, 1 for ratios); None when n = 0.
- `cluster_bootstrap(values, clusters, options, scale)`: the interval of the mean of `values` (each
  in [0, 1]: a battle's verdict, a task's pass^k) when units of one cluster (an AppWorld scenario:
  its task variants and their trials) are correlated. Scenarios are resampled with replacement and
  the statistic is sum(values) / count(units) over the resampled scenarios (scipy's
  `stats.bootstrap`, BCa, over resampled scenario indices, seeded; the percentile method
  above `BCA_MAX_CLUSTERS` scenarios). When there are fewer
  than two scenarios, or every scenario has the same mean (all pass, all fail: the bootstrap has no
  spread to show), it returns the Wilson interval of the same units and says so in `method`.
- `cluster_bootstraps(requests, options, scale)`: many of them at once; requests over the same set of
  scenarios share one scipy bootstrap (one seeded stream of resampled scenarios; `ClusterRatios`
  turns each resample into per-scenario draw counts and all Q ratios with one matrix product), so
  each gets the interval it would get alone, for the cost of one; memory is one batch of indices
  (`BATCH` x scenarios), whatever the resamples or Q.
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


def cluster_sums(values: Sequence[float], clusters: Sequence[str], with_ids: bool = False):  # noqa: ANN201
    """Per cluster (sorted by id): the sum of its values and its number of units (and the sorted ids)."""
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster ids")
    names = [str(c) for c in clusters]
    ids = sorted(set(names))  # code-point order, as np.unique sorts strings
    index = {name: i for i, name in enumerate(ids)}
    inverse = np.fromiter((index[name] for name in names), dtype=np.int64, count=len(names))
    sums = np.bincount(inverse, weights=np.asarray(values, dtype=float), minlength=len(ids))
    counts = np.bincount(inverse, minlength=len(ids)).astype(float)
    return (sums, counts, tuple(ids)) if with_ids else (sums, counts)


class ClusterRatios:
    """The statistic every cluster bootstrap of one cluster set shares: Q ratios sum / count under one resample.

    `sums` and `counts` are (Q, clusters). Called by scipy with resampled cluster indices `i` (any
    leading shape, clusters last), it counts how often each cluster was drawn (one `bincount`) and
    returns weights @ sums / weights @ counts, shape (Q, *leading): the Q statistics share each
    resample, and memory is the index batch (resamples x clusters), whatever Q is.
    """

    def __init__(self, sums: np.ndarray, counts: np.ndarray) -> None:
        self.sums, self.counts = sums, counts

    def __call__(self, i: np.ndarray, axis: int = -1) -> np.ndarray:
        i = np.asarray(i)
        lead, width = i.shape[:-1], self.sums.shape[1]
        flat = i.reshape(-1, i.shape[-1])
        rows = len(flat)
        offsets = (np.arange(rows, dtype=np.int64) * width)[:, None]
        weights = np.bincount((flat + offsets).ravel(), minlength=rows * width).reshape(rows, width).astype(float)
        ratio = (weights @ self.sums.T) / (weights @ self.counts.T)  # (rows, Q)
        return ratio.T.reshape((len(self.sums), *lead))


class Bounds(NamedTuple):
    """Raw bootstrap bounds of a mean and how they were found."""

    low: float
    high: float
    method: str


def _grouped(sums_counts: Sequence[tuple[np.ndarray, np.ndarray, tuple[str, ...]]]) -> dict[tuple[str, ...], list[int]]:
    """Cluster id set -> the indices of the requests over exactly those clusters (and with spread)."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for index, (sums, counts, ids) in enumerate(sums_counts):
        if len(sums) >= 2 and np.ptp(sums / counts) > 0:
            groups.setdefault(ids, []).append(index)
    return groups


def _group_bounds(sums: np.ndarray, counts: np.ndarray, options: IntervalOptions) -> list[Bounds]:
    """One scipy bootstrap over these clusters for the Q rows of `sums` / `counts` (all with spread)."""
    from scipy import stats

    clusters = sums.shape[1]
    kind = "BCa" if clusters <= BCA_MAX_CLUSTERS else "percentile"
    result = stats.bootstrap((np.arange(clusters),), ClusterRatios(sums, counts), vectorized=True,
                             n_resamples=options.resamples, batch=BATCH, confidence_level=options.level,
                             method=kind, rng=np.random.default_rng(options.seed))
    method = f"cluster bootstrap over {clusters} scenarios ({kind}, {options.resamples} resamples, seed {options.seed})"
    tails = [(1 - options.level) / 2, (1 + options.level) / 2]
    found = []
    for q, (low, high) in enumerate(zip(np.atleast_1d(result.confidence_interval.low),
                                        np.atleast_1d(result.confidence_interval.high))):
        if np.isfinite(low) and np.isfinite(high):
            found.append(Bounds(float(low), float(high), method))
        else:  # BCa undefined on this sample: fall back to percentiles
            low, high = (float(v) for v in np.quantile(result.bootstrap_distribution[q], tails))
            found.append(Bounds(low, high, method.replace("BCa", "percentile")))
    return found


def bootstrap_bounds_many(requests: Sequence[tuple[Sequence[float], Sequence[str]]],
                          options: IntervalOptions = IntervalOptions()) -> list[Bounds | None]:
    """Cluster-bootstrap bounds of mean(values) for each (values, clusters) request; None where it has no spread.

    None for an empty request, fewer than two clusters, or every cluster with the same mean. Requests
    over the same cluster set share one scipy bootstrap (one seeded stream of resampled scenarios),
    so each gets exactly the bounds it would get alone, at the cost of one.
    """
    prepared = []
    for values, clusters in requests:
        sums, counts, ids = cluster_sums(values, clusters, with_ids=True) if len(values) else (
            np.zeros(0), np.zeros(0), ())
        prepared.append((sums, counts, ids))
    found: list[Bounds | None] = [None] * len(requests)
    for members in _grouped(prepared).values():
        bounds = _group_bounds(np.stack([prepared[m][0] for m in members]),
                               np.stack([prepared[m][1] for m in members]), options)
        for member, bound in zip(members, bounds):
            found[member] = bound
    return found


def bootstrap_bounds(values: Sequence[float], clusters: Sequence[str], options: IntervalOptions = IntervalOptions()
                     ) -> Bounds | None:
    """Cluster-bootstrap bounds of mean(values) (any real values); None when it has no spread to show.

    None when there are fewer than two clusters or every cluster has the same mean.
    """
    return bootstrap_bounds_many([(values, clusters)], options)[0]


def no_spread_reason(clusters: Sequence[str]) -> str:
    return "one scenario" if len(set(clusters)) < 2 else "every scenario alike"


def cluster_bootstraps(requests: Sequence[tuple[Sequence[float], Sequence[str]]],
                       options: IntervalOptions = IntervalOptions(), scale: float | Sequence[float] = 100.0
                       ) -> list[Interval | None]:
    """`cluster_bootstrap` of each (values, clusters) request, those over one cluster set in one bootstrap.

    `scale` is one for all, or one per request.
    """
    scales = [float(scale)] * len(requests) if isinstance(scale, (int, float)) else list(scale)
    if len(scales) != len(requests):
        raise ValueError(f"{len(requests)} requests but {len(scales)} scales")
    found: list[Interval | None] = []
    for (values, clusters), bounds, scale in zip(requests, bootstrap_bounds_many(requests, options), scales):
        if not len(values):
            found.append(None)
        elif bounds is None:
            found.append(wilson(float(np.sum(values)), len(values), options, scale,
                                f" ({no_spread_reason(clusters)}: no bootstrap spread)"))
        else:
            found.append(_rounded(bounds.low * scale, bounds.high * scale, scale, options.level, bounds.method))
    return found


def cluster_bootstrap(values: Sequence[float], clusters: Sequence[str], options: IntervalOptions = IntervalOptions(),
                      scale: float = 100.0) -> Interval | None:
    """Cluster (scenario) bootstrap interval of mean(values) in [0, 1]; Wilson when it cannot spread (module doc)."""
    return cluster_bootstraps([(values, clusters)], options, scale)[0]


def mean_intervals(values: Sequence[float], clusters: Sequence[str], options: IntervalOptions = IntervalOptions(),
                   scale: float = 100.0) -> tuple[Interval | None, Interval | None]:
    """(cluster bootstrap, Wilson) intervals of mean(values)."""
    return (cluster_bootstrap(values, clusters, options, scale),
            wilson(float(np.sum(values)), len(values), options, scale))
