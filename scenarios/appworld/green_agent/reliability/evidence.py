"""What the profile reads of one battle beyond its results row: its result.json, its trace's API sequence and
world changes, and where its trace page is.

Every read goes through the run-folder reader (`green_agent.runfolder`: inside the folder, bounded); a battle whose
files are missing or unreadable gives empty evidence, never an error (the profile is still written).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from green_agent.models.eval_run import EvalRow
from green_agent.models.result import BattleResult
from green_agent.runfolder.layout import TRACE_FILE
from green_agent.runfolder.reader import RunFolder
from green_agent.trace.reader import read_trace
from kernel.api_names import api_name
from kernel.trace_record import TableChange

TRACE_PAGE = "trace.html"


def battle_folder(row: EvalRow) -> PurePosixPath:
    """The battle's folder, relative to its run folder (from the row's checked `result_path`)."""
    return PurePosixPath(row.result_path).parent


def trace_link(run_name: str, row: EvalRow) -> str:
    """The battle's trace page, relative to the profile's folder."""
    return str(PurePosixPath(run_name) / battle_folder(row) / TRACE_PAGE)


def result_of(run: Path, row: EvalRow) -> BattleResult | None:
    """The battle's result.json, or None when it cannot be read."""
    return RunFolder(run).result_at(Path(run) / row.result_path).result


def _records(run: Path, row: EvalRow) -> list:
    path = Path(run) / battle_folder(row) / TRACE_FILE
    try:
        return read_trace(path) if path.is_file() else []
    except (OSError, ValueError):
        return []


def api_sequence(run: Path, row: EvalRow) -> list[str]:
    """The battle's tool calls in order, as `app.api` names (from its trace)."""
    return [api_name(r.tool) for r in _records(run, row) if r.kind == "tool_call" and r.tool]


def world_changes(run: Path, row: EvalRow) -> list[TableChange]:
    """The battle's changes to the world per app and table (its trace's last `world_changes` record)."""
    record = next((r for r in reversed(_records(run, row)) if r.kind == "world_changes"), None)
    return list(record.changes or []) if record else []
