"""Run-to-run stability of one agent from a run with several trials per task.

Input: per task, its judged verdicts in trial order (`True` passed), and its scenario id. Output
(`Stability`), over the tasks with at least two judged trials:
- flip rate: % of tasks whose verdict differs between trials (passed in some, not all), with a
  scenario-aware interval (`green_agent.stats.intervals`), and those tasks listed;
- the histogram of per-task pass rates (`c/n`: tasks that passed c of their n judged trials, every
  c from 0 to n, zeros included);
- the expected spread of TGC between two single runs: for a task that passed c of n trials, two
  distinct trials drawn at random disagree with probability 2c(n-c)/(n(n-1)), each direction half of
  it. `SPREAD_DRAWS` pairs of single runs are drawn that way (seeded numpy generator, in batches so
  memory stays flat), and the figures are the mean |TGC difference| in points and its 95th
  percentile ("two single runs of this agent differ by up to this much 95% of the time").
TGC of each trial alone is passed in by the caller (it owns TGC's definition).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from green_agent.models.eval_run import Interval, Stability
from green_agent.stats.intervals import IntervalOptions, cluster_interval

SPREAD_DRAWS = 2000
DRAW_CELLS = 2_000_000
"""Random numbers drawn at once (draws x tasks): bounds memory for any run size."""


def tgc_spread(passed: np.ndarray, judged: np.ndarray, seed: int) -> tuple[float, float] | None:
    """(mean, 95th percentile) of |TGC_1 - TGC_2| in points between two simulated single runs."""
    if not len(passed):
        return None
    n, c = judged.astype(float), passed.astype(float)
    disagree = c * (n - c) / (n * (n - 1))  # P(first passes, second fails) = P(first fails, second passes)
    rng = np.random.default_rng(seed)
    per_batch = max(1, DRAW_CELLS // len(n))
    diffs: list[np.ndarray] = []
    for start in range(0, SPREAD_DRAWS, per_batch):
        u = rng.random((min(per_batch, SPREAD_DRAWS - start), len(n)))
        step = (u < disagree).astype(np.int8) - ((u >= disagree) & (u < 2 * disagree)).astype(np.int8)
        diffs.append(np.abs(step.sum(axis=1, dtype=np.int64)) * 100.0 / len(n))
    spread = np.concatenate(diffs)
    return round(float(spread.mean()), 2), round(float(np.quantile(spread, 0.95)), 2)


def flip_units(verdicts: Mapping[str, Sequence[bool]], scenarios: Mapping[str, str]) -> tuple[list[float], list[str]]:
    """The units the flip rate is the mean of: (flipped 1.0 / not 0.0, scenario) per task with >= 2 judged trials."""
    tasks = [t for t, v in verdicts.items() if len(v) >= 2]
    return [float(0 < sum(verdicts[t]) < len(verdicts[t])) for t in tasks], [scenarios[t] for t in tasks]


_COMPUTE = object()


def stability(verdicts: Mapping[str, Sequence[bool]], scenarios: Mapping[str, str],
              tgc_by_trial: Mapping[str, float | None], options: IntervalOptions = IntervalOptions(),
              flip_ci: Interval | None | object = _COMPUTE) -> Stability:
    """Flip rate, pass-rate histogram and TGC spread over tasks with >= 2 judged trials (module docstring).

    `flip_ci`: the flip rate's interval when the caller computed it already (over `flip_units`).
    """
    tasks = [t for t, v in verdicts.items() if len(v) >= 2]
    judged = np.array([len(verdicts[t]) for t in tasks], dtype=np.int64)
    passed = np.array([sum(verdicts[t]) for t in tasks], dtype=np.int64)
    flipped = (passed > 0) & (passed < judged)
    histogram = Counter(zip(judged.tolist(), passed.tolist()))
    spread = tgc_spread(passed, judged, options.seed)
    return Stability(
        tasks=len(tasks),
        flip_rate=round(100.0 * float(flipped.mean()), 2) if tasks else None,
        flip_rate_ci=(cluster_interval(*flip_units(verdicts, scenarios), options) if flip_ci is _COMPUTE
                      else flip_ci),  # type: ignore[arg-type]
        flaky_tasks=[t for t, f in zip(tasks, flipped) if f],
        pass_rate_histogram={f"{c}/{n}": histogram.get((n, c), 0) for n in sorted(set(judged.tolist()))
                             for c in range(n + 1)},
        tgc_by_trial=dict(tgc_by_trial),
        tgc_spread_mean=spread[0] if spread else None, tgc_spread_p95=spread[1] if spread else None)
