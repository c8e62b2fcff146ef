"""The Blue's tool calls, posted to the battle log as they happen, `reported_by` the Blue's name.

The Blue cannot be trusted to report what it did, and an SDK Blue's MCP calls never reach the
backend at all; the gateway's call log is the record. While the Green waits (step 6), a
`BlueFeed` follows that log from where it stood when the battle's session opened and posts the
battle's calls in batches, so a long battle stays a few entries long:

- a batch is posted once it holds `max_calls` calls, or `max_age_s` after its first call, or at
  `stop()` (the rest, before the Green posts the end of its wait);
- one entry per batch: message `"<n> tool calls (#a-#b): k ok, e error, o out of scope"`, one
  markdown line per call (`• #n `tool` · in/out of scope · ok/error · ms`: the UI shows a table
  without padding, `markdown.bullets`) and a small `detail`
  of counts; arguments and API answers are never posted (world data), errors are cut short.
  Tool names and errors are the Blue's text: scrubbed (`outbound.prepare`), then rendered through
  `kernel.untrusted` (a tool name in a code span no backtick can close, errors escaped, one line).

Contract of the input (read by `kernel.call_log_reader.CallLogTail`): one JSON `CallRecord` per line, appended (never rewritten); a line is
read once it ends with a newline; lines of other battles and unreadable lines are skipped.
Posting is best effort (the reporter never raises); `stop()` is idempotent.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from green_agent.agentbeats import outbound
from green_agent.agentbeats.markdown import bullets
from kernel.call_record import CallRecord
from kernel.call_log_reader import CallLogTail
from kernel.untrusted import code_span, markdown_line, one_line

log = logging.getLogger(__name__)

MAX_CALLS_PER_ENTRY = 25
MAX_ENTRY_AGE_S = 5.0
POLL_S = 0.5
MAX_ERROR_CHARS = 80
MAX_TOOL_CHARS = 80

Post = Callable[[str, dict[str, Any], str], Any]
"""`post(message, detail, markdown)`: one entry for the battle log, reported by the Blue."""


class BlueCall(BaseModel):
    """One of the Blue's calls as the battle log shows it."""

    n: int = Field(description="1-based number of the call in this battle.")
    tool: str = Field(description="MCP tool name, `<app>__<api>`.")
    in_scope: bool = Field(description="False if the tool was outside the Blue's scope.")
    ok: bool = Field(description="The call succeeded.")
    ms: float = Field(description="Duration inside the gateway, milliseconds.")
    error: str | None = Field(default=None, description="The error, cut short; None when ok.")


class PollingFeed:
    """A feed's thread: `poll()` every `poll_s` from `start()` until `stop()`, then `poll(final=True)` once.

    A feed is a view: a failing poll is logged, never raised into the battle.
    """

    thread_name = "feed"

    def __init__(self, poll_s: float) -> None:
        self.poll_s = poll_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def poll(self, final: bool = False) -> None:
        raise NotImplementedError

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop following and post what is left (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._poll_logged(final=True)

    def _run(self) -> None:
        while not self._stop.wait(self.poll_s):
            self._poll_logged()

    def _poll_logged(self, final: bool = False) -> None:
        try:
            self.poll(final)
        except Exception:  # the feed is a view: it never breaks the battle
            log.exception("the Blue's %s failed", self.thread_name)


class BlueFeed(PollingFeed):
    """Follows one battle's calls and posts them in batches from a background thread."""

    thread_name = "blue-feed"

    def __init__(self, tail: CallLogTail, post: Post, max_calls: int = MAX_CALLS_PER_ENTRY,
                 max_age_s: float = MAX_ENTRY_AGE_S, poll_s: float = POLL_S) -> None:
        super().__init__(poll_s)
        self.tail = tail
        self.post = post
        self.max_calls = max_calls
        self.max_age_s = max_age_s
        self.calls_seen = 0
        self.entries_posted = 0
        self._pending: list[BlueCall] = []
        self._pending_since = 0.0

    def poll(self, final: bool = False) -> None:
        """Read new calls; post every batch that is full, old enough, or (final) anything left."""
        with self._lock:
            for record in self.tail.read_new():
                if not self._pending:
                    self._pending_since = time.monotonic()
                self.calls_seen += 1
                self._pending.append(to_blue_call(self.calls_seen, record))
            while len(self._pending) >= self.max_calls:
                self._flush(self._pending[:self.max_calls])
                self._pending = self._pending[self.max_calls:]
                self._pending_since = time.monotonic()
            aged = time.monotonic() - self._pending_since >= self.max_age_s
            if self._pending and (final or aged):
                self._flush(self._pending)
                self._pending = []

    def _flush(self, calls: list[BlueCall]) -> None:
        message, detail, markdown = render_batch([prepared(c) for c in calls])
        self.post(message, detail, markdown)
        self.entries_posted += 1


def prepared(call: BlueCall) -> BlueCall:
    """`call` with its Blue-derived texts scrubbed of secrets, battle tokens and local paths (before escaping)."""
    return call.model_copy(update=outbound.prepare({"tool": call.tool, "error": call.error}))


def to_blue_call(n: int, record: CallRecord) -> BlueCall:
    error = one_line(record.error, MAX_ERROR_CHARS) or None
    return BlueCall(n=n, tool=one_line(record.tool_name, MAX_TOOL_CHARS), in_scope=record.in_scope, ok=record.success, ms=round(record.duration_ms, 1),
                    error=None if record.success else error or "error")


def render_batch(calls: list[BlueCall]) -> tuple[str, dict[str, Any], str]:
    """Message, compact detail and markdown lines (one per call) of one batch."""
    ok = sum(c.ok for c in calls)
    out = sum(not c.in_scope for c in calls)
    span = f"#{calls[0].n}" if len(calls) == 1 else f"#{calls[0].n}-#{calls[-1].n}"
    noun = "call" if len(calls) == 1 else "calls"
    message = f"{len(calls)} tool {noun} ({span}): {ok} ok, {len(calls) - ok} error, {out} out of scope"
    detail = {"calls": span, "ok": ok, "errors": len(calls) - ok, "out_of_scope": out,
              "tools": sorted({c.tool for c in calls})[:10]}
    lines = [f"#{c.n} {code_span(c.tool, MAX_TOOL_CHARS)} · {'in' if c.in_scope else 'out of'} scope · "
             + ("ok" if c.ok else f"error: {markdown_line(c.error, MAX_ERROR_CHARS)}") + f" · {c.ms:.0f} ms"
             for c in calls]
    return message, detail, "\n".join(bullets(lines)) + "\n"
