"""The engine's hook points into the battle trace: one call per step, each never raising.

The sequencer (`green_agent.engine.sequencer`) calls these: `world_start` after set-up, the task message
(`BattleTrace.task_message`) after step 4, `blue_reply` after the wait, `gather_battle` after the archive,
`finish` when the result is final (end, verdict, world changes, trace.html; gathering first if the archive
step was skipped). With tracing off (`kernel.trace_log.tracing_on`, the bench's untraced side) they do nothing.
"""

from __future__ import annotations

import logging
from pathlib import Path

from green_agent.models.result import ArchiveRecord, BattleResult
from green_agent.steps.dispatch import DispatchHandle
from green_agent.trace.battle_trace import BattleTrace
from green_agent.trace.finish import finish_trace
from green_agent.trace.gather import gather
from green_agent.trace.world_changes import start_counts
from kernel.trace_log import BRIDGE_TRACE_FILE, trace_log_path, tracing_on

log = logging.getLogger(__name__)


def world_start(trace: BattleTrace, outputs: Path) -> dict[str, int] | None:
    """The change log's length per app right after set-up (None if AppWorld's outputs are not readable here)."""
    dbs = Path(outputs) / "dbs"
    if not tracing_on() or not dbs.is_dir():
        return None
    counts = start_counts(dbs)
    trace.world_start(dbs)
    return counts


def blue_reply(trace: BattleTrace, handle: DispatchHandle | None) -> None:
    """The Blue's A2A reply, if it came (its text, or its error); once (called after the wait and at the report, as a
    Blue may answer after it completed the task)."""
    if handle is None:
        return
    reply = handle.reply()
    if reply.state == "pending" or reply.bridge_report is not None or trace.reply_traced:
        return
    trace.reply_traced = True
    trace.agent_reply(reply.text, reply.state, reply.error)


def gather_battle(trace: BattleTrace, call_log: Path | None, archive: ArchiveRecord | None,
                  marks: dict[str, int] | None = None) -> None:
    """Merge the gateway's (and the bridge's) records of this battle into its trace (`marks`: where they start)."""
    if not tracing_on():
        return
    _, problem = gather(trace.path.parent, trace.battle_id, trace_sources(call_log), marks)
    trace.gathered = True
    if problem and archive is not None:
        archive.problems.append(problem)


def trace_sources(call_log: Path | None) -> list[Path]:
    """The shared trace logs a battle's records are gathered from: the gateway's, and the bridge's if any."""
    sources = [trace_log_path(Path(call_log))] if call_log is not None else []
    bridge = bridge_trace_path(call_log)
    if bridge is not None:
        sources.append(bridge)
    return sources


def bridge_trace_path(call_log: Path | None) -> Path | None:
    """The in-band bridge's trace log in the call log's folder (`BRIDGE_TRACE_FILE`), if any: one bridge serves
    an assessment's slots, whose call logs share that folder (`green_agent.a2a.assessment.running_bridge`)."""
    if call_log is None:
        return None
    return Path(call_log).with_name(BRIDGE_TRACE_FILE)


def finish(trace: BattleTrace, result: BattleResult, start: dict[str, int] | None,
           call_log: Path | None = None, marks: dict[str, int] | None = None) -> str | None:
    """The closing records and the page; the gateway's records are gathered here if the archive step did not run
    (an infrastructure error skipped it, e.g. a gateway killed midway: its records up to the kill are kept)."""
    if not tracing_on():
        return None
    if not trace.gathered:
        gather_battle(trace, call_log, None, marks)
    return finish_trace(trace, result, start)
