"""The Blue's executions (code mode), posted to the battle log as they happen, `reported_by` the Blue's name.

In code mode the Blue acts by sending Python to the gateway's `execute`; a page listing its API calls
alone says little of what it did. While the Green waits (step 6), a `CodeFeed` follows the gateway's trace
log (`kernel.trace_log.trace_log_path(<call log>)`, written as the battle happens, gathered into the battle's
`trace.jsonl` at archive) from where it stood when the battle's session opened, and posts:

- one entry per execution, once its record is written (when its code ended): message
  `"execution #3: 4 API calls, ok (1.2 s)"`; markdown: the code and the exact output the agent saw, each
  shortened (`MAX_LINES` lines, `MAX_CHARS` characters, lines cut at `MAX_LINE_CHARS`, a "... N more
  lines" note; the output keeps its head and its tail, where a traceback ends), then the execution's API
  calls folded in, one `•` line each (past `MAX_CALLS_SHOWN`, the first and the last few); a small
  `detail` of counts;
- after `MAX_EXECUTION_ENTRIES` entries, executions are summed up `OVERFLOW_BATCH` to an entry (no code),
  so a long battle stays a readable number of entries;
- calls outside any execution (a refused tool call) as the call feed's batches (`blue_feed.render_batch`);
- one note if the trace reached its size cap (later executions are not in it).

A call belongs to the execution whose record follows it, unless it started before that execution began
(less `SLACK_S`): one execution runs at a time, and the gateway writes an execution's calls before it.
The code and output are the Blue's text: scrubbed (`outbound.prepare`, plus the task supervisor's personal
data, `private`) before they are cut, then put in a fenced block whose fence is longer than any backtick
run inside (no line can close it; a renderer escapes a block's content), control characters dropped and
lone surrogates replaced. API answers and arguments are never posted; the output is what the agent itself saw.

Contract of the input: one JSON `TraceRecord` per line, appended (never rewritten); a line is read once it
ends with a newline; other battles' lines and unreadable lines are skipped. Posting is best effort (the
reporter never raises); `stop()` is idempotent. Tracing turned off (the bench): the session uses `BlueFeed`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from green_agent.agentbeats import outbound
from green_agent.agentbeats.blue_feed import (MAX_ERROR_CHARS, MAX_TOOL_CHARS, BlueCall, PollingFeed, Post, prepared,
                                              render_batch)
from green_agent.agentbeats.markdown import bullets
from kernel.call_log_reader import CallLogTail
from kernel.encodable import encodable_text
from kernel.trace_record import TraceRecord
from kernel.untrusted import code_span, markdown_line, one_line, strip_controls

MAX_LINES = 40
MAX_CHARS = 2000
MAX_LINE_CHARS = 200
MAX_CALLS_SHOWN = 10
MAX_EXECUTION_ENTRIES = 100
OVERFLOW_BATCH = 25
SLACK_S = 1.0
SCRUB_CHARS = 20_000
"""The head and the tail of a longer text are scrubbed and shortened (the trace already cuts at 20,000)."""
POLL_S = 0.5
_BACKTICKS = re.compile(r"`+")


class TraceTail(CallLogTail):
    """The trace log's new complete lines of one battle, as `TraceRecord`s (the call log tail's reading rules)."""

    def _parse(self, line: bytes) -> TraceRecord | None:  # type: ignore[override]
        if self._needle is not None and self._needle not in line:
            return None
        try:
            record = TraceRecord.model_validate(json.loads(line))
        except (ValueError, RecursionError, ValidationError):
            return None
        return record if record.battle_id == self.battle_id else None


class CodeFeed(PollingFeed):
    """Follows one battle's executions in the trace log and posts them from a background thread."""

    thread_name = "blue-code-feed"

    def __init__(self, tail: TraceTail, post: Post, private: Callable[[], list[str]] = lambda: [],
                 poll_s: float = POLL_S, max_entries: int = MAX_EXECUTION_ENTRIES) -> None:
        super().__init__(poll_s)
        self.tail = tail
        self.post = post
        self.private = private
        self.max_entries = max_entries
        self.executions_seen = 0
        self.calls_seen = 0
        self.entries_posted = 0
        self._calls: list[tuple[datetime, BlueCall]] = []  # the calls whose execution has not ended yet
        self._overflow: list[tuple[int, TraceRecord, list[BlueCall]]] = []
        self._cut_noted = False
        self._private: list[str] = []

    def start(self) -> None:
        if self._thread is None:
            try:
                self._private = [v for v in self.private() if len(v) >= 3]
            except Exception:  # noqa: BLE001 - no personal data known: nothing more to scrub
                self._private = []
        super().start()

    def poll(self, final: bool = False) -> None:
        """Read new records; post each finished execution, and (final) whatever is left."""
        with self._lock:
            for record in self.tail.read_new():
                if record.kind == "tool_call":
                    self.calls_seen += 1
                    self._calls.append((record.at, to_blue_call(self.calls_seen, record)))
                elif record.kind == "execution":
                    self._execution(record)
                elif record.kind == "cut" and not self._cut_noted:
                    self._cut_noted = True
                    self._post("trace cut at its size cap: later executions not shown",
                               {"trace_cut": True}, "The battle's trace reached its size cap: later executions "
                               "are not in it (the call log still counts every call).\n")
            if self._overflow and final:
                self._post(*render_overflow(self._overflow))
                self._overflow = []
            if final and self._calls:
                self._post(*render_batch([prepared(c) for _, c in self._calls]))
                self._calls = []

    def _execution(self, record: TraceRecord) -> None:
        began = record.at - timedelta(seconds=SLACK_S)
        before = [c for at, c in self._calls if at < began]
        mine = [c for at, c in self._calls if at >= began]
        self._calls = []
        if before:
            self._post(*render_batch([prepared(c) for c in before]))
        self.executions_seen += 1
        if self.executions_seen <= self.max_entries:
            self._post(*render_execution(self.executions_seen, record, [prepared(c) for c in mine], self._private))
        else:
            self._overflow.append((self.executions_seen, record, mine))
            if len(self._overflow) >= OVERFLOW_BATCH:
                self._post(*render_overflow(self._overflow))
                self._overflow = []

    def _post(self, message: str, detail: dict[str, Any], markdown: str) -> None:
        self.post(message, detail, markdown)
        self.entries_posted += 1


