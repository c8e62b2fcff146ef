"""Why a verdict is what it is, in plain words: one model, built by one pure function from a `BattleResult`.

`explain(result)` reads only the record (`result.json`, schema 5 carries the instruction) and
returns a `VerdictExplanation`: the task's instruction; the outcome in one sentence a non-expert
understands (`headline`; under faults, a loss names the first fault the agent did not recover from,
`fault_cause`); each failed AppWorld test with its requirement in AppWorld's words and a
plain wording of its kind (`no_op_fail` = "the change the task asked for", `no_op_pass` =
"something the task should not have touched"; never the raw label alone); the Blue's submitted
answer when the task asks a question; how the Blue ended; the scope line (with a predictor
fallback and its reason) and one recall, the scope's gold recall.

The expected answer is the test set: it is filled only when the caller asks for it
(`explain(result, local=True)`: the CLI summary, report.html); whatever is posted (the AgentBeats
backend page, the A2A artifact) calls `explain(result)` and cannot carry it.

Every string here may hold Blue-derived text (its answer, its error, the record's reason): the
model is data; each renderer escapes it with `kernel.untrusted` (`plain_lines` returns raw text
for callers that apply `one_line`, the Markdown and HTML renderers escape per field). Secrets
and local paths are scrubbed by the caller before (the record as written is already scrubbed).
"""

from __future__ import annotations

import ast
import re

from pydantic import BaseModel, Field

from green_agent.models.result import BattleResult, EvalTestRecord
from kernel.untrusted import one_line

KIND_WORDS = {"no_op_fail": "the change the task asked for",
              "no_op_pass": "something the task should not have touched"}
"""Plain wording of AppWorld's test labels (what kind of check failed)."""
ANSWER_KIND = "the answer the task asked for"
OTHER_KIND = "a check of the task"
FAULT_WORDS = {"error_reply": "it answered with an error", "http_error": "its server answered with an HTTP error",
               "connection_dropped": "its connection dropped", "malformed_reply": "it sent a reply that is not A2A",
               "task_failed": "it ended its A2A task as failed"}
FAULT_NAMES = {"error": "503", "rate_limit": "429", "timeout": "504 (a timeout)", "empty": "empty page",
               "malformed": "cut-off answer"}
"""An injected fault as the agent met it, for "lost after an unrecovered ..." (`fault_cause`)."""
_ANSWER_CHECK = re.compile(r"\banswers?\b", re.IGNORECASE)
_NO_ANSWER = re.compile(r"\bno answer\b", re.IGNORECASE)
_COMPARISON = re.compile(r"AssertionError:\s*(?P<got>.+?)\s+==\s+(?P<want>.+?)\s*$", re.MULTILINE)
MAX_HEADLINE_REQUIREMENT = 160


class FailedRequirement(BaseModel):
    """One failed AppWorld test, explained."""

    requirement: str = Field(description="What the test checks, in AppWorld's words ('assert' and the final dot cut).")
    kind: str = Field(description="What kind of check it is, in plain words.")
    label: str | None = Field(default=None, description="AppWorld's raw label (no_op_fail | no_op_pass), for experts.")


class VerdictExplanation(BaseModel):
    """A verdict explained at a glance (see the module docstring for what is and is not in it)."""

    winner_label: str = Field(description="Blue wins | Green wins | Draw (not judged).")
    headline: str = Field(description="The outcome in one plain sentence, starting with the winner label.")
    task_id: str | None = Field(default=None, description="AppWorld task id.")
    instruction: str | None = Field(default=None, description="What the task asked (None when unknown).")
    tests: str | None = Field(default=None, description="'N of M tests passed', the one count of tests.")
    failed: list[FailedRequirement] = Field(default_factory=list, description="Failed tests, in AppWorld's order.")
    question: bool = Field(default=False, description="The task asks a question (an answer is checked).")
    answer: str | None = Field(default=None, description="The Blue's submitted answer (question tasks only).")
    expected_answer: str | None = Field(default=None, description="AppWorld's expected answer: LOCAL outputs only "
                                        "(filled by `explain(..., local=True)`).")
    ending: str = Field(description="How the Blue ended, in plain words (with its error text, if any).")
    scope: str | None = Field(default=None, description="Predictor, policy and size of the scope, with any fallback.")
    recall: str | None = Field(default=None, description="The scope's gold recall (gold APIs in the scope / gold).")


