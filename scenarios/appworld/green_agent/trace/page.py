"""`trace.html`: one battle's story on one self-contained page (inline CSS, no script, no network).

Read from the trace file alone (`green_agent.trace.reader`). The verdict comes first (who won, the
headline, each AppWorld test passed or not, the failed ones first), then the timeline (the task message,
each agent turn: a message, a tool call with its arguments, status and result, an execution with its code
monospaced and its output; long texts folded in `<details>`; refusals, errors and kills stand out, and a fault the
gateway injected on purpose (a reliability run) stands apart from them, marked as the test, not the agent's error),
then the world's changes per app and table. Every text from the trace goes through `kernel.untrusted.html_text`:
the agent's markup renders as text.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from green_agent.trace.reader import call_numbers, read_trace
from kernel.atomic import atomic_write_text
from kernel.trace_log import scrubbed
from kernel.trace_record import TraceRecord
from kernel.untrusted import html_text

_OUTPUT_MARK = '<div class="muted">output the agent saw</div>'
FOLD_CHARS = 1200
"""Texts longer than this are folded (their first lines shown in the summary)."""
WINNERS = {"blue_agent": "The agent under test won", "green_agent": "The agent lost",
           None: "Draw: the battle was not judged"}
TITLES = {"task_message": "Task message (Green → agent)", "agent_message": "Agent said",
          "green_message": "Green answered", "agent_reply": "Agent's reply", "end": "End",
          "cut": "Trace cut"}

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d2330;background:#fafbfc;
  max-width:1100px}
h1{font-size:21px;margin:0 0 6px}h2{font-size:17px;margin:26px 0 8px}.muted{color:#5b6475;font-size:12px}
.verdict{background:#fff;border:2px solid #dde2ea;border-radius:8px;padding:12px 16px}
.verdict.won{border-color:#1a7f37}.verdict.lost{border-color:#cf222e}.verdict.draw{border-color:#8250df}
.verdict .who{font-size:18px;font-weight:700}
ul.tests{margin:8px 0 0;padding-left:20px}.pass{color:#1a7f37}.fail{color:#cf222e;font-weight:600}
.ev{background:#fff;border:1px solid #dde2ea;border-left:4px solid #9aa4b5;border-radius:6px;margin:8px 0;
  padding:8px 12px}
.ev.task_message{border-left-color:#3d7be0}.ev.execution{border-left-color:#6f42c1}
.ev.tool_call{border-left-color:#1a7f37}
.ev.bad{border-left-color:#cf222e;background:#fff6f5}.ev.injected{border-left-color:#bf8700;background:#fff8e6}
.tag.injected{background:#bf8700;color:#fff}.ev.cut{border-left-color:#9a6700;background:#fffbea}
.head{font-weight:600}.head .t{color:#5b6475;font-weight:400;font-size:12px;margin-left:8px}
.tag{display:inline-block;border-radius:4px;padding:0 6px;font-size:12px;margin-left:6px;background:#eef1f6}
.tag.bad{background:#cf222e;color:#fff}.tag.ok{background:#dafbe1;color:#1a7f37}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f5f8;padding:8px;border-radius:4px;
  font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;margin:6px 0;max-height:480px;overflow:auto}
pre.code{background:#1f2430;color:#e6e9ef}.calls{margin-left:14px}
details summary{cursor:pointer;color:#3d5a99}
table{border-collapse:collapse;background:#fff}th,td{border:1px solid #dde2ea;padding:4px 8px;text-align:left}
th{background:#eef1f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
"""


def _pre(text: str | None, css: str = "", fold: int = FOLD_CHARS) -> str:
    """A monospaced block, folded when longer than `fold` characters."""
    if not text:
        return '<pre class="muted">(empty)</pre>'
    klass = f' class="{css}"' if css else ""
    if len(text) <= fold:
        return f"<pre{klass}>{html_text(text)}</pre>"
    first = text[:160].splitlines()[0] if text[:160].splitlines() else ""
    return (f"<details><summary>{html_text(len(text))} characters: {html_text(first)}…</summary>"
            f"<pre{klass}>{html_text(text)}</pre></details>")


def _time(record: TraceRecord) -> str:
    return record.at.strftime("%H:%M:%S.%f")[:-3]


