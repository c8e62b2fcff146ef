"""The code-mode task message (`green_agent.steps.code_message`): the REPL, the scoped APIs as calls, the finish."""

from __future__ import annotations

from pathlib import Path

from green_agent.appworld_client import Supervisor, TaskInfo
from green_agent.steps.code_message import build_code_message
from kernel.task_message import parse_task_message
from kernel.world_data import WorldData

TASK = TaskInfo(task_id="f0a1c01_1", instruction="How many notes are tagged 'recipe'?", datetime="2023-05-18T12:00:00",
                supervisor=Supervisor(first_name="Ann", last_name="Lee", email="ann@example.com", phone_number="1"))


def test_the_message_lists_the_scope_as_calls_with_parameters(appworld_root: Path) -> None:
    docs = WorldData(appworld_root).api_docs
    message = build_code_message(TASK, ["simple_note.login", "supervisor.complete_task"], "http://127.0.0.1:1/b/t",
                                 "enforce", docs)
    text = message.text
    assert "- apis.simple_note.login(username: string, password: string)" in text
    assert "apis.supervisor.complete_task(answer=<value>)" in text and "raises an exception" in text
    assert "Other APIs are refused" in text and "Python REPL" in text and "`execute`" in text
    assert "2023-05-18T12:00:00 (datetime.now() in the REPL returns it)" in text
    task = parse_task_message(text)  # the machine lines are the tool mode's
    assert (task.task_id, task.mcp_url) == ("f0a1c01_1", "http://127.0.0.1:1/b/t/mcp")
    assert message.tool_names == ["simple_note__login", "supervisor__complete_task"]


def test_an_unscoped_battle_points_to_the_docs_apis() -> None:
    text = build_code_message(TASK, None, "http://127.0.0.1:1/b/t", "advise", None).text
    assert "apis.api_docs.show_api_doc(app_name=..., api_name=...)" in text