def explain(result: BattleResult, *, local: bool = False) -> VerdictExplanation:
    """The explanation of `result`'s verdict; `local=True` adds the expected answer (never post that)."""
    evaluation = result.evaluation
    failed = [_failed(t) for t in evaluation.failures] if evaluation else []
    question = _is_question(result)
    got, want = _compared_answer(result)
    answer = (result.trajectory.submitted_answer if result.trajectory else None) or got
    return VerdictExplanation(
        winner_label=winner_label(result), headline=_headline(result, failed), task_id=result.task_id,
        instruction=result.instruction,
        tests=f"{len(evaluation.passes)} of {evaluation.num_tests} tests passed" if evaluation else None,
        failed=failed, question=question, answer=(answer or "no answer") if question else None,
        expected_answer=want if question and local else None, ending=_ending(result),
        scope=_scope(result), recall=_recall(result))


def plain_lines(explanation: VerdictExplanation, max_failed: int = 3) -> list[str]:
    """The explanation as short plain lines (raw text: a renderer applies `kernel.untrusted.one_line`)."""
    e = explanation
    lines = [e.headline]
    if e.instruction or e.task_id:
        lines.append(f"Task {e.task_id or '?'}: {e.instruction or '(instruction not recorded)'}")
    if e.question:
        lines.append(f"Blue's answer: {e.answer}" + (f" (expected: {e.expected_answer})" if e.expected_answer else ""))
    lines.append(f"Blue: {e.ending}")
    if e.tests:
        lines.append(f"Tests: {e.tests}")
    lines += [f"Failed: {f.requirement} ({f.kind})" for f in e.failed[:max_failed]]
    if len(e.failed) > max_failed:
        lines.append(f"... and {len(e.failed) - max_failed} more failed requirement(s)")
    if e.scope:
        lines.append(f"Scope: {e.scope}" + (f"; {e.recall}" if e.recall else ""))
    return lines


def posted_text(result: BattleResult, max_lines: int = 10, max_line: int = 300) -> str:
    """The verdict explained for anything that leaves this machine (the backend entry's message, the A2A artifact's
    text summary): plain lines, each `one_line` and bounded, never the expected answer."""
    lines = [one_line(line, max_line) for line in plain_lines(explain(result))][:max_lines]
    return "\n".join(line for line in lines if line)


def winner_label(result: BattleResult) -> str:
    return {"blue_agent": "Blue wins", "green_agent": "Green wins"}.get(result.winner or "", "Draw (not judged)")


def requirement_words(requirement: str) -> str:
    """AppWorld's requirement without its leading `assert` and final dot ("assert answers match." -> "answers match")."""
    text = re.sub(r"^\s*assert\s+", "", requirement.strip(), flags=re.IGNORECASE)
    return text[:-1] if text.endswith(".") else text


def kind_words(test: EvalTestRecord) -> str:
    if test.label == "no_op_fail" and _ANSWER_CHECK.search(test.requirement):
        return ANSWER_KIND
    return KIND_WORDS.get(test.label or "", OTHER_KIND)


def _failed(test: EvalTestRecord) -> FailedRequirement:
    return FailedRequirement(requirement=requirement_words(test.requirement), kind=kind_words(test), label=test.label)


def fault_cause(result: BattleResult) -> str | None:
    """Under faults, the first injected fault the agent did not recover from, in words ("lost after an unrecovered
    503 on amazon.login (call 2 of 4)"), for a battle that was judged and not passed; None when every fault was
    recovered (a loss after recovered faults is not blamed on them) or the battle ran without faults."""
    trajectory = result.trajectory
    if result.faults is None or trajectory is None or result.outcome in ("passed", "infra_error", "scope_error",
                                                                         "collateral_damage"):
        return None
    call = next((c for c in trajectory.faulted_calls if not c.recovered), None)
    if call is None:
        return None
    where = f" (call {call.call} of {trajectory.total_calls})" if call.call else ""
    if call.kind == "lost_response":
        return f"lost after repeating a write on {call.api} whose answer was lost{where}"
    return f"lost after an unrecovered {FAULT_NAMES.get(call.kind, call.kind)} on {call.api}{where}"