def nest_calls(records: list[TraceRecord]) -> list[tuple[TraceRecord, list[TraceRecord]]]:
    """Each record with the calls made during it: an execution's `apis` calls go inside it (code mode)."""
    entries: list[tuple[TraceRecord, list[TraceRecord]]] = []
    current: tuple[TraceRecord, list[TraceRecord]] | None = None
    for record in records:
        if current is not None and record.kind == "tool_call" and record.at <= _end_of(current[0]):
            current[1].append(record)
            continue
        entry: tuple[TraceRecord, list[TraceRecord]] = (record, [])
        current = entry if record.kind == "execution" else None
        entries.append(entry)
    return entries


def _end_of(execution: TraceRecord) -> datetime:
    return execution.at + timedelta(milliseconds=(execution.duration_ms or 0) + 1)


def _event(record: TraceRecord, numbers: dict[int, int], inner: list[TraceRecord] | None = None) -> str:
    """One timeline entry (empty for kinds shown elsewhere); `numbers`: the calls' numbers in the battle
    (`call_numbers`); `inner`: the calls an execution made."""
    if record.kind in ("verdict", "world_changes", "world_start"):
        return ""
    bad = record.kind == "tool_call" and not record.ok and not record.fault or record.kind == "execution" and (
        not record.ok or record.timed_out or record.killed) or record.kind == "agent_reply" and record.error
    css = f"ev {record.kind}{' bad' if bad else ''}{' injected' if record.fault else ''}"
    head, body = _describe(record, numbers)
    if inner:
        calls = "".join(_event(call, numbers) for call in inner)
        body = body.replace(_OUTPUT_MARK, f'<div class="calls">{calls}</div>{_OUTPUT_MARK}', 1)
    return (f'<div class="{css}" data-kind="{record.kind}"><div class="head">{head}'
            f'<span class="t">{_time(record)} · {html_text(record.source)}</span></div>{body}</div>')


def _describe(record: TraceRecord, numbers: dict[int, int]) -> tuple[str, str]:
    if record.kind == "tool_call":
        return _call(record, numbers.get(id(record), 0))
    if record.kind == "execution":
        tags = "".join(f'<span class="tag bad">{html_text(t)}</span>' for t in (
            "failed" if not record.ok else "", "timed out" if record.timed_out else "",
            f"killed: {record.killed}" if record.killed else "") if t)
        head = (f"Execution <span class=\"tag\">{record.api_calls or 0} API call(s)</span>"
                f"<span class=\"tag\">{(record.duration_ms or 0):.0f} ms</span>{tags}")
        return head, f"{_pre(record.text, 'code')}{_OUTPUT_MARK}{_pre(record.result)}"
    title = html_text(TITLES.get(record.kind, record.kind))
    fold = 4 * FOLD_CHARS if record.kind == "task_message" else FOLD_CHARS
    body = _pre(record.text, fold=fold) if record.text else ""
    if record.error:
        body += f'<div class="fail">{html_text(record.error)}</div>'
    if record.note:
        body += f"<div>{html_text(record.note)}</div>"
    if record.kind == "agent_message" and record.arguments:
        what = f"tool call {record.tool}" if record.tool else "data parts"
        body += f'<div class="muted">{html_text(what)}</div>' + _pre(json.dumps(record.arguments, ensure_ascii=False))
    if record.kind == "task_message" and record.arguments and record.arguments.get("tools"):
        body += f'<div class="muted">tools named: {html_text(", ".join(map(str, record.arguments["tools"])))}</div>'
    if record.usage:
        body += f'<div class="muted">usage: {html_text(json.dumps(record.usage))}</div>'
    return title, body


def _call(record: TraceRecord, number: int) -> tuple[str, str]:
    if record.fault:
        return _injected(record, number)
    status = "ok" if record.ok else ("refused" if record.in_scope is False else "error")
    tag = f'<span class="tag {"ok" if record.ok else "bad"}">{html_text(status)}' + (
        f" {record.status_code}" if record.status_code else "") + "</span>"
    head = (f"Call #{number} <code>{html_text(record.tool)}</code>{tag}"
            f"<span class=\"tag\">{(record.duration_ms or 0):.0f} ms</span>")
    args = json.dumps(record.arguments or {}, ensure_ascii=False)
    body = f"{_pre(args)}<div class=\"muted\">result returned</div>{_pre(record.result)}"
    if record.error and not record.ok:
        body = f'<div class="fail">{html_text(record.error)}</div>' + body
    return head, body


