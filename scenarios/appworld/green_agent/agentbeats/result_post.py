"""The final result as the battle page shows it: the explanation in the message, a 6-key detail, plain markdown.

The page shows a result entry's `message` without a click, then its `detail` as pretty JSON, then
its markdown (rendered without typography styles). So:
- the message is the verdict explained (`green_agent.models.explanation.plain_lines`): the winner
  and the one-line why first, then the task, the Blue's answer (question tasks), how the Blue
  ended, the one count of tests, the failed requirements in plain words, the scope and its recall;
  one plain line each;
- the detail has at most 6 keys (`ResultDetail`: winner, outcome, tests passed/total, the Blue's
  answer when there is one, duration, evidence path);
- the markdown reads without CSS (the UI's Tailwind reset removes list bullets and table padding):
  bold labels on lines that carry their own bullet `•` and end in a hard break, no heading used for
  emphasis, no table (the steps' wall times are such lines too, numbered like the progress entries).
  The full record (`result.json`) stays in the run directory;
- the message's first line ends in a full stop: the page's 60-character preview joins lines with a
  space, so the next line reads as a new sentence, not as the end of the verdict;
- the result is reported under the name of its verdict (`verdict_reporter`: `Blue won`, `Blue lost`,
  `Draw`), so the collapsed page's last group header says who won (the UI opens every group
  collapsed and maps any `reported_by` containing "green" to the Green's chip, hence "Blue lost").

The expected answer is never posted (it is the test set): the explanation is built with
`explain(result)`, which cannot carry it. The steps after the Blue's actions (`FOLDED_STEPS`) post
no entry of their own: the result summarizes them, so the log reads system, Green steps, Blue's
actions, result.

Every value that can come from a Blue (its answer, error texts, the card's name) is rendered through
`kernel.untrusted` (the message's lines `one_line`, the markdown `markdown_line`/`code_span`). The
reporter scrubs the record before rendering (`outbound.prepare_result`), since escaping would hide a
secret or a local path from the scrub.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from green_agent.agentbeats.markdown import bullets
from green_agent.engine.sequencer import STEPS
from green_agent.models.explanation import VerdictExplanation, explain, posted_text
from green_agent.models.result import BattleResult
from kernel.untrusted import code_span, markdown_line, one_line

FOLDED_STEPS = ("archive", "metrics", "judge", "cleanup", "report")
"""Steps whose success posts no progress entry: the result entry summarizes them."""
MAX_FAILING_LISTED = 10
MAX_LINE = 300
MAX_MESSAGE_LINES = 10
MAX_ANSWER = 200
STEP_NUMBER = {name: number for number, name in enumerate(STEPS, start=1)}
"""The numbers of the progress entries ("Step 3: ...") and of the steps table (the engine's `STEPS` order)."""


class ResultDetail(BaseModel):
    """The `detail` of the result entry (at most 6 keys; the explanation is the message, the record is result.json)."""

    winner: str = Field(description="blue_agent | green_agent | draw.")
    outcome: str = Field(description="Graded outcome.")
    tests_passed: str | None = Field(default=None, description="'passed/total' AppWorld tests.")
    blue_answer: str | None = Field(default=None, description="The Blue's answer (question tasks only; never the "
                                    "expected one).")
    duration_s: float | None = Field(default=None, description="Battle wall time.")
    evidence: str = Field(description="Where the full record is (relative to the Green's runs directory).")


VERDICT_REPORTER = {"blue_agent": "Blue won", "green_agent": "Blue lost", "draw": "Draw"}
"""`reported_by` of the result entry per winner: the chip of the page's last group header."""


def winner_of(result: BattleResult) -> str:
    return result.winner or "draw"


def verdict_reporter(winner: str) -> str:
    return VERDICT_REPORTER.get(winner, VERDICT_REPORTER["draw"])


def blue_name(result: BattleResult) -> str:
    return result.blue or result.blue_agent_name or "Blue"


def compact_detail(result: BattleResult) -> dict[str, Any]:
    """The entry's detail: winner, outcome, tests, the Blue's answer (when the task asks one), duration, evidence."""
    evaluation, explanation = result.evaluation, explain(result)
    duration = (result.finished_at - result.started_at).total_seconds() if result.finished_at else None
    return ResultDetail(
        winner=winner_of(result), outcome=result.outcome,
        tests_passed=f"{len(evaluation.passes)}/{evaluation.num_tests}" if evaluation else None,
        blue_answer=one_line(explanation.answer, MAX_ANSWER) if explanation.question else None,
        duration_s=round(duration, 1) if duration is not None else None,
        evidence=f"<runs>/{_run_dir_name(result)}/result.json",
    ).model_dump(exclude_none=True)


def result_message(result: BattleResult) -> str:
    """The verdict explained in plain lines (each one line, bounded; no expected answer); the first ends in a stop."""
    headline, newline, rest = posted_text(result, MAX_MESSAGE_LINES, MAX_LINE).partition("\n")
    if headline and headline[-1] not in ".!?":
        headline += "."
    return headline + newline + rest


def render_markdown(result: BattleResult) -> str:
    """The explanation as bold-labelled bullets, the failed requirements, the facts, then the steps' wall times."""
    e = explain(result)
    who, _, why = e.headline.partition(": ")
    lines = [f"**{markdown_line(who)}**: {markdown_line(why, MAX_LINE)}", ""]
    lines += bullets([f"**{label}:** {value}" for label, value in _facts(result, e)])
    if e.failed:
        failed = [f"{markdown_line(f.requirement, MAX_LINE)}: {markdown_line(f.kind)}"
                  + (f" ({code_span(f.label)})" if f.label else "") for f in e.failed[:MAX_FAILING_LISTED]]
        if len(e.failed) > MAX_FAILING_LISTED:
            failed.append(f"and {len(e.failed) - MAX_FAILING_LISTED} more (in result.json)")
        lines += ["", "**Failed requirements**", ""] + bullets(failed)
    if result.timings:
        lines += ["", "**Steps** (numbered like the progress entries; wall time)", ""]
        lines += bullets([f"{STEP_NUMBER.get(name, '?')} {markdown_line(name)}: {seconds:.2f} s"
                          for name, seconds in result.timings.items()])
    lines += ["", f"Full record: `result.json` in the Green's run directory {code_span(_run_dir_name(result), 120)}."]
    return "\n".join(lines) + "\n"


def _facts(result: BattleResult, e: VerdictExplanation) -> list[tuple[str, str]]:
    """(bold label, escaped value) bullets, in reading order."""
    facts = [("Task", f"{code_span(e.task_id or 'unknown', 120)} {markdown_line(e.instruction or '', 600)}".strip()),
             ("Blue", markdown_line(blue_name(result), 120))]
    if e.question:
        facts.append(("Blue's answer", markdown_line(e.answer, MAX_ANSWER)))
    facts.append(("How the Blue ended", markdown_line(e.ending, MAX_LINE)))
    if e.tests:
        facts.append(("Tests", markdown_line(e.tests)))
    if e.scope:
        facts.append(("Scope", markdown_line(e.scope + (f"; {e.recall}" if e.recall else ""), MAX_LINE)))
    trajectory = result.trajectory
    if trajectory:
        facts.append(("Blue's MCP calls", f"{trajectory.total_calls} ({trajectory.failed_calls} failed, "
                                          f"{trajectory.out_of_scope_calls} out of scope)"))
    elif result.trajectory_error:
        facts.append(("Trajectory", markdown_line(result.trajectory_error, MAX_LINE)))
    if result.cleanup:
        refused = sum(result.cleanup.refused_calls.values())
        state = "ok" if result.cleanup.ok else "problems: " + "; ".join(result.cleanup.errors)
        facts.append(("Cleanup", markdown_line(state + (f", {refused} refused call(s)" if refused else ""), MAX_LINE)))
    if result.started_at and result.finished_at:
        facts.append(("Duration", f"{(result.finished_at - result.started_at).total_seconds():.1f} s"))
    return facts


def _run_dir_name(result: BattleResult) -> str:
    return (result.run_dir or result.battle_id).rstrip("/").rsplit("/", 1)[-1]
