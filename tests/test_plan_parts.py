"""Plan parts without servers: slot ports and locks, the task message contract, archive filters, scope helpers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from green_agent.appworld_client import Supervisor, TaskInfo
from green_agent.steps.archive import filter_call_log, redact_sql_line, redact_text
from kernel.call_log_reader import log_marks
from kernel.errors import SlotBusyError
from green_agent.runtime.slot import SlotLock, SlotSpec, SlotUrls, WorldSlot, slot_key
from green_agent.steps.scope import recall
from green_agent.steps.setup import experiment_name_for
from green_agent.steps.task_message import build_task_message
from kernel.task_message import parse_task_message

TASK = TaskInfo(task_id="7c1a0e2_1", instruction="Create a note titled 'Groceries'.", datetime="2023-05-18T12:00:00",
                supervisor=Supervisor(first_name="Ava", last_name="Lopez", email="ava@x.com", phone_number="5550001"))


def test_slot_ports_follow_the_seed() -> None:
    assert SlotSpec.for_index(0).urls().env_url == "http://127.0.0.1:8000"
    spec = SlotSpec.for_index(2)
    assert (spec.env_port, spec.apis_port, spec.gateway_port) == (8020, 9020, 10020)


def test_a_slot_is_never_used_by_two_battles(tmp_path: Path) -> None:
    first = SlotLock(tmp_path, slot_key("http://127.0.0.1:8000")).acquire()
    with pytest.raises(SlotBusyError, match="another battle"):
        SlotLock(tmp_path, slot_key("http://127.0.0.1:8000")).acquire()
    SlotLock(tmp_path, slot_key("http://127.0.0.1:8010")).acquire().release()  # another slot is free
    first.release()
    SlotLock(tmp_path, slot_key("http://127.0.0.1:8000")).acquire().release()


@pytest.mark.parametrize("other", ["http://localhost:8060", "http://[::1]:8060", "http://LOCALHOST:8060/",
                                   "http://127.0.0.2:8060"])
def test_every_loopback_spelling_of_one_port_is_one_slot(tmp_path: Path, other: str) -> None:
    first = WorldSlot.attach(SlotUrls(env_url="http://127.0.0.1:8060", apis_url="http://127.0.0.1:9060"),
                             lock_dir=tmp_path).start()
    try:
        with pytest.raises(SlotBusyError, match="another battle"):
            WorldSlot.attach(SlotUrls(env_url=other, apis_url="http://127.0.0.1:9060"), lock_dir=tmp_path).start()
        assert slot_key(other) == slot_key("http://127.0.0.1:8060") == "loopback-8060"
        assert slot_key(other.replace("8060", "8070")) != slot_key(other)  # the port still tells slots apart
    finally:
        first.stop()


def test_task_message_has_the_machine_readable_lines_and_blue_parses_them() -> None:
    message = build_task_message(TASK, ["supervisor.complete_task", "simple_note.create_note"], "http://127.0.0.1:10000")
    text = message.text
    for line in ("AppWorld task id: 7c1a0e2_1", "MCP endpoint (Streamable HTTP): http://127.0.0.1:10000/mcp",
                 "MCP endpoint (SSE): http://127.0.0.1:10000/sse"):
        assert line in text.splitlines()
    assert TASK.instruction in text and "ava@x.com" in text and "5550001" in text and "2023-05-18T12:00:00" in text
    assert "supervisor__complete_task, simple_note__create_note" in text and "answer=" in text
    with pytest.raises(ValueError):
        json.loads(text)  # never a JSON object (AgentBeats would take it for battle_info)
    parsed = parse_task_message(text)  # the Blues' parser of the kernel's format
    assert (parsed.task_id, parsed.mcp_url, parsed.sse_url) == ("7c1a0e2_1", "http://127.0.0.1:10000/mcp",
                                                                "http://127.0.0.1:10000/sse")


def test_call_log_filter_keeps_only_this_battle(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    log.write_text("\n".join([
        json.dumps({"battle_id": "b1", "tool_name": "a"}), json.dumps({"battle_id": "b2", "tool_name": "b1"}),
        '{"battle_id": "b1", "trunc', "not json b1", json.dumps({"battle_id": "b1", "tool_name": "c"}),
    ]) + "\n")
    out = tmp_path / "mine.jsonl"
    assert filter_call_log(log, "b1", out) == 2
    assert [json.loads(l)["tool_name"] for l in out.read_text().splitlines()] == ["a", "c"]
    assert filter_call_log(tmp_path / "missing.jsonl", "b1", out) == 0 and out.read_text() == ""


def test_call_log_filter_starts_at_the_mark_taken_before_the_battle(tmp_path: Path) -> None:
    """A slot's shared log holds every earlier battle: the archive reads the battle's records from the log's size
    before the battle was set (`log_marks`); a mark inside a line skips that fragment, and a log shorter than its
    mark (replaced) is read from its start."""
    log, out = tmp_path / "calls.jsonl", tmp_path / "mine.jsonl"
    earlier = json.dumps({"battle_id": "b0", "tool_name": "old"}) + "\n"
    log.write_text(earlier * 3)
    marks = log_marks([log, tmp_path / "not-yet.jsonl", None])
    assert marks == {str(log): len(earlier) * 3}
    with open(log, "a") as handle:
        handle.write(json.dumps({"battle_id": "b1", "tool_name": "a"}) + "\n")
    assert filter_call_log(log, "b1", out, marks[str(log)]) == 1
    assert filter_call_log(log, "b0", out, marks[str(log)]) == 0  # an earlier battle's lines are not read again
    assert filter_call_log(log, "b0", out, len(earlier) + 5) == 1  # mid-line: the fragment is skipped
    log.write_text(json.dumps({"battle_id": "b1", "tool_name": "z"}) + "\n")  # shorter than the mark: from 0
    assert filter_call_log(log, "b1", out, marks[str(log)]) == 1 and json.loads(out.read_text())["tool_name"] == "z"


def test_archived_logs_are_redacted() -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhdmEifQ.c2lnbmF0dXJlMTIz"
    line = json.dumps({"method": "post", "url": "/simple_note/notes", "data": {"title": "t", "access_token": jwt}})
    assert jwt not in redact_text(line + "\n", jsonl=True) and '"title": "t"' in redact_text(line, jsonl=True)
    text = "passwords = {'account_name': 'simple_note', 'password': 'ava-simple_note-pw0'}\ntoken " + jwt
    redacted = redact_text(text)
    assert "ava-simple_note-pw0" not in redacted and jwt not in redacted and "simple_note" in redacted


def test_archived_db_change_logs_lose_passwords() -> None:
    insert = json.dumps(["INSERT INTO account_passwords (record_hash, supervisor_id, account_name, password) "
                         "VALUES (?, ?, ?, ?)", ["h", 1, "simple_note", "ava-simple_note-pw0"], False]) + "\n"
    out = redact_sql_line(insert)
    assert "ava-simple_note-pw0" not in out and json.loads(out)[1][:3] == ["h", 1, "simple_note"]
    many = json.dumps(["UPDATE users SET password = ?, name = ? WHERE id = ?", [["s1", "n", 1], ["s2", "m", 2]], True])
    assert json.loads(redact_sql_line(many))[1] == [["[REDACTED]", "n", 1], ["[REDACTED]", "m", 2]]
    note = json.dumps(["INSERT INTO notes (title, content) VALUES (?, ?)", ["t", "c"], False])
    assert redact_sql_line(note) == note


def test_experiment_name_is_filesystem_safe() -> None:
    assert experiment_name_for("b-1", "7c1a0e2_1") == "b-1_7c1a0e2_1"
    name = experiment_name_for("../../x y;z", "7c1a0e2_1")
    assert "/" not in name and " " not in name and ";" not in name and not name.startswith(".")


def test_scope_recall() -> None:
    assert recall(["a.b", "c.d"], ["a.b", "e.f"]) == 0.5
    assert recall(None, ["a.b"]) == 1.0 and recall(["a.b"], None) is None
