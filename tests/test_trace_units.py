"""The battle trace's parts on their own: bounding and redaction, the cap, gathering, world changes, the page.

No servers here: records are written with the real writer to tmp files and read back with the real reader
(the end-to-end tests in test_trace_e2e.py run real battles).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from green_agent.trace.gather import gather
from green_agent.trace.page import render
from green_agent.trace.reader import read_trace
from green_agent.trace.world_changes import start_counts, summarize
from kernel.call_log_reader import log_marks
from kernel.redaction import redact_free_text
from kernel.scrubber import register_secrets
from kernel.trace_log import MAX_TEXT_CHARS, TraceWriter, bounded
from kernel.trace_record import TableChange, VerdictTest, TraceRecord

T0 = datetime(2026, 12, 3, 12, 0, tzinfo=timezone.utc)
MARKUP = '<script>window.pwned=1</script><img src=x onerror="alert(1)"><b id="injected">bold</b>'


def record(kind: str = "tool_call", at: int = 0, battle: str = "b1", **fields) -> TraceRecord:
    return TraceRecord(at=T0 + timedelta(seconds=at), battle_id=battle, kind=kind, source="gateway", **fields)


def test_a_5mb_text_is_cut_to_the_rule_with_its_length_noted() -> None:
    line = bounded(record("execution", text="x" * 5_000_000, result="y" * 30_000))
    data = json.loads(line)
    assert len(data["text"]) < MAX_TEXT_CHARS + 100 and data["text"].endswith("[... cut: 5,000,000 characters in all]")
    assert data["result"].startswith("y" * 100) and "30,000 characters" in data["result"]
    assert len(line) < 64_000


def test_deeply_nested_arguments_are_cut_and_still_one_line() -> None:
    nested: object = "bottom"
    for _ in range(500):
        nested = {"a": [nested]}
    data = json.loads(bounded(record(tool="notes__create", arguments={"deep": nested})))
    assert "nested too deep" in json.dumps(data["arguments"])


def test_secrets_are_removed_from_arguments_results_and_text() -> None:
    register_secrets(["slot-secret-0123456789"])
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhdmEifQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
    line = bounded(record(tool="spotify__login", arguments={"username": "ava", "password": "pw-ava-secret-1"},
                          result=json.dumps({"response": {"access_token": jwt, "note": "pw-ava-secret-1"}}),
                          error="the slot-secret-0123456789 leaked", text="Bearer abcdefghijkl"))
    text = line.decode()
    for secret in ("pw-ava-secret-1", jwt, "slot-secret-0123456789", "abcdefghijkl"):
        assert secret not in text, secret
    assert json.loads(line)["arguments"]["username"] == "ava"


def test_the_cap_cuts_once_with_a_note_and_keeps_the_closing_records(tmp_path: Path) -> None:
    writer = TraceWriter(tmp_path / "trace.jsonl", cap=50_000)
    for i in range(40):
        writer.append(record(at=i, seq=i, result="r" * 5000))
    writer.append(record("verdict", at=99, winner="green_agent", outcome="failed"))
    records = read_trace(tmp_path / "trace.jsonl")
    kinds = [r.kind for r in records]
    assert kinds.count("cut") == 1 and kinds[-1] == "verdict" and 5 <= kinds.count("tool_call") <= 10
    assert (tmp_path / "trace.jsonl").stat().st_size < 60_000


def test_gather_merges_one_battles_records_in_time_order(tmp_path: Path) -> None:
    run_dir, shared = tmp_path / "run", tmp_path / "calls.trace.jsonl"
    TraceWriter(run_dir / "trace.jsonl").append(record("task_message", at=0, text="do it"))
    gateway = TraceWriter(shared)
    for i, battle in enumerate(["b1", "other", "b1"]):
        gateway.append(record(at=i + 1, battle=battle, seq=i + 1, tool="notes__x", ok=True))
    with open(shared, "ab") as handle:
        handle.write(b'{"battle_id": "b1", "torn\n[1,2]\n')  # damaged lines are skipped
    gathered, problem = gather(run_dir, "b1", [shared])
    records = read_trace(run_dir / "trace.jsonl")
    assert (gathered, problem) == (2, None)
    assert [(r.kind, r.seq) for r in records] == [("task_message", None), ("tool_call", 1), ("tool_call", 3)]


def test_gather_reads_a_shared_log_from_the_battles_mark(tmp_path: Path) -> None:
    run_dir, shared = tmp_path / "run", tmp_path / "calls.trace.jsonl"
    gateway = TraceWriter(shared)
    gateway.append(record(at=1, battle="b1", seq=1, tool="notes__x", ok=True))  # before the mark: never read
    marks = log_marks([shared])
    gateway.append(record(at=2, battle="b1", seq=2, tool="notes__x", ok=True))
    assert gather(run_dir, "b1", [shared], marks) == (1, None)
    assert [r.seq for r in read_trace(run_dir / "trace.jsonl")] == [2]


def test_world_changes_count_rows_past_the_start(tmp_path: Path) -> None:
    dbs = tmp_path / "dbs"
    dbs.mkdir()
    setup = [["INSERT INTO notes (id, title) VALUES (?, ?)", [1, "a"], False]]
    (dbs / "simple_note.jsonl").write_text("".join(json.dumps(c) + "\n" for c in setup))
    start = start_counts(dbs)
    agent = [["INSERT INTO notes (id, title) VALUES (?, ?)", [[2, "b"], [3, "c"]], True],
             ["UPDATE notes SET title = ? WHERE id = ?", ["z", 1], False],
             ["DELETE FROM tags WHERE id = ?", [4], False], "not a change"]
    with open(dbs / "simple_note.jsonl", "a") as handle:
        handle.write("".join(json.dumps(c) + "\n" for c in agent))
    assert start == {"simple_note": 1}
    assert summarize(dbs, start) == [TableChange(app="simple_note", table="notes", added=2, changed=1),
                                     TableChange(app="simple_note", table="tags", removed=1)]


def test_the_page_puts_the_verdict_first_and_escapes_agent_text() -> None:
    records = [record("task_message", at=0, text="Task: " + MARKUP),
               record("execution", at=1, text="print('" + MARKUP + "')", result=MARKUP, ok=False, api_calls=0),
               record(at=2, seq=7, tool="x__y", arguments={"q": MARKUP}, result=MARKUP, ok=False, in_scope=False,
                      error="outside the scope"),
               record("verdict", at=3, winner="green_agent", outcome="failed", note="Green wins: " + MARKUP,
                      tests=[VerdictTest(requirement="the note exists", passed=True),
                             VerdictTest(requirement="answer " + MARKUP, passed=False)])]
    page = render(records)
    assert "<script" not in page
    assert "<img" not in page and 'id="injected"' not in page and "&lt;script&gt;" in page
    assert page.index('id="verdict"') < page.index('id="timeline"') < page.index("What the agent changed")
    assert page.index("FAILED") < page.index("passed: the note exists")


def test_calls_are_numbered_from_1_in_their_battle_on_the_page_and_in_the_terminal() -> None:
    """The gateway's `seq` counts every call of its process: a slot's second battle once showed "#8-#11"."""
    import io

    from green_agent.trace.terminal import print_trace

    records = [record("task_message", at=0, text="Task"),
               record("execution", at=1, text="apis.x.y()", result="ok", ok=True, api_calls=1, duration_ms=5000),
               record(at=2, seq=8, tool="x__y", result="{}", ok=True),  # inside the execution (code mode)
               record(at=7, seq=9, tool="x__z", result="{}", ok=True),
               record(at=8, seq=11, tool="supervisor__complete_task", result="{}", ok=False, fault="http_503",
                      status_code=503),
               record("verdict", at=9, winner="green_agent", outcome="failed", tests=[])]
    page = render(records)
    assert [page.count(f"Call #{n} ") for n in (1, 2, 3)] == [1, 1, 1]
    assert "Call #8" not in page and "Call #9" not in page and "Call #11" not in page
    assert page.index("Call #1 ") < page.index("Call #2 ") < page.index("Call #3 ")
    out = io.StringIO()
    print_trace(records, file=out)
    text = out.getvalue()
    assert [text.count(f"call #{n} ") for n in (1, 2, 3)] == [1, 1, 1] and "call #8" not in text


@pytest.mark.timeout(120)
def test_redacting_a_long_run_of_word_characters_takes_linear_time() -> None:
    """The quoted-pair rule once scanned `[\\w-]*` around the credential word from every position: 4,000 letters
    took 6 s and 200,000 would take hours (an agent's note or output can hold such a run). Now well under a second;
    the pytest timeout is only the failure mode."""
    text = "x" * 200_000 + ' "password": "hunter22" ' + "y" * 200_000
    redacted = redact_free_text(text)
    assert "hunter22" not in redacted and len(redacted) > 400_000
