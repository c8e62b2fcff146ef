"""Per-battle detail for the HTML report, read from the run directory (never from a live server).

For each row: the task (instruction, gold APIs) from `task.json`, the scope and AppWorld's failed
tests from `result.json`, and the call sequence from the battle's archived call records
(`mcp_calls.jsonl`, the gateway's records; else AppWorld's own `appworld/logs/api_calls.jsonl`), each read
through the run-folder reader (`green_agent.runfolder`: inside the folder, within its size limit).
Arguments are redacted again here (`kernel.redaction.redact`), whatever the source did.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from green_agent.steps.archive import CALLS_FILE, OUTPUTS_DIR
from kernel.call_log_reader import read_call_log
from kernel.redaction import redact
from green_agent.models.eval_run import EvalRow, TaskInfo
from green_agent.models.explanation import VerdictExplanation, explain
from green_agent.models.result import BattleResult, EvalTestRecord
from green_agent.runfolder.files import read_lines
from green_agent.runfolder.limits import CALL_LOG
from green_agent.runfolder.reader import RunFolder

MAX_CALLS_SHOWN = 300
MAX_ARGS_CHARS = 400


class CallView(BaseModel):
    """One call as the report shows it."""

    seq: int = Field(description="1-based position in the battle.")
    tool: str = Field(description="`app__api` tool name (or METHOD /path for AppWorld's own log).")
    arguments: str = Field(description="Redacted arguments as compact JSON, truncated.")
    success: bool | None = Field(default=None, description="Call outcome (None: unknown).")
    duration_ms: float | None = Field(default=None, description="Time in the gateway.")
    error: str | None = Field(default=None, description="Error message, truncated.")
    fault: str | None = Field(default=None, description=(
        "The kind of fault the gateway injected on purpose (a reliability run): the test, not the agent's error."))


class BattleDetail(BaseModel):
    """Everything the per-task detail section shows."""

    row: EvalRow
    info: TaskInfo | None = None
    scope_apis: list[str] | None = None
    scope_predictor: str | None = None
    gold_apis: list[str] = Field(default_factory=list)
    calls: list[CallView] = Field(default_factory=list)
    calls_total: int = 0
    calls_source: str | None = None
    call_durations_ms: list[float] = Field(default_factory=list)
    failures: list[EvalTestRecord] = Field(default_factory=list)
    reason: str | None = None
    error: str | None = None
    explanation: VerdictExplanation | None = Field(default=None, description="The verdict explained, the expected "
                                                   "answer included (report.html is a local output).")


def _args_text(value: Any) -> str:
    text = json.dumps(redact(value, scrub_strings=True), ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= MAX_ARGS_CHARS else text[:MAX_ARGS_CHARS] + "…"


def read_calls(folder: RunFolder, directory: Path) -> tuple[list[CallView], list[float], int, str | None]:
    """(calls shown, all durations, total count, source file name) of one battle directory of `folder`."""
    gateway_log = folder.file(directory / CALLS_FILE, CALL_LOG)
    if gateway_log is not None and (calls := read_call_log(gateway_log)):
        calls.sort(key=lambda r: (r.timestamp, r.seq or 0))
        durations = [float(r.duration_ms) for r in calls if r.duration_ms is not None]
        views = [CallView(seq=i, tool=r.tool_name, arguments=_args_text(r.arguments), success=r.success,
                          duration_ms=r.duration_ms, error=r.error[:300] if r.error else None,
                          fault=r.fault.kind if r.fault else None)
                 for i, r in enumerate(calls[:MAX_CALLS_SHOWN], start=1)]
        return views, durations, len(calls), CALLS_FILE
    appworld_log = directory / OUTPUTS_DIR / "logs" / "api_calls.jsonl"
    if records := list(read_lines(folder.path, appworld_log, CALL_LOG)):
        views = [CallView(seq=i, tool=f"{str(r.get('method', '?')).upper()} {r.get('url', '?')}",
                          arguments=_args_text(r.get("data", {})))
                 for i, r in enumerate(records[:MAX_CALLS_SHOWN], start=1)]
        return views, [], len(records), "appworld/logs/api_calls.jsonl"
    return [], [], 0, None


def battle_detail(out: Path, row: EvalRow) -> BattleDetail:
    """The detail of one row, from its result.json and the evidence beside it."""
    folder = RunFolder(out)
    path = folder.path / row.result_path
    result: BattleResult | None = folder.result_at(path).result
    info = folder.task_info(row.task_id)
    calls, durations, total, source = read_calls(folder, path.parent)
    scope = result.scope if result else None
    gold = (scope.gold_apis if scope and scope.gold_apis is not None else None) or (info.gold_apis if info else [])
    return BattleDetail(
        row=row, info=info, scope_apis=scope.apis if scope else None,
        scope_predictor=scope.predictor if scope else None,
        gold_apis=sorted(gold), calls=calls, calls_total=total, calls_source=source, call_durations_ms=durations,
        failures=result.evaluation.failures if result and result.evaluation else [],
        reason=result.reason if result else None,
        explanation=explain(result.model_copy(update={"instruction": result.instruction or (info.instruction if info
                                                                                             else None)}), local=True)
        if result else None,
        error=f"{result.error.type} in step {result.error.step}: {result.error.message}" if result and result.error
        else None)


def load_details(out: Path, rows: list[EvalRow]) -> list[BattleDetail]:
    return [battle_detail(out, row) for row in rows]
