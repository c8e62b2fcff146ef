"""Intervals, stability and power (green_agent.stats) against known values and data built to show each property."""

from __future__ import annotations

import pytest

from green_agent.batch.aggregate import aggregate, scenario_of
from green_agent.models.eval_run import EvalRow
from green_agent.stats.intervals import IntervalOptions, check_level, cluster_bootstrap, mean_intervals, wilson
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


def test_the_bootstrap_on_a_fixed_seed_gives_the_same_interval_and_another_seed_a_close_one() -> None:
    values = [float(i % 5 < 3) for i in range(60)]
    clusters = [f"s{i // 3}" for i in range(60)]
    first, again = cluster_bootstrap(values, clusters), cluster_bootstrap(values, clusters)
    other = cluster_bootstrap(values, clusters, IntervalOptions(seed=1))
    assert first == again and first is not None and other is not None
    assert "cluster bootstrap over 20 scenarios (BCa, 4999 resamples, seed 27)" == first.method
    assert first.low < 60.0 < first.high
    assert abs(first.low - other.low) < 3 and abs(first.high - other.high) < 3


def test_all_pass_and_all_fail_runs_state_the_wilson_interval_not_a_zero_width_one() -> None:
    clusters = [f"s{i // 3}" for i in range(21)]
    all_pass, wil = mean_intervals([1.0] * 21, clusters)
    assert all_pass is not None and wil is not None
    assert (all_pass.low, all_pass.high) == (wil.low, wil.high) == (84.54, 100.0)
    assert "every scenario alike: no bootstrap spread" in all_pass.method
    all_fail, _ = mean_intervals([0.0] * 21, clusters)
    assert all_fail is not None and (all_fail.low, all_fail.high) == (0.0, 15.46)


def test_one_task_gets_the_wilson_interval_of_one_battle() -> None:
    ci, wil = mean_intervals([1.0], ["s0"])
    assert ci is not None and wil is not None and (ci.low, ci.high) == (wil.low, wil.high) == (20.65, 100.0)
    assert "one scenario" in ci.method
    agg = aggregate([row("aaa_1", True)], expected_battles=1)
    assert agg.tgc == 100.0 and agg.tgc_ci == ci and agg.sgc_ci is not None and agg.sgc_ci.low == 20.65


def test_correlated_scenarios_widen_the_cluster_interval_beyond_wilson() -> None:
    # 30 scenarios of 3 tasks; in the correlated data a scenario's three tasks pass or fail together.
    clusters = [f"s{i // 3}" for i in range(90)]
    correlated = [float((i // 3) % 2 == 0) for i in range(90)]       # 15 scenarios all pass, 15 all fail
    independent = [float(i % 2 == 0) for i in range(90)]             # every scenario mixed
    ci_corr, wil_corr = mean_intervals(correlated, clusters)
    ci_ind, wil_ind = mean_intervals(independent, clusters)
    assert ci_corr is not None and wil_corr is not None and ci_ind is not None and wil_ind is not None
    width = {name: i.high - i.low for name, i in
             {"corr": ci_corr, "wil": wil_corr, "ind": ci_ind}.items()}
    assert width["corr"] > 1.5 * width["wil"]  # 30 effective units, not 90: about sqrt(3) wider
    assert width["ind"] < width["wil"]         # mixed scenarios: less spread between them than coins would give


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
    assert agg.sgc_ci == wilson(agg.scenarios_passed, agg.scenarios, IntervalOptions(level=0.9))
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