def _headline(result: BattleResult, failed: list[FailedRequirement]) -> str:
    who, outcome = winner_label(result), result.outcome
    first = _first_failure(failed)
    if outcome == "passed":
        return f"{who}: every requirement of the task is met"
    cause = fault_cause(result)
    if cause is not None:
        own = (f"; the Blue then stopped with its own error ({FAULT_WORDS.get(result.blue_fault.kind, 'it failed')})"
               if outcome == "blue_error" and result.blue_fault else "")
        return f"{who}: {cause}{own}" + first
    if outcome == "infra_error":
        step = f" in step {result.error.step}" if result.error else ""
        return f"{who}: an infrastructure error{step} stopped the battle; the Blue is not charged"
    if outcome == "scope_error":
        refused = ", ".join(result.scope.refused_gold) if result.scope else ""
        return f"{who}: the enforced scope refused the Blue API(s) the task needs ({refused}); the Blue is not charged"
    if outcome == "blue_error":
        kind = FAULT_WORDS.get(result.blue_fault.kind, result.blue_fault.kind) if result.blue_fault else "it failed"
        return f"{who}: the Blue stopped with its own error ({kind}) before completing the task" + first
    if outcome == "timeout":
        return f"{who}: the Blue did not complete the task before the deadline" + first
    if outcome == "collateral_damage":
        damage = next((f for f in failed if f.label == "no_op_pass"), None)
        what = f": {_short(damage.requirement)}" if damage else ""
        return f"{who}: the Blue changed something the task should not have touched{what}"
    if outcome == "partial":
        return f"{who}: only part of the task was done" + first
    return f"{who}: the task was not done" + first


def _first_failure(failed: list[FailedRequirement]) -> str:
    if not failed:
        return ""
    more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
    return f"; not met: {_short(failed[0].requirement)}{more}"


def _short(text: str) -> str:
    return text if len(text) <= MAX_HEADLINE_REQUIREMENT else text[:MAX_HEADLINE_REQUIREMENT - 1] + "…"


def _is_question(result: BattleResult) -> bool:
    """A task asks a question when an answer check other than "no answer (null)" is among its tests."""
    if result.trajectory and result.trajectory.submitted_answer is not None and not result.evaluation:
        return True
    tests = (result.evaluation.passes + result.evaluation.failures) if result.evaluation else []
    return any(_ANSWER_CHECK.search(t.requirement) and not _NO_ANSWER.search(t.requirement) for t in tests)


def _compared_answer(result: BattleResult) -> tuple[str | None, str | None]:
    """(Blue's, expected) answers from a failed answer check's trace (`AssertionError: 'null' == '445.29'`)."""
    for test in result.evaluation.failures if result.evaluation else []:
        match = _COMPARISON.search(test.trace or "") if _ANSWER_CHECK.search(test.requirement) else None
        if match:
            got, want = _literal(match["got"]), _literal(match["want"])
            return (None if got in ("null", "None") else got), want
    return None, None


def _literal(text: str) -> str:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return str(value)


def _ending(result: BattleResult) -> str:
    c, fault, error = result.completion, result.blue_fault, result.error
    if error and (c is None or result.outcome == "infra_error"):
        return f"the battle stopped in step {error.step} ({error.type}): {error.message}"
    if c is None:
        return "the Blue was not given the task"
    if fault:
        return (f"its own error after {fault.after_s:.1f} s ({FAULT_WORDS.get(fault.kind, fault.kind)}): "
                f"{fault.message}")
    if c.ended_by == "completed":
        return f"completed the task (called complete_task) after {c.waited_s:.1f} s"
    if c.ended_by == "deadline":
        return f"the deadline of {c.deadline_s:.0f} s passed before it called complete_task"
    if c.ended_by == "blue_replied":
        return f"replied after {c.waited_s:.1f} s without calling complete_task"
    return f"not completed ({c.ended_by}) after {c.waited_s:.1f} s"


def _scope(result: BattleResult) -> str | None:
    scope = result.scope
    if scope is None:
        return None
    size = "every API" if scope.apis is None else f"{len(scope.apis)} APIs"
    text = f"{scope.predictor} predictor, {scope.policy} policy, {size}"
    if scope.fallback_reason:
        text += f" (fell back from {scope.requested or 'the requested predictor'}: {scope.fallback_reason})"
    return text


def _recall(result: BattleResult) -> str | None:
    scope = result.scope
    if scope is None or scope.recall is None:
        return None
    missed = f", missed {', '.join(scope.missed_gold)}" if scope.missed_gold else ""
    return f"scope's gold recall {scope.recall:.2f}{missed}"
