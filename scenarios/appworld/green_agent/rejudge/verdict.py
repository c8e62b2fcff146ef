"""Recorded verdict vs re-judged one: equal, or each difference in words.

`not_rejudgeable(result)` names a battle that holds no verdict on the agent to check: an infra_error (never
judged, no end state of the agent's work) or a scope_error (the enforced scope refused a gold API: a draw kept
out of every score, whatever the state). `compare(battle, rejudged)` applies the outcome rule
(`green_agent.steps.judge.judge`) to the re-judged evaluation with the battle's other recorded facts (did the
Blue complete, the gold APIs refused, the Blue's fault) and compares, with the recorded ones: AppWorld's
success, each test's pass or fail (by requirement and label), the outcome, winner and status; and, for a
battle of an eval run, its row in results.json (outcome, passed, tests passed and total).
"""

from __future__ import annotations

from collections import Counter

from green_agent.models.rejudge import RejudgedBattle
from green_agent.models.result import BattleResult, EvaluationRecord
from green_agent.rejudge.discover import SavedBattle
from green_agent.steps.archive import state_digest
from green_agent.steps.judge import judge


def tests_text(evaluation: EvaluationRecord | None) -> str | None:
    return f"{len(evaluation.passes)}/{evaluation.num_tests}" if evaluation else None


def not_rejudgeable(result: BattleResult) -> str | None:
    """Why this battle holds no verdict to re-judge, or None."""
    if result.outcome == "infra_error" or result.status == "infra_error":
        return ("infra_error: the battle was never judged (our side failed; it counts as not passed), so there is "
                "no verdict to re-judge")
    if result.outcome == "scope_error":
        refused = ", ".join(result.scope.refused_gold) if result.scope and result.scope.refused_gold else "a gold API"
        return (f"scope_error: the enforced scope refused the agent {refused}; the battle is a draw kept out of "
                "every score, so there is no verdict on the agent to re-judge")
    return None


def _tests(evaluation: EvaluationRecord) -> tuple[Counter, Counter]:
    return (Counter((t.requirement, t.label) for t in evaluation.passes),
            Counter((t.requirement, t.label) for t in evaluation.failures))


def evaluation_differences(recorded: EvaluationRecord | None, rejudged: EvaluationRecord) -> list[str]:
    """AppWorld's success and each test's pass or fail, recorded vs re-judged."""
    if recorded is None:
        return ["result.json records no evaluation, but the battle is judged"]
    found = []
    if recorded.success != rejudged.success:
        found.append(f"success: recorded {recorded.success}, re-judged {rejudged.success}")
    if recorded.num_tests != rejudged.num_tests:
        found.append(f"number of tests: recorded {recorded.num_tests}, re-judged {rejudged.num_tests}")
    passes, failures = _tests(recorded)
    new_passes, new_failures = _tests(rejudged)
    for requirement, _label in sorted((new_passes - passes).elements()):
        found.append(f"test passes when re-judged, recorded failed: {requirement[:200]}")
    for requirement, _label in sorted((new_failures - failures).elements()):
        found.append(f"test fails when re-judged, recorded passed: {requirement[:200]}")
    return found


def compare(battle: SavedBattle, rejudged: EvaluationRecord) -> RejudgedBattle:
    """The re-judged verdict of `battle` beside the recorded one (see the module docstring)."""
    result = battle.result
    assert result is not None
    completed = bool(result.completion and result.completion.completed)
    refused = result.scope.refused_gold if result.scope else None
    verdict = judge(rejudged, completed, refused_gold=refused, blue_fault=result.blue_fault)
    found = evaluation_differences(result.evaluation, rejudged)
    recorded_digest = result.archive.dbs_digest if result.archive else None
    if recorded_digest and state_digest(battle.dbs) != recorded_digest:
        found.append("the saved end state (appworld/dbs) is not the one the run archived: its digest differs from "
                     "result.json's archive.dbs_digest")
    for name in ("outcome", "winner", "status"):
        recorded, again = getattr(result, name), getattr(verdict, name)
        if recorded != again:
            found.append(f"{name}: recorded {recorded}, re-judged {again}")
    found += _row_differences(battle, verdict.outcome, rejudged)
    return RejudgedBattle(battle_id=result.battle_id, task_id=battle.task_id, trial=battle.trial,
                          result_path=battle.result_path, status="differs" if found else "equal",
                          recorded_outcome=result.outcome, rejudged_outcome=verdict.outcome,
                          recorded_tests=tests_text(result.evaluation), rejudged_tests=tests_text(rejudged),
                          differences=found)


def _row_differences(battle: SavedBattle, outcome: str, rejudged: EvaluationRecord) -> list[str]:
    """results.json's row for the battle vs the re-judged verdict (an eval run's numbers are built from the rows)."""
    row = battle.row
    if row is None:
        return []
    found = []
    expected = {"outcome": outcome, "passed": rejudged.success and outcome == "passed",
                "tests_passed": len(rejudged.passes), "tests_total": rejudged.num_tests}
    for name, value in expected.items():
        if getattr(row, name) != value:
            found.append(f"results.json row {name}: recorded {getattr(row, name)}, re-judged {value}")
    return found
