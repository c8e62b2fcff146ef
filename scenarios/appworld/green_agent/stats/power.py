"""The minimum detectable difference of a paired comparison of two runs: what this many scenarios can tell.

Contract: `minimum_detectable_difference(tasks, pooled_rate, trials_a, trials_b, alpha, power,
scenarios, design_effect)` is the difference in TGC points that a two-sided paired test at `alpha`
detects with probability `power`. The test is over scenarios, as `compare`'s is: the effect size comes
from statsmodels (`TTestPower().solve_power`, a paired t-test with `scenarios` pairs, hence
scenarios - 1 degrees of freedom). The standard deviation of a scenario's mean difference is a
planning value that does not depend on the difference observed: each task's verdict is taken as an
independent draw at the runs' pooled pass rate p, averaged over each run's trials, sd_task =
sqrt(p (1 - p) (1/trials_a + 1/trials_b)) (the largest per-task spread a pass rate p allows), and a
scenario of m = tasks / scenarios tasks averages them with the design effect D (1: its tasks
independent; m: as one task): sd = sd_task sqrt(D / m). A pooled rate of 0 or 1 is taken as half a
task away from it, so two perfect (or two empty) runs still state a threshold. Without `scenarios`
every task is its own scenario (the figure before issue 35). None with fewer than two scenarios.
"""

from __future__ import annotations

from math import sqrt

DEFAULT_POWER = 0.8


def assumption(pooled_rate: float, design_effect: float | None = None, measured: bool = True) -> str:
    """What `minimum_detectable_difference` assumes, in words for the verdict sentence."""
    alike = "" if design_effect is None else (
        f", and the tasks of a scenario as alike as these runs show (design effect {design_effect:.1f})" if measured
        else f", and the tasks of a scenario as one task (design effect {design_effect:.1f}: every task's pooled "
             "rate is the same, so these runs cannot show how alike they are)")
    return (f"assuming every trial an independent draw at the pooled {100 * pooled_rate:.0f}% pass rate, the widest "
            f"spread per task{alike}, so agents that find the same tasks hard can be told apart at smaller gaps")


def minimum_detectable_difference(tasks: int, pooled_rate: float, trials_a: int = 1, trials_b: int = 1,
                                  alpha: float = 0.05, power: float = DEFAULT_POWER, scenarios: int | None = None,
                                  design_effect: float = 1.0) -> float | None:
    """Smallest TGC difference (points) detected with `power` at `alpha` (module docstring)."""
    groups = tasks if scenarios is None else scenarios
    if groups < 2 or tasks < 1:
        return None
    from statsmodels.stats.power import TTestPower

    effect = float(TTestPower().solve_power(effect_size=None, nobs=groups, alpha=alpha, power=power,
                                            alternative="two-sided"))
    half_task = 0.5 / tasks
    rate = min(max(pooled_rate, half_task), 1 - half_task)
    per_scenario = tasks / groups
    sd = sqrt(rate * (1 - rate) * (1 / max(1, trials_a) + 1 / max(1, trials_b)) * design_effect / per_scenario)
    return round(100 * effect * sd, 1)