def _injected(record: TraceRecord, number: int) -> tuple[str, str]:
    """A call the gateway answered with a planned fault: the test, not the agent's error; what the agent got."""
    head = (f"Call #{number} <code>{html_text(record.tool)}</code>"
            f'<span class="tag injected">injected fault: {html_text(record.fault)}'
            + (f" {record.status_code}" if record.status_code else "") + "</span>"
            f"<span class=\"tag\">{(record.duration_ms or 0):.0f} ms</span>")
    args = json.dumps(record.arguments or {}, ensure_ascii=False)
    body = ('<div class="muted">the gateway answered this call with a planned fault (a reliability run); it never '
            "reached AppWorld and is not the agent's error</div>"
            f'{_pre(args)}<div class="muted">what the agent received</div>{_pre(record.result)}')
    return head, body


def _verdict(records: list[TraceRecord]) -> str:
    verdict = next((r for r in reversed(records) if r.kind == "verdict"), None)
    if verdict is None:
        return '<section class="verdict draw" id="verdict"><div class="who">No verdict in this trace</div>' \
               '<div class="muted">the battle ended before it was judged, or is still running</div></section>'
    css = {"blue_agent": "won", "green_agent": "lost"}.get(verdict.winner or "", "draw")
    tests = sorted(verdict.tests or [], key=lambda t: t.passed)
    items = "".join(f'<li class="{"pass" if t.passed else "fail"}">{"passed" if t.passed else "FAILED"}: '
                    f"{html_text(t.requirement)}</li>" for t in tests)
    passed = sum(t.passed for t in tests)
    return (f'<section class="verdict {css}" id="verdict"><div class="who">{html_text(WINNERS.get(verdict.winner))}'
            f' <span class="tag">{html_text(verdict.outcome)}</span></div>'
            f"<div>{html_text(verdict.note or '')}</div>"
            f'<div class="muted">{passed} of {len(tests)} AppWorld test(s) passed</div><ul class="tests">{items}</ul>'
            "</section>")


def _changes(records: list[TraceRecord]) -> str:
    record = next((r for r in reversed(records) if r.kind == "world_changes"), None)
    if record is None:
        return '<p class="muted">No world changes recorded (the battle was not archived).</p>'
    if not record.changes:
        return '<p class="muted" id="no-changes">The agent changed nothing in the world.</p>'
    rows = "".join(f"<tr><td>{html_text(c.app)}</td><td>{html_text(c.table)}</td><td class=\"num\">{c.added}</td>"
                   f"<td class=\"num\">{c.changed}</td><td class=\"num\">{c.removed}</td></tr>" for c in record.changes)
    return ('<table id="changes"><tr><th>app</th><th>table</th><th>rows added</th><th>updates</th><th>deletes</th>'
            f"</tr>{rows}</table>")


def render(records: list[TraceRecord]) -> str:
    """The page for a battle's records (in time order)."""
    battle = records[0].battle_id if records else "(empty trace)"
    numbers = call_numbers(records)
    timeline = "".join(_event(r, numbers, inner) for r, inner in nest_calls(records)) or '<p class="muted">No events.</p>'
    calls = sum(r.kind == "tool_call" for r in records)
    executions = sum(r.kind == "execution" for r in records)
    faults = sum(bool(r.fault) for r in records if r.kind == "tool_call")
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>Battle {html_text(battle)}</title><style>{CSS}</style></head><body>"
            f"<h1>Battle {html_text(battle)}</h1><div class=\"muted\">{calls} call(s), {executions} execution(s), "
            f"{len(records)} trace record(s)"
            + (f', <span id="injected-faults">{faults} injected fault(s)</span>' if faults else "")
            + f"</div>{_verdict(records)}"
            f"<h2>Timeline</h2><div id=\"timeline\">{timeline}</div>"
            f"<h2>What the agent changed in the world</h2>{_changes(records)}</body></html>")


def write_page(trace: Path, target: Path) -> Path:
    """Render `trace` (a trace.jsonl) to `target` (trace.html), atomically; its records scrubbed again of their
    battle's known secrets before they are escaped (`kernel.trace_log.scrubbed`)."""
    return atomic_write_text(Path(target), render([scrubbed(r) for r in read_trace(Path(trace))]))
