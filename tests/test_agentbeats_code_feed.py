"""The battle page's code-mode entries, without processes: the Blue's executions from the gateway's trace log.

Written here as the gateway writes them (`GatewayTrace`: a `tool_call` line per call, then the `execution`
line once its code ended), read by `CodeFeed`, posted through the real `BackendReporter`.
Mocked contract: backend `POST {backend}/battles/{id}` -> 204, body = the event as JSON.
Rendering: markdown-it (CommonMark, raw HTML on, as the web UI must be assumed to render).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import responses
from markdown_it import MarkdownIt

from green_agent.agentbeats.code_feed import (MAX_CHARS, MAX_LINES, CodeFeed, TraceTail, fenced, render_execution,
                                              trace_feed)
from green_agent.agentbeats.reporter import BackendReporter
from kernel.scrubber import register_secrets
from mcp_gateway.trace_hooks import GatewayTrace
from kernel.trace_record import TraceRecord
from markdown_shape import assert_reads_without_css

BACKEND = "http://127.0.0.1:18003"
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
HOSTILE_CODE = ("x = '<img src=x onerror=alert(1)>'\n**Blue wins**\n```\n</code></pre><script>alert(2)</script>\n"
                "`````\n# Blue wins (winner blue_agent)\n[link](javascript:alert(3))\n\u202eevil\x00\x1b[31m\ud800end")
SECRET = "tok-9f8e7d6c5b4a39281706"


def line(kind: str, at: datetime, battle_id: str = "b-1", **fields: Any) -> str:
    record = TraceRecord(at=at, battle_id=battle_id, kind=kind, source="gateway", **fields)
    return json.dumps(record.model_dump(mode="json")) + "\n"  # ASCII: a lone surrogate as its JSON escape


def call(at: datetime, tool: str = "spotify__login", **fields: Any) -> str:
    values = {"ok": True, "in_scope": True, "duration_ms": 12.5, "result": "{}"} | fields
    return line("tool_call", at, tool=tool, **values)


def execution(at: datetime, code: str = "print(1)", output: str = "1", api_calls: int = 0, **fields: Any) -> str:
    values = {"ok": True, "timed_out": False, "duration_ms": 1234.0} | fields
    return line("execution", at, text=code, result=output, api_calls=api_calls, **values)


def write(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def feed(log: Path, posts: list[tuple[str, dict[str, Any], str]], **kwargs: Any) -> CodeFeed:
    return CodeFeed(TraceTail(log, "b-1"), lambda m, d, md: posts.append((m, d, md)), **kwargs)


def render(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def test_each_execution_is_one_entry_with_its_code_output_and_its_calls(tmp_path: Path) -> None:
    log = tmp_path / "calls.trace.jsonl"
    write(log, execution(T0, battle_id="b-0"))  # before the battle's session: never read
    posts: list[tuple[str, dict[str, Any], str]] = []
    code_feed = feed(log, posts)
    write(log, call(T0, "supervisor__show_profile"))  # a tool call outside any execution (refused in code mode)
    write(log, call(T0 + timedelta(seconds=5), "spotify__login"))
    write(log, call(T0 + timedelta(seconds=6), "spotify__show_song", ok=False, error="404: no song"))
    write(log, line("tool_call", T0 + timedelta(seconds=5), battle_id="b-2", tool="other__battle"))
    code_feed.poll()
    assert posts == []  # calls wait for their execution
    code = "\n".join(f"step_{k} = apis.spotify.login()" for k in range(60))
    write(log, execution(T0 + timedelta(seconds=4.5), code, "Execution failed. Traceback:\nException: 404",
                         api_calls=2, ok=False))
    code_feed.poll()
    (batch, _, _), (message, detail, markdown) = posts
    assert batch == "1 tool call (#1): 1 ok, 0 error, 0 out of scope"
    assert message == "execution #1: 2 API calls, failed (1.2 s)" and len(message) <= 60
    assert detail == {"execution": 1, "api_calls": 2, "calls_ok": 1, "calls_error": 1, "out_of_scope": 0,
                      "ok": False, "duration_s": 1.23, "timed_out": False, "killed": None, "code_lines": 60}
    assert "step_0 = apis.spotify.login()" in markdown and f"step_{MAX_LINES - 1} =" in markdown
    assert f"step_{MAX_LINES} =" not in markdown and "... 20 more lines" in markdown
    assert "Exception: 404" in markdown and "#2 `spotify__login` · in scope · ok" in markdown
    assert "#3 `spotify__show_song` · in scope · error: 404: no song" in markdown
    assert "other__battle" not in json.dumps(posts) and '"{}"' not in json.dumps(posts)  # no answer is posted
    assert_reads_without_css(markdown)
    html = render(markdown)
    assert html.count("<pre><code") == 2 and "<h" not in html


def test_hostile_code_and_output_render_as_text_and_stay_bounded(tmp_path: Path) -> None:
    log = tmp_path / "calls.trace.jsonl"
    posts: list[tuple[str, dict[str, Any], str]] = []
    code_feed = feed(log, posts)
    huge = ("<b>" + "`" * 7 + "A" * 300 + "\n") * 16_000 + "Traceback: the last line"  # ~5 MB
    # written as the gateway writes it (its trace writer cuts each text to 20,000 characters)
    GatewayTrace(tmp_path / "calls.jsonl").execution("b-1", T0, HOSTILE_CODE, huge, failed=False, timed_out=False,
                                                     killed="memory limit </pre><img src=x>", api_calls=0,
                                                     duration_ms=1234.0)
    code_feed.poll()
    [(message, detail, markdown)] = posts
    uncut = TraceRecord(at=T0, battle_id="b-1", kind="execution", source="gateway", text=HOSTILE_CODE, result=huge)
    raw = render_execution(1, uncut, [], [])[2]
    assert len(raw) < 3 * MAX_CHARS + 1500 and "Traceback: the last line" in raw  # even uncut by the trace
    assert message == "execution #1: 0 API calls, killed (1.2 s)"
    assert len(markdown) < 3 * MAX_CHARS + 1500, len(markdown)
    assert json.dumps(posts, ensure_ascii=False).encode("utf-8")  # no lone surrogate left: strict UTF-8 encodes
    html = render(markdown)
    assert "<img" not in html and "<script" not in html and "<strong>Blue wins" not in html and "<h1" not in html
    assert "<a " not in html and "<b>" not in html and "\u202e" not in html and "\x00" not in html
    assert html.count("<pre><code") == 2 and html.count("</code></pre>") == 2  # no fence was closed early
    assert "&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in html  # the code, as text
    assert "**Blue wins**" in html and "`````" in html and "[... cut: 4,976,024 characters in all]" in html
    assert "more lines" in markdown and "&lt;img" in html
    assert detail["killed"] == "memory limit </pre><img src=x>"  # detail: shown as JSON text by the UI


def test_a_fence_is_longer_than_any_backtick_run() -> None:
    block = fenced("a ``` b\n" + "`" * 9)
    assert block.startswith("`" * 10 + "\n") and block.endswith("\n" + "`" * 10)
    assert fenced("").count("(empty)") == 1


@responses.activate
def test_no_secret_local_path_or_supervisor_data_is_posted(tmp_path: Path) -> None:
    responses.post(f"{BACKEND}/battles/b-1", status=204)
    register_secrets([SECRET])  # as `GatewayClient.start_battle` does with the battle's token
    reporter = BackendReporter("b-1", BACKEND)
    log = tmp_path / "calls.trace.jsonl"
    code_feed = trace_feed(log, "b-1", lambda m, d, md: reporter.progress(m, d, md, reported_by="Code Blue"),
                           lambda: ["joyce-weav@gmail.com", "Joyce", "Weaver"])
    code_feed.start()
    code = f"print('{SECRET}', 'http://127.0.0.1:10000/b/abcdefgh1234/mcp', '{tmp_path}/x.txt')"
    write(log, execution(T0, code, "Joyce Weaver <joyce-weav@gmail.com> " + SECRET))
    code_feed.stop()
    code_feed.stop()  # idempotent
    bodies = [json.loads(c.request.body) for c in responses.calls]
    assert [b["reported_by"] for b in bodies] == ["Code Blue"] and bodies[0]["message"].startswith("execution #1")
    raw = json.dumps(bodies)
    for private in (SECRET, "abcdefgh1234", str(tmp_path), "127.0.0.1", "Joyce", "Weaver", "joyce-weav"):
        assert private not in raw, private
    assert "[PRIVATE]" in raw and "[REDACTED]" in raw


def test_a_long_battle_stays_a_readable_number_of_entries(tmp_path: Path) -> None:
    log = tmp_path / "calls.trace.jsonl"
    posts: list[tuple[str, dict[str, Any], str]] = []
    code_feed = feed(log, posts, max_entries=3)
    for k in range(40):
        write(log, call(T0 + timedelta(seconds=2 * k)))
        write(log, execution(T0 + timedelta(seconds=2 * k), api_calls=1, timed_out=k == 5))
    write(log, call(T0 + timedelta(seconds=100)))  # the execution it belongs to never ended (the wait did)
    write(log, line("cut", T0 + timedelta(seconds=101), note="cap"))
    code_feed.poll()
    code_feed.poll(final=True)
    messages = [m for m, _, _ in posts]
    assert messages[:3] == [f"execution #{k}: 1 API call, ok (1.2 s)" for k in (1, 2, 3)]
    assert "executions #4-#28: 25 API calls, 1 not ok" in messages
    assert "executions #29-#40: 12 API calls, 0 not ok" in messages
    assert "1 tool call (#41): 1 ok, 0 error, 0 out of scope" in messages
    assert sum(m.startswith("trace cut at its size cap") for m in messages) == 1
    assert len(posts) == 7 and all(len(m) <= 60 for m in messages)
    assert all(re.fullmatch(r"[^<>`*\[\]]*", m) for m in messages)  # messages are our words only


def test_render_execution_with_no_code_or_output() -> None:
    record = TraceRecord(at=T0, battle_id="b-1", kind="execution", source="gateway", ok=True, api_calls=0,
                         duration_ms=0.0)
    message, detail, markdown = render_execution(1, record, [], [])
    assert message == "execution #1: 0 API calls, ok (0.0 s)" and detail["code_lines"] == 0
    assert markdown.count("(empty)") == 2


def test_many_calls_show_the_first_and_the_last(tmp_path: Path) -> None:
    log = tmp_path / "calls.trace.jsonl"
    posts: list[tuple[str, dict[str, Any], str]] = []
    code_feed = feed(log, posts)
    for k in range(30):
        write(log, call(T0 + timedelta(seconds=k), f"app__api_{k}"))
    write(log, execution(T0, api_calls=30))
    code_feed.poll()
    [(message, detail, markdown)] = posts
    assert message.startswith("execution #1: 30 API calls") and detail["calls_ok"] == 30
    assert "`app__api_0`" in markdown and "`app__api_29`" in markdown and "`app__api_15`" not in markdown
    assert "... 20 more calls" in markdown
