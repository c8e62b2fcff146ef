"""Gather a battle's trace into its folder at archive time (like the call log).

The gateway appends its records (calls, executions) to a trace log shared by its battles, beside its call
log; the in-band bridge, if any, to its own. `gather(run_dir, battle_id, sources)` reads this battle's
records out of each source, merges them with the Green's own (already in `<run_dir>/trace.jsonl`) in time
order, and rewrites the file atomically within `MAX_TRACE_BYTES`: past the cap one `cut` record says so
and only the closing records are kept. Every record is scrubbed again of the secret values this process knows
for the battle (`kernel.trace_log.scrubbed`: the Green read the supervisor's passwords from the task's data; the
gateway and the bridge scrubbed what they wrote with what they knew). Returns the number of records gathered
from the sources. Never raises (the trace is evidence, not an input of the verdict): a problem comes back as text.
"""

from __future__ import annotations

from pathlib import Path

from green_agent.trace.reader import battle_lines, in_order, read_trace
from kernel.atomic import atomic_write_text
from kernel.trace_log import CLOSING_KINDS, MAX_TRACE_BYTES, scrubbed
from kernel.trace_record import TRACE_FILE, TraceRecord


def gather(run_dir: Path, battle_id: str, sources: list[Path],
           marks: dict[str, int] | None = None) -> tuple[int, str | None]:
    """Merge `sources`' records of `battle_id` into `<run_dir>/trace.jsonl`; (records gathered, problem).
    `marks`: each source's size before the battle was set (its records are read from there on)."""
    target = Path(run_dir) / TRACE_FILE
    marks = marks or {}
    try:
        own = read_trace(target) if target.is_file() else []
        theirs = [r for source in sources if Path(source).is_file()
                  for r in battle_lines(source, battle_id, marks.get(str(source), 0))]
        atomic_write_text(target, render_lines(in_order([scrubbed(r) for r in own + theirs])))
        return len(theirs), None
    except Exception as exc:  # noqa: BLE001 - evidence only
        return 0, f"the battle's trace could not be gathered ({type(exc).__name__}: {str(exc)[:200]})"


def render_lines(records: list[TraceRecord], cap: int = MAX_TRACE_BYTES) -> str:
    """`records` as JSONL within `cap` bytes (closing records always kept; one `cut` note where it was cut)."""
    lines: list[str] = []
    used, cut = 0, False
    for record in records:
        line = record.model_dump_json(exclude_none=True) + "\n"
        if record.kind in CLOSING_KINDS:
            lines.append(line)
            continue
        if record.kind == "cut" and cut:
            continue
        if not cut and used + len(line.encode()) <= cap:
            used += len(line.encode())
            lines.append(line)
        elif not cut:
            cut = True
            lines.append(TraceRecord(at=record.at, battle_id=record.battle_id, kind="cut", source="green",
                                     note=f"the trace reached its cap ({cap:,} bytes): later events are not kept"
                                     ).model_dump_json(exclude_none=True) + "\n")
    return "".join(lines)