def to_blue_call(n: int, record: TraceRecord) -> BlueCall:
    ok = bool(record.ok)
    error = one_line(record.error, MAX_ERROR_CHARS) or None
    return BlueCall(n=n, tool=one_line(record.tool, MAX_TOOL_CHARS), in_scope=record.in_scope is not False, ok=ok,
                    ms=round(record.duration_ms or 0.0, 1), error=None if ok else error or "error")


def calls_noun(count: int) -> str:
    return f"{count} API call" + ("" if count == 1 else "s")


def status(record: TraceRecord) -> str:
    if record.killed:
        return "killed"
    if record.timed_out:
        return "timed out"
    return "ok" if record.ok else "failed"


def render_execution(n: int, record: TraceRecord, calls: list[BlueCall],
                     private: list[str]) -> tuple[str, dict[str, Any], str]:
    """Message, compact detail and markdown (code, output, calls) of one execution."""
    api_calls = record.api_calls if record.api_calls is not None else len(calls)
    seconds = (record.duration_ms or 0.0) / 1000
    message = f"execution #{n}: {calls_noun(api_calls)}, {status(record)} ({seconds:.1f} s)"
    code, code_lines, code_more = shorten(publishable(record.text, private), tail=False)
    output, _, output_more = shorten(publishable(record.result, private), tail=True)
    ok = sum(c.ok for c in calls)
    detail = {"execution": n, "api_calls": api_calls, "calls_ok": ok, "calls_error": len(calls) - ok,
              "out_of_scope": sum(not c.in_scope for c in calls), "ok": bool(record.ok),
              "duration_s": round(seconds, 2), "timed_out": bool(record.timed_out),
              "killed": one_line(outbound.prepare({"k": record.killed})["k"], 120) or None,
              "code_lines": code_lines}
    parts = [f"**Code** ({code_lines} line{'s' if code_lines != 1 else ''})", fenced(code, "python")]
    if code_more:
        parts.append(code_more)
    parts += ["**Output**", fenced(output)]
    if output_more:
        parts.append(output_more)
    if record.killed:
        parts.append(f"**Killed:** {markdown_line(detail['killed'])}")
    if calls:
        parts.append("\n".join(bullets(call_lines(calls))))
    return message, detail, "\n\n".join(parts) + "\n"


