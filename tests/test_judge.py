"""Step 9: winner and graded outcome, with the documented precedence."""

from __future__ import annotations

from green_agent.models.result import EvaluationRecord, EvalTestRecord
from green_agent.steps.judge import judge


def evaluation(passes: list[str], failures: list[str]) -> EvaluationRecord:
    return EvaluationRecord(success=not failures, difficulty=2, num_tests=len(passes) + len(failures),
                      passes=[EvalTestRecord(requirement=f"p{i}", label=l) for i, l in enumerate(passes)],
                      failures=[EvalTestRecord(requirement=f"f{i}", label=l, trace="t") for i, l in enumerate(failures)])


def test_success_means_blue_wins() -> None:
    verdict = judge(evaluation(["no_op_fail", "no_op_pass"], []), completed=True)
    assert (verdict.status, verdict.winner, verdict.outcome) == ("completed", "blue_agent", "passed")
    assert verdict.reason == "2/2 tests passed"


def test_graded_failures() -> None:
    assert judge(evaluation(["no_op_fail", "no_op_pass"], ["no_op_fail"]), True).outcome == "partial"
    assert judge(evaluation(["no_op_fail"], ["no_op_pass"]), True).outcome == "collateral_damage"
    assert judge(evaluation(["no_op_pass"], ["no_op_fail", "no_op_fail"]), True).outcome == "failed"
    assert judge(evaluation([], ["no_op_fail"]), True).winner == "green_agent"


def test_answer_checks_earn_no_partial_credit() -> None:
    # A no-op Blue on a non-question task passes only "completed with no answer": that is a failure.
    e = EvaluationRecord(success=False, difficulty=1, num_tests=3,
                   passes=[EvalTestRecord(requirement="assert the task was completed with no answer (null).", label="no_op_fail")],
                   failures=[EvalTestRecord(requirement="assert one note was added.", label="no_op_fail", trace="t"),
                             EvalTestRecord(requirement="assert answers match.", label="no_op_fail", trace="t")])
    assert judge(e, True).outcome == "failed"
    e.passes.append(EvalTestRecord(requirement="assert the note has the title.", label="no_op_fail"))
    assert judge(e, True).outcome == "partial"


def test_a_refused_gold_api_is_a_scope_error_not_blues_loss() -> None:
    failing = evaluation(["no_op_fail", "no_op_pass"], ["no_op_fail"])
    verdict = judge(failing, True, refused_gold=["gmail.show_thread", "venmo.create_transaction"])
    assert (verdict.status, verdict.winner, verdict.outcome) == ("completed", None, "scope_error")
    assert "gmail.show_thread, venmo.create_transaction" in verdict.reason and "2/3 tests passed" in verdict.reason
    assert judge(failing, False, refused_gold=["a.b"]).outcome == "scope_error"  # refused, then gave up
    assert judge(evaluation(["no_op_fail"], []), True, refused_gold=["a.b"]).outcome == "passed"  # recovered
    assert judge(None, True, refused_gold=["a.b"]).outcome == "infra_error"
    assert judge(failing, True, refused_gold=[]).outcome == "partial"


def test_timeout_beats_grading_and_world_is_still_scored() -> None:
    verdict = judge(evaluation(["no_op_fail"], ["no_op_fail"]), completed=False)
    assert (verdict.status, verdict.winner, verdict.outcome) == ("timeout", "green_agent", "timeout")
    assert "1/2" in verdict.reason


def test_infra_error_declares_no_winner() -> None:
    for verdict in (judge(None, completed=True), judge(evaluation(["no_op_fail"], []), True, infra_error=True)):
        assert (verdict.status, verdict.winner, verdict.outcome) == ("infra_error", None, "infra_error")
