"""Step 9: the judge. Blue wins iff AppWorld's evaluation says success; a graded outcome beside it.

Outcomes, in order of precedence (the first that applies wins):
1. `infra_error`: the battle could not be judged (AppWorld, the gateway or Blue's endpoint failed,
   or the Green itself), or an APIs-server fault reached the Blue through the gateway during its
   work (`upstream_fault`: it was unreachable or timed out), or code mode's sandbox failed on our side
   (its fault travels the same way); no winner, Blue is not charged.
2. `passed`: Blue completed and every test passed (`evaluation.success`); the Blue wins.
3. `scope_error`: the Green's own scope cost the task: under the `enforce` policy the gateway refused
   Blue a gold API (one the reference solution needs). No winner (a draw), Blue is not charged;
   kept out of TGC/SGC like `infra_error`, counted on its own; the reason names the APIs.
4. `blue_error`: the Blue's own fault ended its work after it was given the task and before it completed
   (an error reply, an HTTP error, a dropped connection, a failed A2A task: `blue_fault`); the world is
   evaluated as it stands, the Green wins, and the battle counts in TGC/SGC like any loss.
5. `timeout`: Blue never called `supervisor.complete_task` before the deadline; the world is still
   evaluated and reported, the Green wins.
6. `collateral_damage`: at least one `no_op_pass` test failed (Blue changed something it should not have).
7. `partial`: some `no_op_fail` tests other than answer checks passed, but not all tests.
8. `failed`: anything else (no wanted change achieved).

Answer checks (tests whose requirement mentions the answer, e.g. AppWorld's "assert answers match."
or the pack's "assert the task was completed with no answer (null).") earn no partial credit: on a
non-question task an agent that only calls `complete_task` passes them without doing any work, and
such a no-op run must grade `failed`, not `partial`.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from green_agent.models.result import BattleOutcome, BattleStatus, BattleWinner, BlueFaultRecord, EvaluationRecord

OUTCOME_RULE_VERSION = 1
"""Version of the rule above (the precedence and each label's condition); recorded in every run's provenance so a
re-judge can say when a run was graded by another rule. Bump it whenever the rule changes."""

_ANSWER_CHECK = re.compile(r"\banswers?\b", re.IGNORECASE)


class Judgement(BaseModel):
    """The verdict of one battle."""

    status: BattleStatus = Field(description="completed: Blue finished; timeout: it did not; infra_error: not judgeable.")
    winner: BattleWinner | None = Field(description="blue_agent iff evaluation.success; None for infra_error, scope_error.")
    outcome: BattleOutcome = Field(description="Graded outcome (see module docstring for the precedence).")
    reason: str = Field(description="One line explaining the verdict.")


def judge(evaluation: EvaluationRecord | None, completed: bool, infra_error: bool = False,
          upstream_fault: str | None = None, refused_gold: list[str] | None = None,
          blue_fault: BlueFaultRecord | None = None) -> Judgement:
    """Judge a battle from AppWorld's evaluation, whether Blue completed, any infrastructure fault that
    reached the Blue, the gold APIs it was refused, and the Blue's own fault that ended its work."""
    if infra_error or evaluation is None:
        return Judgement(status="infra_error", winner=None, outcome="infra_error",
                         reason="the battle could not be judged; Blue is not charged")
    if upstream_fault:
        return Judgement(status="infra_error", winner=None, outcome="infra_error",
                         reason=f"an infrastructure fault reached the Blue, so the battle is not scored ({upstream_fault})")
    tests = f"{len(evaluation.passes)}/{evaluation.num_tests} tests passed"
    if completed and evaluation.success:
        return Judgement(status="completed", winner="blue_agent", outcome="passed", reason=tests)
    if refused_gold:
        return Judgement(status="completed" if completed else "timeout", winner=None, outcome="scope_error",
                         reason=f"the enforced scope refused Blue gold API(s) {', '.join(refused_gold)}; "
                                f"Blue is not charged; {tests}")
    if not completed and blue_fault is not None:
        return Judgement(status="blue_error", winner="green_agent", outcome="blue_error",
                         reason=f"the Blue failed after it was given the task ({blue_fault.kind}) and never called "
                                f"supervisor.complete_task; judged on the world as it stands; {tests}")
    if not completed:
        return Judgement(status="timeout", winner="green_agent", outcome="timeout",
                         reason=f"Blue never called supervisor.complete_task; {tests}")
    return Judgement(status="completed", winner="green_agent", outcome=grade_failure(evaluation), reason=tests)


def grade_failure(evaluation: EvaluationRecord) -> BattleOutcome:
    """BattleOutcome of an unsuccessful evaluation: collateral_damage, partial or failed."""
    if any(f.label == "no_op_pass" for f in evaluation.failures):
        return "collateral_damage"
    if any(p.label == "no_op_fail" and not _ANSWER_CHECK.search(p.requirement) for p in evaluation.passes):
        return "partial"
    return "failed"
