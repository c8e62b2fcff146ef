"""Intervals, stability and power (green_agent.stats) against known values and data built to show each property."""

from __future__ import annotations

import pytest

from green_agent.batch.aggregate import aggregate, scenario_of
from green_agent.models.eval_run import EvalRow
from green_agent.stats.cluster import cluster_fit, difference_bounds, proportion_bounds
from green_agent.stats.intervals import IntervalOptions, check_level, cluster_interval, mean_intervals, wilson
from green_agent.stats.power import minimum_detectable_difference
from green_agent.stats.stability import stability


def row(task: str, passed: bool, trial: int = 1, difficulty: int = 1, outcome: str | None = None) -> EvalRow:
    outcome = outcome or ("passed" if passed else "failed")
    return EvalRow(task_id=task, trial=trial, scenario_id=scenario_of(task), difficulty=difficulty,
                   battle_id=f"b-{task}-{trial}", status="infra_error" if outcome == "infra_error" else "completed",
                   outcome=outcome, passed=outcome == "passed", result_path=f"tasks/{task}/result.json")


@pytest.mark.parametrize(("successes", "n", "low", "high"), [
    (81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)])
def test_wilson_matches_newcombes_textbook_cases(successes: int, n: int, low: float, high: float) -> None:
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3.
    interval = wilson(successes, n, scale=1.0)
    assert interval is not None and (interval.low, interval.high) == (low, high) and interval.method == "wilson"


def test_wilson_in_points_and_at_another_level() -> None:
    at95, at90 = wilson(13, 21), wilson(13, 21, IntervalOptions(level=0.90))
    assert at95 is not None and at90 is not None
    assert (at95.low, at95.high) == (40.88, 79.25)
    assert at95.low < at90.low < at90.high < at95.high and at90.level == 0.90
    assert wilson(0, 0) is None


def test_the_level_must_be_a_confidence_level() -> None:
    assert check_level(0.9) == 0.9
    for bad in (1.0, 0.3, 95):
        with pytest.raises(ValueError, match="not in"):
            check_level(bad)


def expected_bounds(values: list[float], clusters: list[str], level: float = 0.95) -> tuple[float, float]:
    """The design-effect Wilson interval computed here from statsmodels' and scipy's own calls (cluster.py's contract)."""
    import numpy as np
    import statsmodels.api as sm
    from scipy import stats
    from statsmodels.stats.proportion import proportion_confint

    y = np.asarray(values)
    codes = np.unique(clusters, return_inverse=True)[1]
    fit = sm.OLS(y, np.ones(len(y))).fit(cov_type="cluster", cov_kwds={"groups": codes}, use_t=True)
    assert fit.df_resid_inference == codes.max()  # statsmodels' own small-sample df: scenarios - 1
    p, n = y.mean(), len(y)
    effective = min(n, n * p * (1 - p) / n / fit.bse[0] ** 2)
    means = np.bincount(codes, weights=y) / np.bincount(codes)
    informative = int(np.sum(means > 0) if p < 0.5 else np.sum(means < 1))
    df = min(codes.max(), 2 * informative)
    alpha = 2 * stats.norm.sf(stats.t.ppf((1 + level) / 2, df))
    return proportion_confint(p * effective, effective, alpha=alpha, method="wilson")


