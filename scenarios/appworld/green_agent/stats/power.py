"""The minimum detectable difference of a paired comparison of two runs: what this many tasks can tell.

Contract: `minimum_detectable_difference(tasks, pooled_rate, trials_a, trials_b, alpha, power)` is the
difference in TGC points that a two-sided paired test at `alpha` detects with probability `power`
on `tasks` tasks. The effect size comes from statsmodels (`TTestPower().solve_power`, a paired
t-test on per-task differences); the standard deviation of a per-task difference is a planning
value that does not depend on the difference observed: each task's verdict is taken as an
independent draw at the runs' pooled pass rate p, averaged over each run's trials,
sd = sqrt(p (1 - p) (1/trials_a + 1/trials_b)). That is the largest per-task spread a pass rate p
allows, so the figure is conservative: agents whose verdicts are consistent task by task can show
smaller differences than it says. A pooled rate of 0 or 1 is taken as half a task away from it, so
two perfect (or two empty) runs still state a threshold. None with fewer than two tasks.
"""

from __future__ import annotations

from math import sqrt

DEFAULT_POWER = 0.8


def assumption(pooled_rate: float) -> str:
    """What `minimum_detectable_difference` assumes, in words for the verdict sentence."""
    return (f"assuming every trial an independent draw at the pooled {100 * pooled_rate:.0f}% pass rate, the widest "
            "spread per task, so agents that find the same tasks hard can be told apart at smaller gaps")


def minimum_detectable_difference(tasks: int, pooled_rate: float, trials_a: int = 1, trials_b: int = 1,
                                  alpha: float = 0.05, power: float = DEFAULT_POWER) -> float | None:
    """Smallest TGC difference (points) detected with `power` at `alpha` on `tasks` tasks (module docstring)."""
    if tasks < 2:
        return None
    from statsmodels.stats.power import TTestPower

    effect = float(TTestPower().solve_power(effect_size=None, nobs=tasks, alpha=alpha, power=power,
                                            alternative="two-sided"))
    half_task = 0.5 / tasks
    rate = min(max(pooled_rate, half_task), 1 - half_task)
    sd = sqrt(rate * (1 - rate) * (1 / max(1, trials_a) + 1 / max(1, trials_b)))
    return round(100 * effect * sd, 1)
