"""Writing a battle's trace: every record bounded, redacted, and appended as one line.

`bounded(record)` is the one rule every writer applies before a record reaches disk:
- each string is cut to `MAX_TEXT_CHARS` (the REPL's 20,000-character rule) with a note saying how long it was,
  and a lone surrogate in it becomes U+FFFD (`kernel.encodable`: else the line would not encode and the record,
  an execution whose code holds `"\\ud800"`, would be lost);
- arguments are cut to `MAX_DEPTH` levels and `MAX_ITEMS` items per list or object;
- secrets are removed: credential-named keys blanked and the values seen under them removed from the record's
  text (`kernel.redaction`), then every secret value known for the record's battle (the supervisor's passwords,
  AppWorld's access tokens, the gateway token, slot secrets, API keys) scrubbed from every string, keys
  included, in each form it takes (`kernel.scrubber`), JWTs and Bearer credentials removed;
- a line larger than `MAX_RECORD_BYTES` loses its arguments (their size is noted).
What the agent sent is otherwise kept as sent (it is data: readers escape it).

`TraceWriter.append` appends one line with `kernel.call_log.append_line` (one `write` under an `flock`), so a
process killed midway leaves every record before the kill. Each battle's records are capped at
`MAX_TRACE_BYTES` per writer; past the cap one `cut` record says so and later records are dropped, except
the closing kinds (`CLOSING_KINDS`: end, verdict, world changes), which are always written (each is bounded).
Writing never raises: a trace that cannot be written is logged, and the battle goes on.

`TRACE_OFF_ENV=1` in the environment turns tracing off in every process that inherits it (the Green, its
gateways, the bridge): writers drop every record, and the Green skips gathering and the page. Only
`bench/bench_trace.py` sets it, to measure what tracing costs side by side; a run must keep its traces.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kernel.call_log import append_line
from kernel.encodable import encodable_text
from kernel.redaction import redact, redact_free_text, redact_text, secret_values
from kernel.scrubber import scrub, scrub_data
from kernel.trace_record import TraceRecord

logger = logging.getLogger(__name__)

MAX_TEXT_CHARS = 20_000
MAX_TRACE_BYTES = 10 << 20
MAX_RECORD_BYTES = 512 << 10
MAX_DEPTH = 20
MAX_ITEMS = 500
CLOSING_KINDS = frozenset({"end", "verdict", "world_changes", "world_start"})
TRACE_OFF_ENV = "APPWORLD_GREEN_TRACE_OFF"
BRIDGE_TRACE_FILE = "bridge.trace.jsonl"
"""The in-band bridge's trace log, in the folder of the call logs of the battles it plays."""
_TEXT_FIELDS = ("text", "result", "error", "note", "killed", "tool", "ended_by")


def tracing_on() -> bool:
    """False only when `TRACE_OFF_ENV` is `1` (the bench's untraced side)."""
    return os.environ.get(TRACE_OFF_ENV) != "1"


def trace_log_path(call_log: Path) -> Path:
    """The gateway's trace log beside its call log (`calls.jsonl` -> `calls.trace.jsonl`)."""
    return call_log.with_name(call_log.stem + ".trace.jsonl")


def cut_text(text: str, limit: int = MAX_TEXT_CHARS, secrets: list[str] | None = None,
             battle_id: str | None = None) -> str:
    """`text` scrubbed of secrets (`battle_id`'s and the process's) and cut to `limit` characters, with a note of
    its full length."""
    head = encodable_text(text[:limit * 2])  # scrub a little past the cut: a secret across it leaves no prefix
    head = scrub(redact_free_text(redact_text(head, secrets or ()) or ""), battle_id)
    if len(text) <= limit and len(head) <= limit:
        return head
    return head[:limit] + f"\n[... cut: {len(text):,} characters in all]"


