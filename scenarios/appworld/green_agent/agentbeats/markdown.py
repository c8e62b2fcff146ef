"""A BattleResult as GitHub-flavoured markdown for the web battle UI (`markdown_content`).

Only what a reader needs: the verdict, AppWorld's tests, the wait, the scope and the trajectory,
and the time per step. Values come from the result record, which holds no secrets; test failure
traces are left out (they may quote world data), requirements are shown truncated.
"""

from __future__ import annotations

from typing import Any

from green_agent.models.result import BattleResult

MAX_CELL = 160
MAX_TESTS_LISTED = 12
WINNER_LABEL = {"blue_agent": "Blue (agent under test)", "green_agent": "Green (evaluator)", None: "none (draw)"}


def cell(value: Any) -> str:
    """One table cell: text with pipes escaped, newlines flattened, long values cut."""
    if value is None:
        return "–"
    if isinstance(value, float):
        value = f"{value:.3g}"
    text = " ".join(str(value).split()).replace("|", "\\|")
    return text if len(text) <= MAX_CELL else text[:MAX_CELL - 1] + "…"


def table(rows: list[tuple[str, Any]], header: tuple[str, str] = ("", "")) -> list[str]:
    lines = [f"| {header[0]} | {header[1]} |", "|---|---|"]
    lines += [f"| {cell(k)} | {cell(v)} |" for k, v in rows]
    return lines


def render_result_markdown(result: BattleResult) -> str:
    """The summary shown with the final result event."""
    lines = [f"## AppWorld battle: task `{result.task_id or 'unknown'}`", "",
             f"**Winner: {WINNER_LABEL.get(result.winner, result.winner)}** · status `{result.status}` · "
             f"outcome `{result.outcome}`", ""]
    lines += table(_summary_rows(result), ("Field", "Value"))
    if result.evaluation and (result.evaluation.passes or result.evaluation.failures):
        lines += ["", "### AppWorld tests", "", "| Result | Requirement |", "|---|---|"]
        tests = [("✅ pass", t) for t in result.evaluation.passes] + [("❌ fail", t) for t in result.evaluation.failures]
        lines += [f"| {mark} | {cell(t.requirement)} |" for mark, t in tests[:MAX_TESTS_LISTED]]
        if len(tests) > MAX_TESTS_LISTED:
            lines.append(f"| … | {len(tests) - MAX_TESTS_LISTED} more |")
    if result.timings:
        lines += ["", "### Time per step", ""]
        lines += table([(name, f"{seconds:.2f} s") for name, seconds in result.timings.items()], ("Step", "Wall time"))
    if result.outcome == "scope_error":
        lines += ["", f"> **Scope error**: the enforced scope refused Blue gold API(s) "
                  f"{cell(', '.join(result.scope.refused_gold if result.scope else []))}. A draw: Blue is not charged."]
    if result.error:
        lines += ["", f"> **Infrastructure error** in step `{result.error.step}` ({result.error.type}): "
                  f"{cell(result.error.message)}. Blue is not charged."]
    return "\n".join(lines) + "\n"


def _summary_rows(result: BattleResult) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = [("Task", result.task_id), ("Difficulty", result.difficulty),
                                   ("Blue", result.blue_agent_name or result.blue), ("Reason", result.reason)]
    if result.evaluation:
        passed = len(result.evaluation.passes)
        rows.append(("Tests passed", f"{passed}/{result.evaluation.num_tests}"))
    if result.completion:
        c = result.completion
        rows.append(("Completion", f"{'completed' if c.completed else 'not completed'} ({c.ended_by}, "
                                   f"{c.waited_s:.1f} s of {c.deadline_s:.0f} s)"))
    if result.scope:
        size = "all tools" if result.scope.apis is None else f"{len(result.scope.apis)} APIs"
        recall = f", gold recall {result.scope.recall}" if result.scope.recall is not None else ""
        rows.append(("Scope", f"{result.scope.predictor} ({result.scope.policy}): {size}{recall}"))
        if result.scope.missed_gold:
            rows.append(("Scope miss (gold APIs not in scope)", ", ".join(result.scope.missed_gold)))
        if result.scope.out_of_scope_calls:
            rows.append(("Out-of-scope calls", result.scope.out_of_scope_calls))
    trajectory = result.trajectory
    if trajectory:
        rows.append(("MCP calls", f"{trajectory.total_calls} ({trajectory.failed_calls} failed)"))
        if trajectory.api_recall is not None or trajectory.api_precision is not None:
            rows.append(("API recall / precision", f"{trajectory.api_recall} / {trajectory.api_precision}"))
    elif result.trajectory_error:
        rows.append(("Trajectory", result.trajectory_error))
    if result.started_at and result.finished_at:
        rows.append(("Duration", f"{(result.finished_at - result.started_at).total_seconds():.1f} s"))
    if result.run_dir:
        rows.append(("Run directory", result.run_dir))
    return rows
