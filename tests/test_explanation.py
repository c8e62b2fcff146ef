"""The verdict explanation (`green_agent.models.explanation`) of each outcome, from hand-made records.

The records are shaped like what the battle engine writes (`result.json`, schema 5); the traces are
AppWorld's own (`AssertionError:  'null' == '445.29'`).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from green_agent.models.explanation import explain, plain_lines
from green_agent.models.result import (BattleResult, BlueFaultRecord, CompletionRecord, ErrorRecord, EvalTestRecord,
                                       EvaluationRecord, ScopeRecord, VersionsRecord)
from green_agent.models.trajectory import FaultedCall, TrajectoryMetrics
from kernel.fault_spec import parse_fault_spec

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
ANSWER_REQ = "assert answers match."
ANSWER_TRACE = "```python\ntest.answer(predicted_answer, ground_truth_answer)\n```\n----------\nAssertionError:  'null' == '445.29'"
VENMO_REQ = "assert a venmo payment to Oscar of $45 was made."
DAMAGE_REQ = "assert no other venmo transactions were created."
COMPLETED = CompletionRecord(completed=True, ended_by="completed", waited_s=3.2, deadline_s=600, blue_reply="pending")


def result(outcome: str = "passed", winner: str | None = "blue_agent", passes: list[EvalTestRecord] | None = None,
           failures: list[EvalTestRecord] | None = None, **changes: object) -> BattleResult:
    passes = passes if passes is not None else [EvalTestRecord(requirement=VENMO_REQ, label="no_op_fail")]
    failures = failures or []
    base: dict[str, object] = dict(
        battle_id="b-1", task_id="t_1", blue="reference", instruction="Pay Oscar $45 on Venmo for dinner.",
        status="completed", winner=winner, outcome=outcome,
        evaluation=EvaluationRecord(success=not failures, num_tests=len(passes) + len(failures), passes=passes,
                                    failures=failures),
        scope=ScopeRecord(predictor="lexical", requested="llm", apis=["venmo.login"], recall=0.5,
                          missed_gold=["venmo.create_transaction"], fallback_reason="LLM predictor failed: HTTP 500"),
        completion=COMPLETED, versions=VersionsRecord(appworld_green="0"), started_at=T0,
        finished_at=T0 + timedelta(seconds=5))
    return BattleResult(**(base | changes))


def test_a_passed_battle_says_every_requirement_is_met_and_explains_the_pending_reply() -> None:
    e = explain(result())
    assert e.headline == "Blue wins: every requirement of the task is met"
    assert e.instruction == "Pay Oscar $45 on Venmo for dinner." and e.tests == "1 of 1 tests passed"
    assert e.ending.startswith("completed the task") and "reply" not in e.ending  # finishing is the call, not a reply
    assert not e.question and e.answer is None


def test_a_failed_question_shows_the_answer_and_the_expected_one_only_locally() -> None:
    failed = result("failed", "green_agent", passes=[], failures=[
        EvalTestRecord(requirement=ANSWER_REQ, label="no_op_fail", trace=ANSWER_TRACE)])
    posted, local = explain(failed), explain(failed, local=True)
    assert posted.headline == "Green wins: the task was not done; not met: answers match"
    assert posted.failed[0].kind == "the answer the task asked for"
    assert posted.question and posted.answer == "no answer" and posted.expected_answer is None
    assert local.expected_answer == "445.29"
    assert "445.29" not in " ".join(plain_lines(posted)) and "expected: 445.29" in " ".join(plain_lines(local))


def test_the_call_logs_answer_wins_over_the_trace() -> None:
    failed = result("failed", "green_agent", passes=[], failures=[
        EvalTestRecord(requirement=ANSWER_REQ, label="no_op_fail", trace=ANSWER_TRACE.replace("'null'", "'12'"))],
        trajectory=TrajectoryMetrics(log_path="x", log_found=True, submitted_answer="12 dollars"))
    assert explain(failed).answer == "12 dollars"


def test_collateral_damage_names_what_was_touched_in_plain_words() -> None:
    damaged = result("collateral_damage", "green_agent", failures=[
        EvalTestRecord(requirement=DAMAGE_REQ, label="no_op_pass", trace="AssertionError: 2 == 1")])
    e = explain(damaged)
    assert e.headline == ("Green wins: the Blue changed something the task should not have touched: "
                          "no other venmo transactions were created")
    assert e.failed[0].kind == "something the task should not have touched"
    assert all("no_op_pass" not in line or "touched" in line for line in plain_lines(e))


def test_partial_names_the_first_unmet_change() -> None:
    partial = result("partial", "green_agent", passes=[EvalTestRecord(requirement="assert login.", label="no_op_fail")],
                     failures=[EvalTestRecord(requirement=VENMO_REQ, label="no_op_fail"),
                               EvalTestRecord(requirement="assert a note.", label="no_op_fail")])
    e = explain(partial)
    assert e.headline == ("Green wins: only part of the task was done; not met: a venmo payment to Oscar of $45 "
                          "was made (and 1 more)")
    assert [f.kind for f in e.failed] == ["the change the task asked for"] * 2


def test_a_timeout_says_the_deadline_passed() -> None:
    late = result("timeout", "green_agent", status="timeout", failures=[EvalTestRecord(requirement=VENMO_REQ,
                                                                                         label="no_op_fail")],
                  passes=[], completion=CompletionRecord(completed=False, ended_by="deadline", waited_s=600,
                                                         deadline_s=600, blue_reply="pending"))
    e = explain(late)
    assert e.headline.startswith("Green wins: the Blue did not complete the task before the deadline; not met: a venmo")
    assert e.ending == "the deadline of 600 s passed before it called complete_task"


def test_the_blues_own_error_is_named_with_its_text() -> None:
    crashed = result("blue_error", "green_agent", status="blue_error", passes=[],
                     failures=[EvalTestRecord(requirement=VENMO_REQ, label="no_op_fail")],
                     completion=CompletionRecord(completed=False, ended_by="blue_error", waited_s=1.5, deadline_s=600,
                                                 blue_reply="error"),
                     blue_fault=BlueFaultRecord(kind="error_reply", message="model quota exceeded", after_s=1.5))
    e = explain(crashed)
    assert e.headline.startswith("Green wins: the Blue stopped with its own error (it answered with an error)")
    assert e.ending == "its own error after 1.5 s (it answered with an error): model quota exceeded"


def test_an_infrastructure_error_names_its_step_and_charges_no_one() -> None:
    broken = result("infra_error", None, status="infra_error", evaluation=None, completion=None,
                    error=ErrorRecord(type="AppWorldUnavailableError", message="env server down", step="setup"))
    e = explain(broken)
    assert e.headline == "Draw (not judged): an infrastructure error in step setup stopped the battle; the Blue is not charged"
    assert e.ending == "the battle stopped in step setup (AppWorldUnavailableError): env server down"
    assert e.tests is None and e.failed == []


def test_the_scope_line_carries_the_fallback_and_one_recall() -> None:
    e = explain(result())
    assert e.scope == "lexical predictor, advise policy, 1 APIs (fell back from llm: LLM predictor failed: HTTP 500)"
    assert e.recall == "scope's gold recall 0.50, missed venmo.create_transaction"
    lines = plain_lines(e)
    assert lines[0] == e.headline and any(line.startswith("Scope: lexical") for line in lines)


def test_a_version_4_record_without_an_instruction_still_explains() -> None:
    old = BattleResult.model_validate(result().model_dump(mode="json", exclude={"instruction"}) | {"schema_version": 4})
    assert explain(old).instruction is None and explain(old).headline.startswith("Blue wins")


def test_the_submitted_answer_is_the_last_successful_complete_task_argument() -> None:
    from green_agent.trajectory import analyze_records
    from kernel.call_record import CallRecord

    def call(answer: object, success: bool = True) -> CallRecord:
        return CallRecord(timestamp=T0, battle_id="b-1", task_id="t_1", tool_name="supervisor__complete_task",
                          arguments={"answer": answer}, success=success, duration_ms=1.0)
    assert analyze_records([call("first"), call(10), call("refused", success=False)]).submitted_answer == "10"
    assert analyze_records([call(None)]).submitted_answer is None


def test_evals_end_summary_gives_the_first_failures_their_why(tmp_path) -> None:
    from types import SimpleNamespace

    from green_agent.commands.eval import failure_lines
    from green_agent.models.eval_run import EvalRow
    damaged = result("collateral_damage", "green_agent", failures=[EvalTestRecord(requirement=DAMAGE_REQ,
                                                                                  label="no_op_pass")])
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "result.json").write_text(damaged.model_dump_json())
    rows = [EvalRow(task_id=t, scenario_id="s", battle_id="b", status="completed", outcome=o, passed=o == "passed",
                    result_path=p) for t, o, p in [("t_0", "passed", "x"), ("t_1", "collateral_damage", "a/result.json"),
                                                   ("t_2", "failed", "missing/result.json")]]
    lines = failure_lines(SimpleNamespace(rows=rows), tmp_path)
    assert lines[0] == "  first 2 of 2 not passed:"
    assert lines[1] == ("    t_1 (trial 1): Green wins: the Blue changed something the task should not have touched: "
                        "no other venmo transactions were created")
    assert lines[2].startswith("    t_2 (trial 1): failed (its result.json could not be read")


def _under_faults(outcome: str, calls: list[FaultedCall], **changes: object) -> BattleResult:
    trajectory = TrajectoryMetrics(log_path="calls.jsonl", log_found=True, total_calls=4, faulted_calls=calls)
    failures = [EvalTestRecord(requirement=VENMO_REQ, label="no_op_fail")]
    return result(outcome, "green_agent", passes=[], failures=failures, faults=parse_fault_spec("rate=0.3,seed=1"),
                  trajectory=trajectory, **changes)


def test_a_loss_under_faults_names_the_first_fault_the_agent_did_not_recover_from() -> None:
    lost = _under_faults("failed", [FaultedCall(position=1, call=1, api="venmo.login", kind="error", recovered=True),
                                    FaultedCall(position=2, call=3, api="venmo.login", kind="error", recovered=False)])
    assert explain(lost).headline.startswith("Green wins: lost after an unrecovered 503 on venmo.login (call 3 of 4)")
    own = _under_faults("blue_error", [FaultedCall(position=1, call=1, api="amazon.login", kind="rate_limit",
                                                   recovered=False)],
                        blue_fault=BlueFaultRecord(kind="task_failed", message="boom", after_s=1.0))
    assert explain(own).headline.startswith("Green wins: lost after an unrecovered 429 on amazon.login (call 1 of 4); "
                                            "the Blue then stopped with its own error")
    repeated = _under_faults("failed", [FaultedCall(position=1, call=2, api="venmo.create_transaction",
                                                    kind="lost_response", recovered=False, repeated=True)])
    assert "lost after repeating a write on venmo.create_transaction whose answer was lost" in explain(
        repeated).headline


def test_a_loss_after_recovered_faults_is_not_blamed_on_them() -> None:
    recovered = _under_faults("failed", [FaultedCall(position=1, call=1, api="venmo.login", kind="timeout",
                                                     recovered=True)])
    assert explain(recovered).headline == "Green wins: the task was not done; not met: a venmo payment to Oscar of " \
                                          "$45 was made"
    assert "fault" not in explain(recovered).headline
