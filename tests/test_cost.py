"""Cost per task, unit level: a purple's reported usage read, bounded and refused (`kernel.a2a_usage`), priced per
battle and summed per run (`green_agent.batch.cost`), unknown as None, never 0."""

from __future__ import annotations

import pytest

from green_agent.batch.cost import cost_figures
from green_agent.models.cost import cost_sentence, cost_short
from green_agent.models.eval_run import EvalRow
from kernel.a2a_usage import UsageRefused, UsageTally, read_usage, usage_metadata


def test_a_valid_usage_is_read_and_absent_usage_is_none() -> None:
    usage = read_usage(usage_metadata("gpt-4o-mini", 120, 7, 0.0001))
    assert (usage.model, usage.input_tokens, usage.output_tokens, usage.cost_usd) == ("gpt-4o-mini", 120, 7, 0.0001)
    assert read_usage(None) is None and read_usage({"other": 1}) is None and read_usage("usage") is None


@pytest.mark.parametrize("raw,reason", [
    ({"input_tokens": -1}, "usage.input_tokens` is out of bounds"),
    ({"output_tokens": 10**12}, "usage.output_tokens` is out of bounds"),
    ({"cost_usd": 1e9}, "usage.cost_usd` is out of bounds"),
    ({"cost_usd": -0.01}, "usage.cost_usd` is out of bounds"),
    ({"input_tokens": "lots"}, "usage.input_tokens` is not a finite number"),
    ({"input_tokens": True}, "usage.input_tokens` is not a finite number"),
    ({"cost_usd": float("nan")}, "usage.cost_usd` is not a finite number"),
    ({"cost_usd": float("inf")}, "usage.cost_usd` is not a finite number"),
    ({"input_tokens": 1.5}, "usage.input_tokens` is not a whole number"),
    ({"model": "x" * 101, "input_tokens": 1}, "usage.model` is not a short printable string"),
    ({"model": "a\nforged log line", "input_tokens": 1}, "usage.model` is not a short printable string"),
    ({"model": "m"}, "has no token count and no cost"),
    ([1, 2], "`usage` is not an object"),
])
def test_bad_usage_is_refused_with_the_key_named(raw: object, reason: str) -> None:
    with pytest.raises(UsageRefused, match=reason.replace("`", "`?")):
        read_usage({"usage": raw})


def test_the_tally_is_complete_only_when_every_reply_reported_valid_usage() -> None:
    tally = UsageTally()
    tally.add(usage_metadata("m", 10, 1, 0.5))
    tally.add(usage_metadata("m", 20, 2, 0.25))
    assert tally.usage.complete and tally.usage.reported_cost_usd == 0.75 and tally.usage.input_tokens == 30
    tally.add(None)  # a reply without usage: the battle's cost is unknown
    assert not tally.usage.complete
    bad = UsageTally()
    bad.add({"usage": {"input_tokens": -5}})
    assert not bad.usage.complete and "out of bounds" in (bad.usage.refused or "")
    partial = UsageTally()
    partial.add(usage_metadata("m", 10, 1, 0.5))
    partial.add(usage_metadata("m", 10, 1))  # tokens without a cost: the reported cost sum is not known
    assert partial.usage.complete and partial.usage.reported_cost_usd is None


def _row(task: str, passed: bool, purple: float | None, green: float | None = None, **extra: object) -> EvalRow:
    return EvalRow(task_id=task, scenario_id=task.split("_")[0], battle_id="b", status="completed",
                   outcome="passed" if passed else "failed", passed=passed, result_path="x", purple_cost_usd=purple,
                   cost_usd=green, **extra)


def test_run_cost_adds_the_greens_and_divides_by_tasks_and_solved_tasks() -> None:
    cost = cost_figures([_row("a_1", True, 0.3, 0.1), _row("a_2", False, 0.2), _row("b_1", True, 0.2)], 3)
    assert (cost.purple_cost_usd, cost.green_cost_usd, cost.total_cost_usd) == (0.7, 0.1, 0.8)
    assert cost.cost_per_task_usd == pytest.approx(0.8 / 3, abs=1e-6) and cost.cost_per_solved_task_usd == 0.4
    assert cost_short(cost) == "$0.2667/task, $0.4000/solved task" and "per solved task" in cost_sentence(cost)


def test_one_unknown_battle_or_a_battle_not_run_makes_the_cost_unknown_never_zero() -> None:
    unknown = cost_figures([_row("a_1", True, 0.3), _row("a_2", True, None,
                                                          purple_usage_note="the purple reported no usage")], 2)
    assert unknown.purple_cost_usd is None and unknown.total_cost_usd is None and unknown.cost_per_task_usd is None
    assert unknown.unknown_because == "1 of 2 battle(s) without a known purple cost (e.g. the purple reported no usage)"
    assert cost_short(unknown) == "unknown" and "unknown" in cost_sentence(unknown)
    assert cost_figures([_row("a_1", True, 0.3)], 2).total_cost_usd is None  # a battle of the set did not run
    none_solved = cost_figures([_row("a_1", False, 0.3)], 1)
    assert none_solved.total_cost_usd == 0.3 and none_solved.cost_per_solved_task_usd is None
