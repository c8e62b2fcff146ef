"""`appworld-green trace BATTLE_DIR`: a battle's trace in the terminal with rich, verdict first.

Reads `<battle dir>/trace.jsonl` (or the file given) with `green_agent.trace.reader`. Every text from the
trace is printed as rich `Text` (never parsed as console markup); long texts are cut to `SHOWN_CHARS` with their
length (the page and the file have them whole). Whatever field a text came from, it reaches the terminal through
one place, `CleanConsole.render`, which drops control characters (escape sequences, carriage returns, bidi
overrides: `kernel.untrusted.terminal_text`) from every segment of text rich renders; only rich's own styles,
which are not text, reach the terminal as escape sequences.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TextIO

from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.panel import Panel
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from green_agent.trace.reader import call_numbers
from kernel.trace_record import TraceRecord
from kernel.untrusted import bound, terminal_text

SHOWN_CHARS = 1500
WINNERS = {"blue_agent": ("The agent under test won", "green"), "green_agent": ("The agent lost", "red")}


class CleanConsole(Console):
    """A rich console whose every segment of text is cleaned on its way out: the one place trace text reaches the
    terminal (a segment rich made for a control of its own, `Segment.control`, is not text and passes)."""

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterator[Segment]:
        for segment in super().render(renderable, options):
            yield segment if segment.control else Segment(terminal_text(segment.text), segment.style)


def _text(value: object, style: str = "", limit: int = SHOWN_CHARS) -> Text:
    raw = "" if value is None else str(value)
    shown = bound(raw, limit)
    if len(raw) > limit:
        shown += f"\n[{len(raw):,} characters in all: see trace.html]"
    return Text(shown, style=style)


def verdict_panel(records: list[TraceRecord]) -> Panel:
    verdict = next((r for r in reversed(records) if r.kind == "verdict"), None)
    if verdict is None:
        return Panel(Text("No verdict in this trace (not judged, or still running)"), title="Verdict")
    label, colour = WINNERS.get(verdict.winner or "", ("Draw: not judged", "magenta"))
    lines = [Text(f"{label} ({verdict.outcome})", style=f"bold {colour}"), _text(verdict.note)]
    for test in sorted(verdict.tests or [], key=lambda t: t.passed):
        lines.append(Text("  passed  " if test.passed else "  FAILED  ", style="green" if test.passed else "bold red")
                     + _text(test.requirement, limit=300))
    return Panel(Group(*lines), title="Verdict", border_style=colour)


def event(record: TraceRecord, number: int = 0) -> Panel | None:
    """One timeline entry (None for the kinds shown elsewhere); `number`: a call's number in its battle
    (`green_agent.trace.reader.call_numbers`)."""
    when = record.at.strftime("%H:%M:%S")
    if record.kind in ("verdict", "world_changes", "world_start"):
        return None
    if record.kind == "tool_call":
        status = "ok" if record.ok else ("refused" if record.in_scope is False else "error")
        if record.fault:  # a fault injected on purpose (a reliability run): the test, not the agent's error
            status = f"injected fault: {record.fault}"
        colour = "green" if record.ok else "bold yellow" if record.fault else "bold red"
        title = Text(f"{when} call #{number} ") + _text(record.tool, limit=120) + Text(
            f" {status} {record.status_code or ''}", style=colour)
        body = Group(_text(json.dumps(record.arguments or {}, ensure_ascii=False), "cyan", 600),
                     _text(record.error, "red", 600) if record.error and not record.ok else Text(""),
                     _text(record.result, "dim", 600))
        return Panel(body, title=title, title_align="left",
                     border_style="green" if record.ok else "yellow" if record.fault else "red")
    if record.kind == "execution":
        bad = not record.ok or record.timed_out or record.killed
        flags = " ".join(f for f in ("failed" if not record.ok else "", "timed out" if record.timed_out else "",
                                     f"killed: {record.killed}" if record.killed else "") if f)
        title = Text(f"{when} execution ({record.api_calls or 0} API calls, {(record.duration_ms or 0):.0f} ms) ")
        title += Text(flags, style="bold red")
        return Panel(Group(_text(record.text, "bold"), Text("output:", style="dim"), _text(record.result)),
                     title=title, title_align="left", border_style="red" if bad else "magenta")
    body = Group(*[t for t in (_text(record.text) if record.text else None,
                               _text(record.error, "red") if record.error else None,
                               _text(record.note, "dim") if record.note else None) if t is not None])
    return Panel(body, title=Text(f"{when} {record.kind.replace('_', ' ')}"), title_align="left",
                 border_style="yellow" if record.kind == "cut" else "blue")


def changes_table(records: list[TraceRecord]) -> Table | Text:
    record = next((r for r in reversed(records) if r.kind == "world_changes"), None)
    if record is None:
        return Text("No world changes recorded.", style="dim")
    table = Table("app", "table", "rows added", "updates", "deletes", title="What the agent changed in the world")
    for change in record.changes or []:
        table.add_row(_text(change.app, limit=80), _text(change.table, limit=80), str(change.added),
                      str(change.changed), str(change.removed))
    return table if record.changes else Text("The agent changed nothing in the world.")


def print_trace(records: list[TraceRecord], file: TextIO | None = None, page: str | None = None) -> None:
    """Print the trace (and where its page is) on `file` (stdout), through `CleanConsole`."""
    console = CleanConsole(file=file)
    console.print(verdict_panel(records))
    numbers = call_numbers(records)
    for record in records:
        panel = event(record, numbers.get(id(record), 0))
        if panel is not None:
            console.print(panel)
    console.print(changes_table(records))
    if page is not None:
        console.print(Text(f"page: {page}"), soft_wrap=True)