def cut_value(value: Any, depth: int = 0, secrets: list[str] | None = None, battle_id: str | None = None) -> Any:
    """A JSON-like `value` within `MAX_DEPTH` levels and `MAX_ITEMS` items, each string (keys too) cut and scrubbed."""
    if isinstance(value, str):
        return cut_text(value, secrets=secrets, battle_id=battle_id)
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    if depth >= MAX_DEPTH:
        return "[... cut: nested too deep]"
    if isinstance(value, dict):
        items = list(value.items())
        kept = {cut_text(str(k), 200, battle_id=battle_id): cut_value(v, depth + 1, secrets, battle_id)
                for k, v in items[:MAX_ITEMS]}
        if len(items) > MAX_ITEMS:
            kept["[cut]"] = f"{len(items) - MAX_ITEMS} more key(s)"
        return kept
    if isinstance(value, (list, tuple)):
        kept_list = [cut_value(v, depth + 1, secrets, battle_id) for v in list(value)[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            kept_list.append(f"[... cut: {len(value) - MAX_ITEMS} more item(s)]")
        return kept_list
    return cut_text(repr(value), 200, battle_id=battle_id)


def bounded(record: TraceRecord) -> bytes:
    """`record` as one bounded, redacted JSON line (see the module docstring)."""
    battle = record.battle_id
    # bounded before anything else recurses into them
    arguments = cut_value(record.arguments, battle_id=battle) if record.arguments is not None else None
    secrets = secret_values(arguments) if arguments else []
    updates: dict[str, Any] = {}
    for name in _TEXT_FIELDS:
        value = getattr(record, name)
        if isinstance(value, str):
            updates[name] = cut_text(value, secrets=secrets, battle_id=battle)
    if arguments is not None:
        updates["arguments"] = cut_value(redact(arguments), secrets=secrets, battle_id=battle)
    if record.tests is not None:
        updates["tests"] = [t.model_copy(update={"requirement": cut_text(t.requirement, 2000, battle_id=battle)})
                            for t in record.tests[:MAX_ITEMS]]
    if record.usage is not None:  # its names are the agent's
        updates["usage"] = {cut_text(k, 64, battle_id=battle): v for k, v in record.usage.items()}
    if record.changes is not None:
        updates["changes"] = record.changes[:MAX_ITEMS]
    safe = record.model_copy(update=updates)
    line = safe.model_dump_json(exclude_none=True).encode("utf-8") + b"\n"
    if len(line) > MAX_RECORD_BYTES and safe.arguments is not None:
        safe = safe.model_copy(update={"arguments": {"omitted": f"{len(line):,} bytes"}})
        line = safe.model_dump_json(exclude_none=True).encode("utf-8") + b"\n"
    if len(line) > MAX_RECORD_BYTES:  # only many long strings at once; keep the record, drop its long text
        short = {name: cut_text(value, 2000, battle_id=battle) if value else None
                 for name, value in (("result", safe.result), ("text", safe.text))}
        safe = safe.model_copy(update=short)
        line = safe.model_dump_json(exclude_none=True).encode("utf-8") + b"\n"
    return line


def scrubbed(record: TraceRecord) -> TraceRecord:
    """`record` with every text scrubbed again of its battle's known secrets (what a reader writes out: the gathered
    trace, the page, `environment_io.md`, the Inspect export); its time, battle, kind and source kept as they are."""
    data = record.model_dump(mode="json", exclude_none=True)
    ours = {k: data[k] for k in ("at", "battle_id", "kind", "source")}
    return TraceRecord.model_validate({**scrub_data(data, record.battle_id), **ours})


def now() -> datetime:
    return datetime.now(timezone.utc)


class TraceWriter:
    """Appends bounded records to one JSONL file, at most `cap` bytes per battle (closing records apart)."""

    def __init__(self, path: Path, cap: int = MAX_TRACE_BYTES, count_existing: bool = False) -> None:
        self.path = Path(path)
        self.cap = cap
        self._lock = threading.Lock()
        self._used: dict[str, int] = {}
        self._cut: set[str] = set()
        self._count_existing = count_existing
        self.off = not tracing_on()

    def append(self, record: TraceRecord) -> None:
        """Write `record` (never raises)."""
        if self.off:
            return
        try:
            line = bounded(record)
            if record.kind not in CLOSING_KINDS and not self._admit(record, len(line)):
                return
            append_line(self.path, line)
        except Exception as exc:  # noqa: BLE001 - a trace never stops a battle
            logger.error("could not append to the trace %s: %s", self.path, type(exc).__name__)

    def _admit(self, record: TraceRecord, size: int) -> bool:
        with self._lock:
            battle = record.battle_id
            if battle not in self._used:
                self._used[battle] = self._existing_size()
            if self._used[battle] + size <= self.cap:
                self._used[battle] += size
                return True
            if battle in self._cut:
                return False
            self._cut.add(battle)
        note = TraceRecord(at=record.at, battle_id=battle, kind="cut", source=record.source,
                           note=f"the trace reached its cap ({self.cap:,} bytes): later events are not kept")
        append_line(self.path, bounded(note))
        return False

    def _existing_size(self) -> int:
        if not self._count_existing:
            return 0
        try:
            return os.stat(self.path).st_size
        except OSError:
            return 0


_writers: dict[Path, TraceWriter] = {}
_writers_lock = threading.Lock()


def writer_for(path: Path, count_existing: bool = False) -> TraceWriter:
    """The process's one writer of `path` (its per-battle budget is shared by every caller)."""
    key = Path(path).absolute()
    with _writers_lock:
        writer = _writers.get(key)
        if writer is None:
            writer = _writers[key] = TraceWriter(key, count_existing=count_existing)
        return writer
