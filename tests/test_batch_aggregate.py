"""Aggregates on hand-made rows: TGC, SGC over the task set (judged-only beside), by difficulty, pass^k / pass@k."""

from __future__ import annotations

import pytest

from green_agent.batch.aggregate import aggregate, by_difficulty, pass_at_k, pass_hat_k, scenario_of, sgc, tgc
from green_agent.models.eval_run import EvalRow


def row(task: str, outcome: str = "passed", trial: int = 1, difficulty: int | None = 1, calls: int | None = 4,
        duration: float = 2.0) -> EvalRow:
    return EvalRow(task_id=task, trial=trial, scenario_id=scenario_of(task), difficulty=difficulty,
                   battle_id=f"b-{task}-{trial}", status="infra_error" if outcome == "infra_error" else "completed",
                   outcome=outcome, passed=outcome == "passed", calls=calls, failed_calls=1 if calls else None,
                   duration_s=duration, result_path=f"tasks/{task}/result.json")


def test_scenario_is_the_id_before_the_underscore() -> None:
    assert scenario_of("82e2fac_1") == "82e2fac"
    assert scenario_of("82e2fac_12") == "82e2fac"


def test_sgc_counts_a_scenario_only_if_all_its_tasks_pass() -> None:
    rows = [row("aaa_1"), row("aaa_2"), row("aaa_3", "failed"),  # scenario aaa: one failure -> not passed
            row("bbb_1"), row("bbb_2"),                           # scenario bbb: all pass
            row("ccc_1", "partial")]                              # scenario ccc: fails
    assert tgc(rows) == pytest.approx(100 * 4 / 6, abs=0.01)
    assert sgc(rows) == pytest.approx(100 / 3, abs=0.01)


def test_infra_errors_count_as_not_passed_over_the_task_set_and_the_run_says_incomplete() -> None:
    rows = [row("aaa_1"), row("aaa_2", "infra_error"), row("bbb_1"), row("bbb_2", "failed"),
            row("ccc_1", "infra_error")]
    agg = aggregate(rows, expected_battles=5)
    assert (agg.judged, agg.infra_errors, agg.passed) == (3, 2, 2)
    assert agg.tgc == 40.0 and agg.incomplete  # 2 of the 5 tasks: an unjudged task is not passed
    assert agg.tgc_judged == pytest.approx(66.67, abs=0.01)  # 2 of 3 judged, named as such
    # aaa has an unjudged task -> incomplete; ccc has only an unjudged task -> incomplete; bbb judged and failed
    assert (agg.scenarios, agg.scenarios_passed, agg.scenarios_unjudged) == (3, 0, 2)
    assert agg.sgc == 0.0 and agg.sgc_judged == 0.0
    assert agg.outcome_counts["infra_error"] == 2 and agg.outcome_counts["failed"] == 1
    assert agg.mean_trajectory["calls"] == 4.0 and agg.total_calls == 12  # judged battles only
    assert agg.missing == 0


def test_scope_errors_are_not_passed_over_the_task_set_and_counted_on_their_own() -> None:
    rows = [row("aaa_1"), row("aaa_2", "scope_error"), row("bbb_1"), row("bbb_2", "failed"), row("ccc_1", "infra_error")]
    agg = aggregate(rows, expected_battles=5)
    assert (agg.judged, agg.scope_errors, agg.infra_errors, agg.passed) == (3, 1, 1, 2)
    assert agg.tgc == 40.0 and agg.tgc_judged == pytest.approx(66.67, abs=0.01) and agg.incomplete
    assert (agg.scenarios, agg.scenarios_unjudged) == (3, 2) and agg.sgc == 0.0  # aaa incomplete, like ccc
    assert agg.outcome_counts["scope_error"] == 1 and agg.total_calls == 12


def test_a_selective_dodger_cannot_raise_tgc_by_leaving_tasks_unjudged() -> None:
    """One task solved, two left unjudged: 1 of 3, never 1 of 1."""
    rows = [row("aaa_1"), row("bbb_1", "infra_error"), row("ccc_1", "infra_error")]
    agg = aggregate(rows, expected_battles=3, task_ids=["aaa_1", "bbb_1", "ccc_1"])
    assert agg.tgc == pytest.approx(33.33, abs=0.01) and agg.incomplete and agg.tgc_judged == 100.0
    assert agg.sgc == pytest.approx(33.33, abs=0.01) and agg.sgc_judged == 100.0


def test_a_blue_error_is_judged_and_counts_as_a_loss() -> None:
    rows = [row("aaa_1"), row("bbb_1", "blue_error")]
    agg = aggregate(rows, expected_battles=2)
    assert (agg.judged, agg.tgc, agg.incomplete) == (2, 50.0, False) and agg.outcome_counts["blue_error"] == 1