@pytest.mark.parametrize("pattern", ["mixed", "correlated", "rare"])
def test_the_scenario_aware_interval_matches_statsmodels_and_scipy(pattern: str) -> None:
    clusters = [f"s{i // 3}" for i in range(21)]
    values = {"mixed": [float(i % 5 < 3) for i in range(21)],
              "correlated": [float((i // 3) % 3 == 0) for i in range(21)],
              "rare": [float(i in (4, 5)) for i in range(21)]}[pattern]
    low, high = expected_bounds(values, clusters)
    ci = cluster_interval(values, clusters)
    assert ci is not None and (ci.low, ci.high) == (round(100 * low, 2), round(100 * high, 2))
    assert ci.method.startswith("wilson with a scenario design effect over 7 scenarios")
    assert 0.0 <= ci.low < 100 * sum(values) / 21 < ci.high <= 100.0


def test_a_known_value_and_another_level() -> None:
    clusters = [f"s{i // 3}" for i in range(21)]
    values = [float(i % 5 < 3) for i in range(21)]  # 13 of 21, mixed within scenarios
    at95, at90 = cluster_interval(values, clusters), cluster_interval(values, clusters, IntervalOptions(level=0.9))
    assert at95 is not None and at90 is not None
    assert (at95.low, at95.high) == (34.71, 83.24)  # wider than Wilson's 40.88-79.25: t with 6 df, not z
    assert at95.low < at90.low < at90.high < at95.high and at90.level == 0.9
    assert "(18.4 effective units of 21, t with 6 df)" in at95.method  # scenarios differ a little: a small one


def test_all_pass_and_all_fail_runs_get_clopper_pearson_over_the_scenarios_not_a_zero_width_one() -> None:
    from statsmodels.stats.proportion import proportion_confint

    clusters = [f"s{i // 3}" for i in range(21)]
    all_pass, wil = mean_intervals([1.0] * 21, clusters)
    low, _ = proportion_confint(7, 7, alpha=0.05, method="beta")  # each scenario counted once
    assert all_pass is not None and wil is not None and (all_pass.low, all_pass.high) == (round(100 * low, 2), 100.0)
    assert all_pass.low == 59.04 < wil.low == 84.54  # 7 scenarios, not 21 independent tasks
    assert all_pass.method == "clopper-pearson over 7 scenarios (each counted once: every unit passed)"
    all_fail, _ = mean_intervals([0.0] * 21, clusters)
    assert all_fail is not None and (all_fail.low, all_fail.high) == (0.0, 40.96)


def test_one_scenario_gets_no_interval_beside_wilson() -> None:
    ci, wil = mean_intervals([1.0, 0.0, 1.0], ["s0"] * 3)
    assert ci is None and wil is not None and (wil.low, wil.high) == (20.77, 93.85)
    agg = aggregate([row("aaa_1", True)], expected_battles=1)
    assert agg.tgc == 100.0 and agg.tgc_ci is None and agg.sgc_ci is None and agg.tgc_wilson is not None
    assert cluster_interval([], []) is None and proportion_bounds([0.5], ["a"], 0.95) is None


def test_two_scenarios_give_a_wide_interval_inside_the_scale() -> None:
    ci = cluster_interval([1.0, 1.0, 0.0, 0.0, 1.0, 0.0], ["a", "a", "a", "b", "b", "b"])
    assert ci is not None and 0.0 <= ci.low < 10.0 and 90.0 < ci.high <= 100.0 and "t with 1 df" in ci.method
    ratio = cluster_interval([1.0, 0.5, 0.0, 0.25], ["a", "a", "b", "b"], scale=1.0)  # pass^k values, a ratio
    assert ratio is not None and 0.0 <= ratio.low <= 0.4375 <= ratio.high <= 1.0


def test_correlated_scenarios_widen_the_interval_beyond_wilson_and_mixed_ones_never_narrow_it() -> None:
    # 30 scenarios of 3 tasks; in the correlated data a scenario's three tasks pass or fail together.
    clusters = [f"s{i // 3}" for i in range(90)]
    correlated = [float((i // 3) % 2 == 0) for i in range(90)]       # 15 scenarios all pass, 15 all fail
    independent = [float(i % 2 == 0) for i in range(90)]             # every scenario mixed
    ci_corr, wil_corr = mean_intervals(correlated, clusters)
    ci_ind, wil_ind = mean_intervals(independent, clusters)
    assert ci_corr is not None and wil_corr is not None and ci_ind is not None and wil_ind is not None
    width = {name: i.high - i.low for name, i in
             {"corr": ci_corr, "wil": wil_corr, "ind": ci_ind, "wil_ind": wil_ind}.items()}
    assert width["corr"] > 1.5 * width["wil"]  # 30 effective units, not 90: about sqrt(3) wider
    assert width["wil_ind"] <= width["ind"] < 1.1 * width["wil_ind"]  # the design effect is kept >= 1


def test_the_paired_difference_joins_gains_and_losses() -> None:
    import numpy as np

    clusters = [f"s{i // 3}" for i in range(21)]
    same = difference_bounds(np.zeros(21), clusters, 0.95)
    assert same is not None and same.low == -same.high and 0.3 < same.high < 0.5  # Clopper-Pearson's 0 of 7
    gained = difference_bounds(np.ones(21), clusters, 0.95)
    assert gained is not None and gained.high == 1.0 and 0.3 < gained.low < 0.6
    mixed = np.array([1.0, 0.0, -1.0] * 7)
    found = difference_bounds(mixed, clusters, 0.95)
    assert found is not None and -1 <= found.low < 0 < found.high <= 1 and "MOVER" in found.method
    assert difference_bounds(np.ones(3), ["a"] * 3, 0.95) is None
    fit = cluster_fit(mixed, clusters)
    assert fit.scenarios == 7 and fit.variance == 0.0  # every scenario's mean is 0: no spread between them


def test_trials_are_units_of_their_scenario() -> None:
    # 3 trials of 7 scenarios x 3 tasks: 63 units but still 7 scenarios, and the same verdicts thrice say no more
    rows = [row(f"s{i // 3}_{i % 3 + 1}", i % 5 < 3, trial=t) for i in range(21) for t in (1, 2, 3)]
    agg = aggregate(rows, expected_battles=63, trials=3)
    one = aggregate([r for r in rows if r.trial == 1], expected_battles=21)
    assert agg.tgc_ci is not None and one.tgc_ci is not None and "over 7 scenarios" in agg.tgc_ci.method
    assert agg.tgc_wilson is not None and one.tgc_wilson is not None
    assert agg.tgc_wilson.high - agg.tgc_wilson.low < one.tgc_wilson.high - one.tgc_wilson.low  # Wilson: 63 coins
    assert agg.tgc_ci.high - agg.tgc_ci.low > 0.9 * (one.tgc_ci.high - one.tgc_ci.low)  # ours: not fooled


def test_aggregate_carries_every_interval_and_follows_the_headline_over_the_task_set() -> None:
    rows = [row(f"s{i // 3}_{i % 3 + 1}", i % 4 != 0, difficulty=i % 3 + 1) for i in range(21)]
    rows.append(row("zzz_1", False, outcome="infra_error"))
    agg = aggregate(rows, expected_battles=22, options=IntervalOptions(level=0.9))
    assert agg.confidence_level == 0.9 and agg.tgc_ci is not None and agg.tgc_wilson is not None
    assert agg.tgc_ci.level == agg.tgc_wilson.level == 0.9
    # the headline counts the infra error as not passed (22 battles); so do its intervals
    assert agg.tgc_wilson == wilson(agg.passed, 22, IntervalOptions(level=0.9))
    assert "over 8 scenarios" in agg.tgc_ci.method
    assert agg.tgc_ci.low <= agg.tgc <= agg.tgc_ci.high  # type: ignore[operator]
    assert agg.sgc_ci is not None and agg.sgc_ci.level == 0.9 and "over 8 scenarios" in agg.sgc_ci.method
    with_results = [r for r in rows if r.task_id != "s0_2"]  # s0_2 (a pass) has no result yet: not passed
    missing = aggregate(with_results, 22, 1, [r.task_id for r in rows])
    assert missing.passed == agg.passed - 1 and missing.tgc_wilson == wilson(agg.passed - 1, 22)
    assert all(s.ci is not None and s.wilson is not None for s in agg.tgc_by_difficulty.values())
    assert agg.pass_hat_k_ci is None and agg.stability is None  # one trial


def test_stability_flip_rate_histogram_and_spread() -> None:
    verdicts = {"a_1": [True, False, True, False], "a_2": [True] * 4, "b_1": [False] * 4, "b_2": [True, True, True, False]}
    stab = stability(verdicts, {t: scenario_of(t) for t in verdicts}, {"1": 75.0, "2": 50.0, "3": 75.0, "4": 25.0})
    assert stab.tasks == 4 and stab.flip_rate == 50.0 and stab.flaky_tasks == ["a_1", "b_2"]
    assert stab.pass_rate_histogram == {"0/4": 1, "1/4": 0, "2/4": 1, "3/4": 1, "4/4": 1}
    assert stab.flip_rate_ci is not None and stab.flip_rate_ci.low < 50.0 < stab.flip_rate_ci.high
    # a_1 disagrees between two trials drawn without replacement w.p. 2*2*2/(4*3) = 2/3, b_2 w.p. 1/2
    assert stab.tgc_spread_mean is not None and 10.0 < stab.tgc_spread_mean < 25.0
    assert stab.tgc_spread_p95 == 50.0  # both flaky tasks disagreeing the same way: 2 of 4 tasks
    steady = stability({"a_1": [True, True], "b_1": [False, False]}, {"a_1": "a", "b_1": "b"}, {})
    assert steady.flip_rate == 0.0 and steady.tgc_spread_mean == 0.0 and steady.tgc_spread_p95 == 0.0


def test_aggregate_with_trials_has_pass_k_intervals_and_stability() -> None:
    rows = [row(f"s{i // 3}_{i % 3 + 1}", (i + t) % 3 != 0, trial=t) for i in range(12) for t in (1, 2, 3)]
    agg = aggregate(rows, expected_battles=36, trials=3)
    assert agg.pass_hat_k_ci is not None and set(agg.pass_hat_k_ci) == {"1", "2", "3"}
    assert agg.pass_at_k_ci is not None and agg.pass_hat_k is not None
    for k, interval in agg.pass_hat_k_ci.items():
        assert 0.0 <= interval.low <= agg.pass_hat_k[k] <= interval.high <= 1.0
    assert agg.stability is not None and agg.stability.flip_rate == 100.0  # every task fails exactly one trial
    assert agg.stability.tgc_by_trial == {"1": 66.67, "2": 66.67, "3": 66.67}


def test_minimum_detectable_difference_follows_statsmodels_and_shrinks_with_tasks_and_trials() -> None:
    from statsmodels.stats.power import TTestPower

    effect = TTestPower().solve_power(effect_size=None, nobs=21, alpha=0.05, power=0.8)
    assert minimum_detectable_difference(21, 0.5) == round(100 * effect * (0.5 * 0.5 * 2) ** 0.5, 1) == 45.4
    assert minimum_detectable_difference(100, 0.5) == 20.0
    assert minimum_detectable_difference(21, 0.5, 3, 3) < minimum_detectable_difference(21, 0.5)  # type: ignore[operator]
    assert 0 < minimum_detectable_difference(21, 1.0) < minimum_detectable_difference(21, 0.8)  # type: ignore[operator]
    assert minimum_detectable_difference(1, 0.5) is None