def call_lines(calls: list[BlueCall]) -> list[str]:
    """One line per call; past `MAX_CALLS_SHOWN`, the first and the last half of them (the end is often the point)."""
    def one(c: BlueCall) -> str:
        return (f"#{c.n} {code_span(c.tool, MAX_TOOL_CHARS)} · {'in' if c.in_scope else 'out of'} scope · "
                + ("ok" if c.ok else f"error: {markdown_line(c.error, MAX_ERROR_CHARS)}") + f" · {c.ms:.0f} ms")
    if len(calls) <= MAX_CALLS_SHOWN:
        return [one(c) for c in calls]
    half = MAX_CALLS_SHOWN // 2
    more = f"... {len(calls) - 2 * half} more calls (all in the battle's trace.jsonl)"
    return [one(c) for c in calls[:half]] + [more] + [one(c) for c in calls[-half:]]


def render_overflow(batch: list[tuple[int, TraceRecord, list[BlueCall]]]) -> tuple[str, dict[str, Any], str]:
    """One entry summing up executions past the entry budget: one `•` line each, no code."""
    first, last = batch[0][0], batch[-1][0]
    calls = sum(r.api_calls or 0 for _, r, _ in batch)
    failed = sum(status(r) != "ok" for _, r, _ in batch)
    message = f"executions #{first}-#{last}: {calls_noun(calls)}, {failed} not ok"
    lines = [f"execution #{n}: {calls_noun(r.api_calls or 0)}, {status(r)} ({(r.duration_ms or 0) / 1000:.1f} s)"
             for n, r, _ in batch]
    detail = {"executions": f"#{first}-#{last}", "api_calls": calls, "not_ok": failed}
    note = "Past the page's budget of executions shown in full: their code and output are in the battle's trace."
    return message, detail, note + "\n\n" + "\n".join(bullets(lines)) + "\n"


def publishable(text: str | None, private: list[str]) -> str:
    """`text` fit for a public page before it is cut: lone surrogates and controls dropped, secrets, local paths
    and URLs scrubbed (`outbound.prepare`), the supervisor's personal data replaced."""
    value = encodable_text(text or "").replace("\r\n", "\n").replace("\r", "\n")
    if len(value) > 2 * SCRUB_CHARS:  # scrub a bounded text: its head and its tail
        value = value[:SCRUB_CHARS] + "\n" + value[-SCRUB_CHARS:]
    value = strip_controls(value).replace("\t", "    ")
    value = outbound.prepare({"t": value})["t"]
    for secret in private:
        value = value.replace(secret, "[PRIVATE]")
    return value


def shorten(text: str, tail: bool) -> tuple[str, int, str]:
    """(`text` within `MAX_LINES` lines and `MAX_CHARS` characters, its line count, the "... more" note or "")."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    cut = [line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS - 1] + "…" for line in lines]
    head, rest = [], []
    budget = MAX_CHARS
    keep_tail = MAX_LINES // 3 if tail and len(cut) > MAX_LINES else 0
    for line in cut[:MAX_LINES - keep_tail]:
        if budget - len(line) - 1 < (MAX_CHARS // 3 if keep_tail else 0):
            break
        head.append(line)
        budget -= len(line) + 1
    if keep_tail:
        for line in reversed(cut[len(head):][-keep_tail:]):
            if budget - len(line) - 1 < 0:
                break
            rest.insert(0, line)
            budget -= len(line) + 1
    hidden = len(cut) - len(head) - len(rest)
    if not hidden:
        return "\n".join(cut), len(lines), ""
    marker = f"[... {hidden} more line{'s' if hidden != 1 else ''} ...]"
    shown = head + ([marker] + rest if rest else [])
    note = f"... {hidden} more line{'s' if hidden != 1 else ''} (more in the battle's trace.jsonl)"
    return "\n".join(shown), len(lines), note


def fenced(text: str, info: str = "") -> str:
    """`text` as a fenced code block that nothing inside can close (fence longer than any backtick run)."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}" if text else f"{fence}{info}\n(empty)\n{fence}"


def trace_feed(trace_log: Path, battle_id: str, post: Post, private: Callable[[], list[str]]) -> CodeFeed:
    """The feed of `battle_id`'s executions in the gateway's trace log, followed from its current end."""
    return CodeFeed(TraceTail(trace_log, battle_id), post, private)
