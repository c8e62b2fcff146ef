"""The paired ratio of two runs over the same units, and its scenario-clustered interval: an arm's R (r_fault,
R_prompt) against the profile's baseline.

Input: per unit (a task's pass rate over its trials for TGC; a scenario's share of scenario-trials passed for SGC),
its value in the baseline and in the arm, each in [0, 1], and its scenario (the unit of independent evidence,
`green_agent.stats.cluster`). Output (`PairedRatio`):
- the ratio R = mean(arm) / mean(baseline); None when the baseline passed nothing (no ratio is defined). **Never
  capped at 1**: chance can make an arm pass a task the baseline failed, and a cap would hide that and bias the
  mean of R over agents or arms downwards (HAL's capped ratio reads an agent that gains as much as it loses as
  fragile);
- its interval. R = 1 + D / mean(baseline), where D = mean(arm - baseline) is the paired difference, so the
  interval is the paired, scenario-aware interval of D `compare` uses (`cluster.difference_bounds`: the arm's
  gains and its losses each bounded by Wilson with a scenario design effect and t with the scenarios' degrees
  of freedom, Clopper-Pearson over the scenarios when there is none of them, joined by their cluster-robust
  correlation), divided by the baseline's rate on these units, then kept where R can be (0 to 1 / that rate: an
  arm cannot pass more than everything). A baseline that passed every unit leaves no room to gain, so there D is
  minus the share lost, bounded as a proportion alone (`cluster.proportion_bounds`). This keeps its promise
  where a bootstrap cannot: an arm that lost nothing on 7 scenarios resamples to 1 every time (a bootstrap prints [1.00, 1.00] as if certain), while here
  no loss seen on 7 scenarios still allows a loss on up to ~41 % of units like these (the exact binomial bound of
  0 events in 7 scenarios), and a gain as large where the baseline failed. The interval is conditional on the
  baseline's rate on this task set: it says what the perturbation did to these tasks' outcomes, not how the
  baseline itself would vary on another sample of tasks. None with one scenario (`ONE_SCENARIO`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from green_agent.models.eval_run import Interval
from green_agent.stats.cluster import Raw, difference_bounds, proportion_bounds
from green_agent.stats.intervals import ONE_SCENARIO, IntervalOptions

NO_BASELINE_PASS = "no ratio: the baseline passed nothing"


class PairedRatio(NamedTuple):
    """A paired ratio, its interval (None: see `note`) and why there is none."""

    ratio: float | None
    interval: Interval | None
    note: str | None = None


def paired_ratio(baseline: Sequence[float], arm: Sequence[float], clusters: Sequence[str],
                 options: IntervalOptions = IntervalOptions()) -> PairedRatio:
    """mean(arm) / mean(baseline) over paired units, with its interval (module docstring)."""
    a, b = np.asarray(baseline, dtype=float), np.asarray(arm, dtype=float)
    if a.shape != b.shape or len(a) != len(clusters):
        raise ValueError(f"{len(a)} baseline units, {len(b)} arm units, {len(clusters)} clusters")
    if not len(a) or a.sum() == 0:
        return PairedRatio(None, None, NO_BASELINE_PASS)
    base = float(a.mean())
    ratio = float(b.mean()) / base
    groups = [str(c) for c in clusters]
    bounds = difference_bounds(b - a, groups, options.level) if base < 1 else _losses_only(a - b, groups, options)
    if bounds is None:
        return PairedRatio(round(ratio, 4), None, ONE_SCENARIO)
    low, high = max(0.0, 1 + bounds.low / base), min(1 / base, 1 + bounds.high / base)
    method = (f"1 + D / {base:.3f} (the baseline's rate), D the paired difference: {bounds.method}; kept within "
              f"[0, {1 / base:.2f}]")
    return PairedRatio(round(ratio, 4), Interval(low=round(low, 4), high=round(high, 4), level=options.level,
                                                 method=method))


def _losses_only(loss: np.ndarray, clusters: list[str], options: IntervalOptions) -> Raw | None:
    """A baseline that passed every unit has no room to gain: D = -mean(loss), bounded as a proportion."""
    found = proportion_bounds(np.clip(loss, 0, 1), clusters, options.level)
    if found is None:
        return None
    return Raw(-found.high, -found.low, f"the baseline passed every unit, so only losses: {found.method}")
