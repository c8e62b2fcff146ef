"""The reliability profile's parts on hand-made data: the statistics (`green_agent.reliability.ratio`,
`consistency`), the arms (`arms`), the shared fault secret (`batch.fault_secret`), the page (`page`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from green_agent.models.eval_run import Interval
from green_agent.models.reliability_profile import (Arm, AxisLine, Consistency, CurvePoint, Figure, LostTask,
                                                    ReliabilityProfile, Safety)
from green_agent.reliability.arms import build_arms, fault_sweep, fault_sweep_from, strengths
from green_agent.reliability.consistency import (outcome_consistency, pass_hat_k, resource_cv,
                                                 trajectory_similarity)
from green_agent.reliability.page import render_profile_html
from green_agent.reliability.ratio import paired_ratio
from green_agent.reliability.words import axis_lines
from kernel.errors import BadInputError

SEVEN = [f"s{g}" for g in range(7) for _ in range(3)]  # 7 scenarios x 3 tasks, as the dev split


def test_pass_hat_k_is_the_unbiased_estimate() -> None:
    assert pass_hat_k(3, 3, 3) == 1.0 and pass_hat_k(0, 3, 1) == 0.0
    assert pass_hat_k(2, 3, 1) == pytest.approx(2 / 3) and pass_hat_k(2, 3, 2) == pytest.approx(1 / 3)
    assert pass_hat_k(2, 3, 3) == 0.0 and pass_hat_k(3, 5, 2) == pytest.approx(3 / 10)


def test_outcome_consistency_is_the_corrected_form() -> None:
    assert outcome_consistency(3, 3) == 1.0 and outcome_consistency(0, 3) == 1.0
    assert outcome_consistency(1, 2) == 0.0 and outcome_consistency(1, 4) == pytest.approx(0.25)


def test_trajectory_and_resource_consistency() -> None:
    assert trajectory_similarity([["a.x", "b.y"], ["a.x", "b.y"]]) == 1.0
    assert trajectory_similarity([["a.x", "b.y"], ["b.y", "a.x"]]) == pytest.approx(0.5)
    assert trajectory_similarity([["a.x"], ["c.z"]]) == 0.0
    assert resource_cv([10, 10, 10]) == 0.0 and resource_cv([0, 0]) is None
    assert resource_cv([5, 15]) == pytest.approx(0.5)


def test_no_loss_at_seven_scenarios_is_not_certain() -> None:
    found = paired_ratio([1.0] * 21, [1.0] * 21, SEVEN)
    assert found.ratio == 1.0 and found.interval is not None
    assert found.interval.low < 0.8 and found.interval.high == 1.0  # 100% baseline: the arm cannot do better
    half = [1.0, 0.0, 1.0] * 7  # a baseline with room to gain: no change seen allows a gain too
    found = paired_ratio(half, half, SEVEN)
    assert found.interval.low < 0.8 and found.interval.high > 1.2


def test_the_ratio_is_not_capped_and_its_interval_is_paired() -> None:
    base = [1.0, 0.0, 1.0] * 7
    arm = [1.0, 1.0, 1.0] * 7  # gains everywhere the baseline failed
    found = paired_ratio(base, arm, SEVEN)
    assert found.ratio == pytest.approx(1.5) and found.interval.high == pytest.approx(1.5)  # not capped at 1
    lost = paired_ratio([1.0] * 21, [0.0, 1.0, 1.0] * 7, SEVEN)
    assert lost.ratio == pytest.approx(2 / 3, abs=1e-4) and lost.interval.high < 1.0
    assert paired_ratio([0.0] * 3, [1.0] * 3, ["a", "b", "c"]).ratio is None
    assert paired_ratio([1.0], [1.0], ["a"]).interval is None


def test_a_sweep_is_one_arm_per_rate_and_bad_values_name_the_key() -> None:
    specs = fault_sweep("rate=0.1+0.3,seed=1,kinds=error+timeout")
    assert [s.rate for s in specs] == [0.1, 0.3] and all(s.kinds == ("error", "timeout") for s in specs)
    assert [s.rate for s in fault_sweep_from({"rate": [0.2, 0.5], "seed": 2})] == [0.2, 0.5]
    assert [s.rate for s in fault_sweep_from({"rate": "0.2+0.5", "seed": 2}, "config.faults")] == [0.2, 0.5]
    arms = build_arms(specs, strengths("mild+strong"), seed=3)
    assert [a.name for a in arms] == ["faults-rate0.1", "faults-rate0.3", "paraphrase-mild", "paraphrase-strong"]
    assert arms[3].paraphrase.seed == 3 and arms[3].paraphrase.strength == "strong"
    assert strengths(["naturalistic"], "config.paraphrase") == ["naturalistic"]
    for bad, where in ((lambda: fault_sweep("rate=0.1+x,seed=1"), "--faults"),
                       (lambda: fault_sweep("rate=0.1+1.5,seed=1"), "--faults"),
                       (lambda: fault_sweep_from({"rate": [0.1, "a"], "seed": 1}), "config.faults"),
                       (lambda: strengths("mild+mild"), "--paraphrase"),
                       (lambda: strengths(["calm"], "config.paraphrase"), "config.paraphrase"),
                       (lambda: build_arms([], []), "reliability")):
        with pytest.raises(BadInputError, match=re.escape(where)):
            bad()


def _profile() -> ReliabilityProfile:
    ci = Interval(low=0.2, high=0.8, level=0.95, method="test method")
    arm = Arm(name="faults-rate0.3", axis="faults", rate=0.3, tgc=50.0, ratio=0.5, ratio_ci=ci,
              lost_tasks=["f0a7c07_1"])
    para = Arm(name="paraphrase-strong", axis="paraphrase", strength="strong", tgc=100.0, ratio=1.0,
               ratio_ci=Interval(low=0.59, high=1.0, level=0.95, method="m"))
    figure = Figure(value=0.9, ci=Interval(low=0.5, high=1.0, level=0.95, method="m"))
    profile = ReliabilityProfile(
        blue="reference", tasks=21, scenarios=7, trials=2, baseline="baseline", tgc_baseline=100.0,
        arms=[arm, para], curve=[CurvePoint(rate=0.3, ratio=0.5, low=0.2, high=0.8)],
        consistency=Consistency(trials=2, tasks=21, pass_hat_k={"1": figure, "2": figure}, outcome=figure,
                                trajectory=figure, resource=Figure(value=0.95), resource_by={"calls": 0.95}),
        safety=Safety(battles=63, violations=0, share=Figure(value=0.0, ci=Interval(low=0, high=0.41, level=0.95,
                                                                                     method="cp"))),
        lost=[LostTask(arm="faults-rate0.3", task_id="f0a7c07_1", trial=1,
                       cause="lost after an unrecovered 503 on amazon.login (call 3 of 4)",
                       trace="faults-rate0.3/tasks/f0a7c07_1/trial-1/trace.html"),
              LostTask(arm="paraphrase-strong", task_id="f0b2d02_1", trial=2, cause="failed under the strong wording",
                       answer="<b>42</b>", trace="paraphrase-strong/tasks/f0b2d02_1/trial-2/trace.html")],
        message="reference on 21 task(s)")
    return profile.model_copy(update={"axes": axis_lines(profile)})


def test_the_page_leads_with_the_profile_and_lists_each_lost_task_with_cause_and_link() -> None:
    page = render_profile_html(_profile())
    assert "<script" not in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    order = [page.index(m) for m in ('id="profile"', 'id="curve"', 'id="lost"', 'id="arms"', 'id="consistency"',
                                     'id="safety"')]
    assert order == sorted(order)
    assert "R_fault @ rate 0.3" in page and "R_prompt strong" in page and "safety (collateral damage)" in page
    assert "lost after an unrecovered 503 on amazon.login (call 3 of 4)" in page
    assert 'href="faults-rate0.3/tasks/f0a7c07_1/trial-1/trace.html"' in page
    assert "&lt;b&gt;42&lt;/b&gt;" in page and "<b>42</b>" not in page  # the agent's answer is data
    assert "no loss seen" in page  # the R_prompt 1.00 line says what its interval allows


def test_a_profile_round_trips_as_schema_2(tmp_path: Path) -> None:
    profile = _profile()
    again = ReliabilityProfile.model_validate_json(profile.model_dump_json())
    assert again == profile and again.schema_version == 2
    assert isinstance(again.axes[0], AxisLine)
