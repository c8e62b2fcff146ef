"""The final result as the battle page shows it: markdown that reads first, a compact detail.

The page shows a result entry's `message`, then its `detail` as pretty JSON, then its markdown.
So the detail is a small typed summary (`ResultDetail`: ids, verdict, key figures; about 25
lines as pretty JSON), never the whole record; the markdown starts with the winner line, then the
outcome, the summary table and the failing tests with their requirement. The steps after the
Blue's actions (wait's end, archive, metrics, judge, cleanup, report) are summarized in the
result (`FOLDED_STEPS` post no entry of their own), so the log reads system, Green steps, Blue's
actions, result. The full record (`result.json`) stays in the run directory.

Every value that can come from a Blue (reason, error texts, answers, tool names, the card's name)
is rendered through `kernel.untrusted` (Markdown and HTML escaped, single-line, bounded; the message
and detail are one-line plain text). The reporter scrubs the record before rendering
(`outbound.prepare_result`), since escaping would hide a secret or a local path from the scrub.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from green_agent.agentbeats.markdown import cell, table
from green_agent.models.result import BattleResult
from kernel.untrusted import code_span, markdown_line, one_line

FOLDED_STEPS = ("archive", "metrics", "judge", "cleanup", "report")
"""Steps whose success posts no progress entry: the result entry summarizes them."""
MAX_FAILING_LISTED = 10
MAX_REASON = 300
MAX_FAULT = 300
WINNER_LABEL = {"blue_agent": "Blue wins", "green_agent": "Green wins"}
STEP_LABEL = {"task_id": "1 task id", "setup": "2 setup", "scope": "3 scope", "task_message": "4 message",
              "dispatch": "5 dispatch", "wait": "6 wait", "archive": "7 archive", "metrics": "8 metrics",
              "judge": "9 judge", "cleanup": "10 cleanup", "report": "11 report"}


class ResultDetail(BaseModel):
    """The `detail` of the result entry: what identifies and decides the battle, nothing more."""

    battle_id: str = Field(description="Battle id.")
    task_id: str | None = Field(description="AppWorld task id.")
    blue: str = Field(description="The Blue's name.")
    winner: str = Field(description="blue_agent | green_agent | draw.")
    status: str = Field(description="completed | timeout | infra_error.")
    outcome: str = Field(description="Graded outcome.")
    reason: str | None = Field(description="One line explaining the verdict.")
    tests_passed: str | None = Field(description="'passed/total' AppWorld tests.")
    blue_calls: int | None = Field(description="The Blue's MCP calls in this battle.")
    failed_calls: int | None = Field(description="Those that failed.")
    out_of_scope_calls: int | None = Field(description="Those outside the scope.")
    refused_calls: int = Field(description="Calls the gateway refused (no battle, wrong token).")
    api_recall: float | None = Field(description="Gold APIs the Blue called / gold APIs.")
    scope: str | None = Field(description="Predictor, policy and size of the scope.")
    wait: str | None = Field(description="How the wait ended and after how long.")
    world_closed: bool | None = Field(description="Cleanup closed the AppWorld world (None: none was opened).")
    duration_s: float | None = Field(description="Battle wall time.")
    error: str | None = Field(description="step: type: message of an infrastructure error.")
    blue_fault: str | None = Field(default=None, description="kind: message of the Blue's own fault (one line).")
    evidence: str = Field(description="Where the full record is (relative to the Green's runs directory).")


def winner_of(result: BattleResult) -> str:
    return result.winner or "draw"


def blue_name(result: BattleResult) -> str:
    return result.blue or result.blue_agent_name or "Blue"


def compact_detail(result: BattleResult) -> dict[str, Any]:
    trajectory, evaluation = result.trajectory, result.evaluation
    duration = (result.finished_at - result.started_at).total_seconds() if result.finished_at else None
    return ResultDetail(
        battle_id=result.battle_id, task_id=result.task_id, blue=one_line(blue_name(result), 120), winner=winner_of(result),
        status=result.status, outcome=result.outcome, reason=one_line(result.reason, MAX_REASON) or None,
        tests_passed=f"{len(evaluation.passes)}/{evaluation.num_tests}" if evaluation else None,
        blue_calls=trajectory.total_calls if trajectory else None,
        failed_calls=trajectory.failed_calls if trajectory else None,
        out_of_scope_calls=trajectory.out_of_scope_calls if trajectory else None,
        refused_calls=sum((result.cleanup.refused_calls if result.cleanup else {}).values()),
        api_recall=_rounded(trajectory.api_recall) if trajectory else None, scope=_scope_text(result),
        wait=_wait_text(result),
        world_closed=result.cleanup.closed if result.cleanup else None,
        duration_s=round(duration, 1) if duration is not None else None,
        error=one_line(f"{result.error.step}: {result.error.type}: {one_line(result.error.message, 200)}")
        if result.error else None,
        blue_fault=one_line(f"{result.blue_fault.kind}: {result.blue_fault.message}", MAX_FAULT) if result.blue_fault
        else None,
        evidence=f"<runs>/{_run_dir_name(result)}/result.json",
    ).model_dump()


def result_message(result: BattleResult) -> str:
    who = WINNER_LABEL.get(result.winner or "", "Draw (not judged)")
    return one_line(f"{who}: task {result.task_id or '?'} {result.outcome}. {result.reason or ''}", MAX_REASON)


def render_markdown(result: BattleResult) -> str:
    """Winner line, outcome, summary table, failing tests, then the steps that ran after the Blue."""
    evaluation = result.evaluation
    tests = f" · {len(evaluation.passes)}/{evaluation.num_tests} AppWorld tests passed" if evaluation else ""
    lines = [f"## {WINNER_LABEL.get(result.winner or '', 'Draw: not judged')} (winner {code_span(winner_of(result))})", "",
             f"**Outcome {code_span(result.outcome)}** · status {code_span(result.status)} · "
             f"task {code_span(result.task_id or 'unknown', 120)} · Blue: {cell(blue_name(result))}{tests}", ""]
    if result.reason:
        lines += [markdown_line(result.reason, MAX_REASON), ""]
    if result.error:
        lines += [f"> **Infrastructure error** in step {code_span(result.error.step)} ({cell(result.error.type)}): "
                  f"{cell(result.error.message)}. The Blue is not charged.", ""]
    if result.blue_fault:
        fault = result.blue_fault
        lines += [f"> **The Blue's own fault** ({code_span(fault.kind)}, {fault.after_s:.1f} s after the task was "
                  f"sent): {markdown_line(fault.message, MAX_FAULT)}. Judged on the world as it stands.", ""]
    if result.outcome == "scope_error":
        refused = ", ".join(result.scope.refused_gold if result.scope else [])
        lines += [f"> **Scope error**: the enforced scope refused the Blue gold API(s) {cell(refused)}. "
                  "A draw: the Blue is not charged.", ""]
    lines += table(_summary_rows(result), ("", ""))
    if evaluation and evaluation.failures:
        lines += ["", "### Failing tests", "", "| # | Requirement | Label |", "|---|---|---|"]
        lines += [f"| {k} | {cell(t.requirement)} | {cell(t.label)} |"
                  for k, t in enumerate(evaluation.failures[:MAX_FAILING_LISTED], 1)]
        if len(evaluation.failures) > MAX_FAILING_LISTED:
            lines.append(f"| … | {len(evaluation.failures) - MAX_FAILING_LISTED} more | |")
    if result.timings:
        lines += ["", "### Steps", ""]
        lines += table([(STEP_LABEL.get(name, name), f"{seconds:.2f} s") for name, seconds in result.timings.items()],
                       ("Step", "Wall time"))
    lines += ["", f"Full record: `result.json` in the Green's run directory {code_span(_run_dir_name(result), 120)}."]
    return "\n".join(lines) + "\n"


def _summary_rows(result: BattleResult) -> list[tuple[str, Any]]:
    trajectory = result.trajectory
    rows: list[tuple[str, Any]] = [("Blue", blue_name(result)), ("Difficulty", result.difficulty)]
    if result.evaluation:
        rows.append(("Tests passed", f"{len(result.evaluation.passes)}/{result.evaluation.num_tests}"))
    if result.completion:
        rows.append(("Wait", _wait_text(result)))
    if result.scope:
        rows.append(("Scope", _scope_text(result)))
        if result.scope.missed_gold:
            rows.append(("Gold APIs not in scope", ", ".join(result.scope.missed_gold)))
    if trajectory:
        rows.append(("Blue's MCP calls", f"{trajectory.total_calls} ({trajectory.failed_calls} failed, "
                                         f"{trajectory.out_of_scope_calls} out of scope)"))
        rows.append(("API recall / precision", f"{_rounded(trajectory.api_recall)} / {_rounded(trajectory.api_precision)}"))
    elif result.trajectory_error:
        rows.append(("Trajectory", result.trajectory_error))
    if result.cleanup:
        refused = sum(result.cleanup.refused_calls.values())
        rows.append(("Cleanup", f"{'ok' if result.cleanup.ok else 'problems: ' + '; '.join(result.cleanup.errors)}"
                                + (f", {refused} refused call(s)" if refused else "")))
    if result.started_at and result.finished_at:
        rows.append(("Duration", f"{(result.finished_at - result.started_at).total_seconds():.1f} s"))
    return rows


def _rounded(value: float | None) -> float | None:
    return round(value, 2) if isinstance(value, float) else value


def _wait_text(result: BattleResult) -> str | None:
    c = result.completion
    if c is None:
        return None
    how = "the Blue called complete_task" if c.completed else f"not completed ({c.ended_by})"
    return f"{how} after {c.waited_s:.1f} s of {c.deadline_s:.0f} s"


def _scope_text(result: BattleResult) -> str | None:
    scope = result.scope
    if scope is None:
        return None
    size = "all tools" if scope.apis is None else f"{len(scope.apis)} APIs"
    recall = f", gold recall {scope.recall:.2f}" if scope.recall is not None else ""
    return f"{scope.predictor} ({scope.policy}): {size}{recall}"


def _run_dir_name(result: BattleResult) -> str:
    return (result.run_dir or result.battle_id).rstrip("/").rsplit("/", 1)[-1]
