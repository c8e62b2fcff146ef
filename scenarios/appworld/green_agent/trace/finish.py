"""The end of a battle's trace: how it ended, the verdict, the world's changes, then the page.

`finish_trace(trace, result, start)` appends the closing records from the finished `BattleResult` and
renders `<run_dir>/trace.html` from the trace file alone (`green_agent.trace.page`); in code mode it also
writes the executions into the archived `appworld/logs/environment_io.md` (`green_agent.trace.environment_io`).
The verdict keeps each AppWorld test's requirement and whether it passed, nothing of its internals. Returns a
problem (text) instead of raising: the trace is evidence, the result stands without it.
"""

from __future__ import annotations

from pathlib import Path

from green_agent.models.result import BattleResult
from green_agent.trace.battle_trace import BattleTrace
from green_agent.trace.environment_io import write_environment_io
from green_agent.trace.page import write_page
from green_agent.trace.reader import read_trace
from kernel.trace_record import VerdictTest


def end_note(result: BattleResult) -> tuple[str, str]:
    """(ended_by, a plain line saying who ended the battle and how)."""
    completion = result.completion
    if completion is None:
        return "not_started", f"the battle did not reach the wait ({result.error.message if result.error else ''})"
    report = completion.bridge_report
    if report is not None:
        return f"bridge:{report.ended_by}", f"the in-band conversation ended: {report.message}"
    words = {"completed": "the agent called complete_task", "deadline": "the deadline passed",
             "blue_replied": "the agent replied without completing the task",
             "blue_error": "the agent's A2A call ended in an error"}
    note = words.get(completion.ended_by, completion.ended_by)
    return completion.ended_by, f"{note} after {completion.waited_s:.1f} s"


def verdict_tests(result: BattleResult) -> list[VerdictTest]:
    evaluation = result.evaluation
    if evaluation is None:
        return []
    return ([VerdictTest(requirement=t.requirement, passed=True) for t in evaluation.passes]
            + [VerdictTest(requirement=t.requirement, passed=False) for t in evaluation.failures])


def finish_trace(trace: BattleTrace, result: BattleResult, start: dict[str, int] | None) -> str | None:
    """Append end, verdict and world changes; write trace.html. A problem, or None."""
    try:
        ended_by, note = end_note(result)
        trace.end(ended_by, note)
        headline = result.explanation.headline if result.explanation else result.reason
        trace.verdict(result.winner, result.outcome, headline, verdict_tests(result))
        dbs = Path(result.archive.outputs_dir) / "dbs" if result.archive and result.archive.outputs_dir else None
        if dbs is not None and start is not None:
            trace.world_changes(dbs, start)
        write_page(trace.path, trace.path.with_name("trace.html"))
        if result.archive and result.archive.outputs_dir:
            logs = Path(result.archive.outputs_dir) / "logs"
            write_environment_io(read_trace(trace.path), logs / "environment_io.md")
        return None
    except Exception as exc:  # noqa: BLE001 - evidence only
        return f"the battle's trace could not be finished ({type(exc).__name__}: {str(exc)[:200]})"
