"""The paired ratio of two runs over the same scenarios, and its interval: a reliability run's `r_fault`.

Input: per scenario (the unit of independent evidence, `green_agent.stats.cluster`), the summed pass rates of its
tasks in the baseline run and in the faulted run (for SGC: its scenario-trials passed). Output (`PairedRatio`):
- the ratio = sum(faulted) / sum(baseline): TGC with faults over TGC without (the same for SGC); None when the
  baseline passed nothing (no ratio is defined). Never capped at 1: chance can make a faulted run pass more;
- its interval: scipy's paired bootstrap over scenarios (`scipy.stats.bootstrap(paired=True)`, BCa, seeded by
  `IntervalOptions.seed`): a scenario's baseline and faulted sums are resampled together, so what the faults
  did to each scenario stays paired. Where BCa is undefined (every resample gives the same ratio, e.g. an agent
  that loses nothing) the percentile interval is given, and the method says so; a resample whose baseline passed
  nothing has no ratio and is dropped by scipy's nan handling of the percentile. None with one scenario
  (`ONE_SCENARIO`): no interval can hold there.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from green_agent.models.eval_run import Interval
from green_agent.stats.intervals import ONE_SCENARIO, IntervalOptions

RESAMPLES = 9999


class PairedRatio(NamedTuple):
    """A paired ratio over scenarios, its interval (None: see `note`) and why there is none."""

    ratio: float | None
    interval: Interval | None
    note: str | None = None


def _ratio(baseline: np.ndarray, faulted: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sum(faulted, axis=axis) / np.sum(baseline, axis=axis)


def paired_ratio(baseline: Sequence[float], faulted: Sequence[float], options: IntervalOptions = IntervalOptions()
                 ) -> PairedRatio:
    """sum(faulted) / sum(baseline) over paired scenarios, with its bootstrap interval (module docstring)."""
    a, b = np.asarray(baseline, dtype=float), np.asarray(faulted, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"{len(a)} baseline scenarios but {len(b)} faulted ones")
    if not len(a) or a.sum() == 0:
        return PairedRatio(None, None, "no ratio: the run without faults passed nothing")
    ratio = float(_ratio(a, b))
    if len(a) < 2:
        return PairedRatio(round(ratio, 4), None, ONE_SCENARIO)
    interval = _bootstrap(a, b, options)
    return PairedRatio(round(ratio, 4), interval, None if interval else "no interval: the bootstrap found none")


def _bootstrap(a: np.ndarray, b: np.ndarray, options: IntervalOptions) -> Interval | None:
    from scipy.stats import bootstrap

    where = f"over {len(a)} scenarios, {RESAMPLES} resamples, seed {options.seed}"
    for method, words in (("BCa", f"paired scenario bootstrap (BCa) {where}"),
                          ("percentile", f"paired scenario bootstrap (percentile: BCa undefined, every resample "
                                         f"alike or some without a baseline pass) {where}")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = bootstrap((a, b), _ratio, paired=True, vectorized=True, confidence_level=options.level,
                              n_resamples=RESAMPLES, method=method, random_state=np.random.default_rng(options.seed))
        low, high = float(found.confidence_interval.low), float(found.confidence_interval.high)
        if np.isfinite(low) and np.isfinite(high):
            return Interval(low=round(max(0.0, low), 4), high=round(high, 4), level=options.level, method=words)
    return None
