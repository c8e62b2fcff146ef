"""`green_agent.a2a.bridge.trace.BridgeTrace`: which note each message gets, what a reply's record holds, bounds.

The reply stands for `purple_client.PurpleReply` (its text parts joined, its data parts, its A2A metadata); the
writer is the real one (`kernel.trace_log`), on a temporary file.
"""

from __future__ import annotations

from pathlib import Path

from green_agent.a2a.bridge.purple_client import PurpleReply
from green_agent.a2a.bridge.trace import BridgeTrace
from green_agent.models.bridge import BridgeReport
from green_agent.trace.reader import read_trace
from kernel.a2a_tools import ToolCall
from kernel.scrubber import register_secrets
from kernel.trace_log import TRACE_OFF_ENV, TraceWriter, now, tracing_on
from kernel.trace_record import TraceRecord


def test_each_message_is_noted_and_the_purples_text_is_cut_and_redacted(tmp_path: Path) -> None:
    log = tmp_path / "bridge.trace.jsonl"
    register_secrets(["purple-basic-secret-1234"])
    trace = BridgeTrace(log, "battle-1")
    trace.sent("the task")
    trace.received(PurpleReply(text="x" * 50_000 + " purple-basic-secret-1234", data=[{"k": 1}],
                               metadata={"usage": {"input_tokens": 7, "bad": "nan", "inf": float("inf")}}),
                   ToolCall(name="spotify__login", arguments={"username": "a", "password": "hunter2"}))
    trace.sent("Tool 'spotify__login' result: {}")
    trace.received(PurpleReply(text="hello"), "no JSON tool call in the reply")
    trace.sent("Your last message ...")
    trace.received(PurpleReply(text="{{{"), None)
    trace.ended(BridgeReport(ended_by="purple_malformed", fault_owner="blue", message="unreadable"))
    records = read_trace(log)
    assert [r.kind for r in records] == ["green_message", "agent_message"] * 3 + ["green_message"]
    assert [r.note for r in records if r.kind == "green_message"] == [
        "the task", "tool result (spotify__login)", "corrective message", "the end (purple_malformed): unreadable"]
    first = records[1]
    assert first.tool == "spotify__login" and first.arguments["data_parts"] == [{"k": 1}]
    assert first.arguments["call"]["username"] == "a" and "hunter2" not in log.read_text()
    assert len(first.text) < 20_100 and "characters in all]" in first.text
    assert "purple-basic-secret-1234" not in log.read_text() and first.usage == {"input_tokens": 7.0}
    assert records[3].note == "no tool call: no JSON tool call in the reply"
    assert records[5].note == "the reply could not be read as a tool call"
    assert {r.battle_id for r in records} == {"battle-1"} and {r.source for r in records} == {"bridge"}


def test_code_mode_answers_are_repl_outputs_and_no_path_writes_nothing(tmp_path: Path) -> None:
    log = tmp_path / "t.jsonl"
    trace = BridgeTrace(log, "b", code=True)
    trace.sent("task")
    trace.received(PurpleReply(text="```python\nprint(1)\n```"), ToolCall(name="execute", arguments={"code": "1"}))
    trace.sent("Output:\n1")
    assert [r.note for r in read_trace(log)][-1] == "REPL output"
    silent = BridgeTrace(None, "b")
    silent.sent("task")
    silent.ended(BridgeReport(ended_by="complete_task", message="done"))
    assert not (tmp_path / "None").exists() and len(read_trace(log)) == 3


def test_the_benchs_off_switch_drops_every_record(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv(TRACE_OFF_ENV, "1")
    assert not tracing_on()
    BridgeTrace(tmp_path / "off.jsonl", "b").sent("task")  # a writer made while it is off
    TraceWriter(tmp_path / "w.jsonl").append(_record())  # even a closing record
    assert not (tmp_path / "off.jsonl").exists() and not (tmp_path / "w.jsonl").exists()
    monkeypatch.delenv(TRACE_OFF_ENV)
    TraceWriter(tmp_path / "w.jsonl").append(_record())
    assert len(read_trace(tmp_path / "w.jsonl")) == 1


def _record() -> TraceRecord:
    return TraceRecord(at=now(), battle_id="b", kind="end", source="green", ended_by="completed")
