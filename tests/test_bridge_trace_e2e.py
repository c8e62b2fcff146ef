"""The in-band bridge's conversation in the battle trace, through the real A2A path (`serve`, `assess`, purples).

Tool mode with the reference purple (several tool calls) and code mode with the no-op purple (one execution that
completes the task): the battle's `trace.jsonl` holds each message the purple sent
(`agent_message`) and each we sent back (`green_message`) in order, as many as the bridge's report counts, then
the end; the gateway's calls fall between the message that asked for them and the one that answered; the page
shows them as text (Chromium's DOM).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from a2a_support import assess, env, first, green, purples, result_of  # noqa: F401 - fixtures
from green_agent.models.bridge import BridgeReport
from green_agent.trace.reader import read_trace
from test_report_html import chromium, dump_dom  # noqa: F401 - the fixture
from test_trace_e2e import assert_no_secret

pytestmark = pytest.mark.e2e


def _conversation(records: list, report: BridgeReport) -> tuple[list, list]:
    """The purple's messages and ours, checked against the bridge's counts and against each other's order."""
    said = [r for r in records if r.kind == "agent_message"]
    answered = [r for r in records if r.kind == "green_message"]
    assert all(r.source == "bridge" for r in said + answered)
    assert len(said) == report.steps
    sent, end = answered[:-1], answered[-1]
    assert end.note.startswith(f"the end ({report.ended_by})") and end.text is None
    assert sent[0].note == "the task" and "MCP endpoint" not in sent[0].text
    assert len(sent) == report.steps + (report.ended_by != "complete_task")
    assert sum(r.note == "corrective message" for r in sent) == report.corrections
    talk = [r for r in records if r.kind in ("agent_message", "green_message")]
    assert [r.kind for r in talk[:-1]] == ["green_message", "agent_message"] * (len(talk) // 2)
    return said, sent


def test_the_purples_messages_and_ours_are_in_the_trace_and_on_its_page(  # noqa: F811
        green, purples, appworld_root: Path, chromium: str, tmp_path: Path) -> None:  # noqa: ANN001, F811
    task = first(appworld_root, 1)[0]
    won = assess(green.url, {"participants": {"agent": purples["reference"]}, "config": {"task_ids": [task]}})
    assert won.state == "completed" and won.data is not None and won.data["tgc"] == 100.0, won.statuses
    result = result_of(won.data, task)
    report = result.completion.bridge_report
    folder = Path(won.data["run_dir"]) / "tasks" / task
    records = read_trace(folder / "trace.jsonl")
    said, sent = _conversation(records, report)
    assert report.ended_by == "complete_task" and report.steps == report.tool_calls > 1
    calls = [r for r in records if r.kind == "tool_call"]
    assert [r.tool for r in said] == [r.tool for r in calls]  # each call the purple held, in the gateway's order
    for message, call, answer in zip(said, calls, sent[1:]):
        assert message.at <= call.at <= answer.at and answer.note == f"tool result ({call.tool})"
        assert message.arguments["call"] == call.arguments
    assert said[-1].tool == "supervisor__complete_task"
    page = folder / "trace.html"
    dom = dump_dom(chromium, page, tmp_path / "profile")
    assert dom.count('data-kind="agent_message"') == len(said) and dom.count('data-kind="green_message"') == len(
        sent) + 1
    assert "tool call supervisor__complete_task" in dom and "the end (complete_task)" in dom
    assert_no_secret(folder / "trace.jsonl", page)

    lost = assess(green.url, {"participants": {"agent": purples["noop"]},
                              "config": {"task_ids": [task], "interaction": "code"}})
    assert lost.state == "completed" and lost.data is not None, lost.statuses
    report = result_of(lost.data, task).completion.bridge_report
    folder = Path(lost.data["run_dir"]) / "tasks" / task
    said, sent = _conversation(read_trace(folder / "trace.jsonl"), report)
    assert report.ended_by == "complete_task" and [r.tool for r in said] == ["execute"]
    assert "complete_task" in said[0].arguments["call"]["code"] and "appworld-a2a-code/1" in sent[0].text