def test_all_infra_errors_give_tgc_zero_over_the_task_set_and_no_judged_figure() -> None:
    agg = aggregate([row("aaa_1", "infra_error")], expected_battles=2)
    assert agg.tgc == 0.0 and agg.sgc == 0.0 and agg.incomplete and agg.missing == 1
    assert agg.tgc_judged is None and agg.sgc_judged is None


def test_a_complete_run_is_not_incomplete_and_both_figures_agree() -> None:
    agg = aggregate([row("aaa_1"), row("aaa_2", "failed")], expected_battles=2)
    assert (agg.tgc, agg.tgc_judged, agg.incomplete) == (50.0, 50.0, False)


def test_tgc_by_difficulty() -> None:
    rows = [row("a_1", difficulty=1), row("b_1", "failed", difficulty=1), row("c_1", difficulty=2),
            row("d_1", "timeout", difficulty=3), row("e_1", "infra_error", difficulty=3), row("f_1", difficulty=None)]
    stats = by_difficulty(rows)
    assert list(stats) == ["1", "2", "3", "unknown"]
    assert (stats["1"].battles, stats["1"].passed, stats["1"].tgc) == (2, 1, 50.0)
    assert stats["2"].tgc == 100.0
    assert (stats["3"].battles, stats["3"].tgc) == (2, 0.0)  # the infra error counts as not passed
    assert stats["unknown"].tgc == 100.0


def test_pass_hat_k_needs_every_trial_to_pass() -> None:
    # task a passes 3/3, task b 2/3, task c 0/3
    rows = ([row("a_1", trial=t) for t in (1, 2, 3)]
            + [row("b_1", trial=1), row("b_1", trial=2), row("b_1", "failed", trial=3)]
            + [row("c_1", "failed", trial=t) for t in (1, 2, 3)])
    assert pass_hat_k(rows, 3) == pytest.approx(1 / 3, abs=1e-4)          # only a passes in all 3
    assert pass_hat_k(rows, 1) == pytest.approx((1 + 2 / 3 + 0) / 3, abs=1e-4)
    assert pass_hat_k(rows, 2) == pytest.approx((1 + 1 / 3 + 0) / 3, abs=1e-4)  # C(2,2)/C(3,2) = 1/3
    assert pass_at_k(rows, 3) == pytest.approx(2 / 3, abs=1e-4)           # a and b pass at least once
    agg = aggregate(rows, expected_battles=9, trials=3)
    assert agg.pass_hat_k == {"1": pytest.approx(0.5556, abs=1e-4), "2": pytest.approx(0.4444, abs=1e-4),
                              "3": pytest.approx(0.3333, abs=1e-4)}
    assert agg.tgc == pytest.approx(100 * 5 / 9, abs=0.01)


def test_pass_hat_k_counts_an_unjudged_trial_as_not_passed_and_sgc_is_per_trial() -> None:
    rows = [row("a_1", trial=1), row("a_1", "infra_error", trial=2), row("b_1", trial=1), row("b_1", trial=2),
            row("b_2", trial=1), row("b_2", "failed", trial=2), row("c_1", trial=1)]
    assert pass_hat_k(rows, 2) == pytest.approx(1 / 3, abs=1e-4)  # a_1 0 (unjudged trial 2), b_1 1, b_2 0; c_1 n=1
    agg = aggregate(rows, expected_battles=8, trials=2)
    # trial 1: scenarios a, b, c pass; trial 2: a unjudged, b fails (b_2 failed); c has no trial 2 row
    assert (agg.scenarios, agg.scenarios_passed, agg.scenarios_unjudged) == (5, 3, 1)
    assert agg.sgc == 60.0 and agg.sgc_judged == 75.0


def test_a_scenario_with_a_task_without_result_is_incomplete_never_passed() -> None:
    rows = [row("aaa_1"), row("aaa_2"), row("bbb_1")]  # the run lists aaa_3 too, but it has no result
    agg = aggregate(rows, expected_battles=4, task_ids=["aaa_1", "aaa_2", "aaa_3", "bbb_1"])
    assert agg.scenario_status == {"aaa": "incomplete", "bbb": "passed"}
    assert agg.scenarios_incomplete == ["aaa"]
    assert (agg.scenarios, agg.scenarios_passed, agg.scenarios_unjudged) == (2, 1, 1)


def test_a_scenario_passes_only_if_every_trial_of_every_task_passed() -> None:
    rows = [row("aaa_1", trial=1), row("aaa_1", trial=2), row("bbb_1", trial=1), row("bbb_1", "failed", trial=2),
            row("ccc_1", trial=1), row("ccc_1", "infra_error", trial=2)]
    agg = aggregate(rows, expected_battles=6, trials=2, task_ids=["aaa_1", "bbb_1", "ccc_1"])
    assert agg.scenario_status == {"aaa": "passed", "bbb": "failed", "ccc": "incomplete"}
    assert (agg.scenarios, agg.scenarios_passed, agg.scenarios_unjudged) == (6, 4, 1)
