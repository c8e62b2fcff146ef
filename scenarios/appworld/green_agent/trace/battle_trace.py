"""The Green's part of a battle's trace: what it sent, how the battle ended, the verdict, the world's changes.

`BattleTrace(run_dir, battle_id)` appends to `<run_dir>/trace.jsonl` as the battle happens (so a Green
killed midway leaves the records before the kill). It adds nothing the agent must not know: the verdict
keeps each test's requirement in plain words and whether it passed, never the test's trace, the expected
answer or the gold solution; the task message keeps its text with the battle's MCP endpoint scrubbed (the
gateway token is a registered secret, `kernel.redaction`). Every method never raises.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from green_agent.trace.world_changes import start_counts, summarize
from kernel.paraphrase_set import ParaphraseChoice
from kernel.trace_log import now, writer_for
from kernel.trace_record import TRACE_FILE, TableChange, VerdictTest, TraceRecord

log = logging.getLogger(__name__)


class BattleTrace:
    """Appends the Green's records of one battle."""

    def __init__(self, run_dir: Path, battle_id: str) -> None:
        self.path = Path(run_dir) / TRACE_FILE
        self.battle_id = battle_id
        self.writer = writer_for(self.path, count_existing=True)
        self.gathered = False
        """The gateway's records were merged in (`green_agent.trace.gather`)."""
        self.reply_traced = False

    def _write(self, kind: str, **fields: Any) -> None:
        try:
            self.writer.append(TraceRecord(at=fields.pop("at", None) or now(), battle_id=self.battle_id,
                                           kind=kind, source="green", **fields))  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - a trace never stops a battle
            log.error("battle %s: could not trace %s: %s", self.battle_id, kind, type(exc).__name__)

    def task_message(self, text: str, tools: list[str], paraphrase: ParaphraseChoice | None = None) -> None:
        """The task message the Green sent, the tools (scoped APIs) it named and, in a paraphrase arm, which wording
        of the task it carries."""
        self._write("task_message", text=text, arguments={"tools": tools}, paraphrase=paraphrase)

    def world_start(self, dbs: Path) -> None:
        """The change log's length per app right after set-up (private: readers skip it)."""
        self._write("world_start", counts=start_counts(dbs))

    def agent_reply(self, text: str | None, state: str, error: str | None) -> None:
        """The Blue's A2A reply to the task message (its text, or the error it ended with)."""
        self._write("agent_reply", text=text, error=error, note=f"the Blue's A2A reply: {state}")

    def end(self, ended_by: str, note: str, cost_usd: float | None = None) -> None:
        """How the battle ended and who ended it."""
        self._write("end", ended_by=ended_by, note=note, cost_usd=cost_usd)

    def verdict(self, winner: str | None, outcome: str, headline: str | None, tests: list[VerdictTest]) -> None:
        self._write("verdict", winner=winner, outcome=outcome, note=headline, tests=tests)

    def world_changes(self, dbs: Path, start: dict[str, int]) -> list[TableChange]:
        changes = summarize(dbs, start)
        self._write("world_changes", changes=changes)
        return changes
