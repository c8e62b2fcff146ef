"""Units of re-judging and of the standard rule: the saved state's checks, redaction restored, the call log made
into the requests a replay sends, the replayed state compared, standard or custom.

No process and no AppWorld: `green_agent.rejudge.state` on small change logs written here, `green_agent.rejudge.
calls` on call logs written here (tool specs from the built world's API docs), `green_agent.rejudge.replay` on
two small state folders, and `green_agent.batch.standard.custom_settings` on run configs.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from green_agent.batch.provenance import run_provenance
from green_agent.batch.standard import custom_settings, task_set_words
from green_agent.models.eval_run import RunConfig
from green_agent.models.provenance import GraderRecord, Provenance
from green_agent.rejudge.calls import NotReplayable, replay_plan
from green_agent.rejudge.replay import replay_differences
from green_agent.rejudge.state import StateError, stage_state
from kernel.call_record import CallRecord
from kernel.redaction import REDACTED
from kernel.settings import Settings
from kernel.world_data import WorldData
from mcp_gateway.tools import ToolSpec, build_tool_specs

INSERT = "INSERT INTO account_passwords (record_hash, supervisor_id, account_name, password) VALUES (?, ?, ?, ?)"


def _write(folder: Path, name: str, changes: list[list]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(json.dumps(c) + "\n" for c in changes))


def test_redacted_values_are_restored_from_the_worlds_own_rows(tmp_path: Path) -> None:
    world, saved = tmp_path / "input", tmp_path / "saved"
    _write(world, "supervisor.jsonl", [[INSERT, ["h1", 1, "amazon", "s3cret"], False]])
    _write(saved, "supervisor.jsonl", [[INSERT, ["h1", 1, "amazon", REDACTED], False],
                                       [INSERT, ["h9", 1, "venmo", REDACTED], False],  # the agent's own: no match
                                       ["UPDATE tasks SET answer=? WHERE tasks.id = ?", ["42", 1], False]])
    staged = stage_state(saved, world, tmp_path / "out")
    assert staged == (3, 1, 1)
    lines = [json.loads(x) for x in (tmp_path / "out" / "supervisor.jsonl").read_text().splitlines()]
    assert lines[0][1] == ["h1", 1, "amazon", "s3cret"] and lines[1][1][3] == REDACTED


@pytest.mark.parametrize("line,why", [
    (["ATTACH DATABASE 'attached.db' AS x", [], False], "not an INSERT, UPDATE or DELETE"),
    (["PRAGMA writable_schema = 1", [], False], "not an INSERT, UPDATE or DELETE"),
    (["INSERT INTO t VALUES (?)", "not a list", False], "not an AppWorld change"),
])
def test_a_saved_state_holding_what_appworld_never_writes_is_refused(tmp_path: Path, line: list, why: str) -> None:
    _write(tmp_path / "saved", "amazon.jsonl", [line])
    with pytest.raises(StateError, match=why):
        stage_state(tmp_path / "saved", tmp_path / "input", tmp_path / "out")
    assert not (tmp_path / "attached.db").exists() and not Path("attached.db").exists()


def test_symlinks_odd_files_and_a_missing_state_are_refused(tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    with pytest.raises(StateError, match="no saved end state"):
        stage_state(saved, tmp_path, tmp_path / "out")
    saved.mkdir()
    (tmp_path / "secret.txt").write_text("x")
    (saved / "amazon.jsonl").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(StateError, match="not a regular file"):
        stage_state(saved, tmp_path, tmp_path / "out")
    (saved / "amazon.jsonl").unlink()
    (saved / "run.sh").write_text("echo")
    with pytest.raises(StateError, match="unexpected file 'run.sh'"):
        stage_state(saved, tmp_path, tmp_path / "out")


BATTLE = "b-1"


@pytest.fixture(scope="module")
def specs(settings: Settings) -> dict[str, ToolSpec]:
    world = WorldData(settings.appworld_root)
    return build_tool_specs(world, list(world.api_docs))


def _log(path: Path, *records: dict) -> Path:
    lines = [CallRecord(timestamp="2026-01-01T00:00:00Z", battle_id=BATTLE, task_id="t", success=True,
                        duration_ms=1, seq=seq, **record).model_dump_json() for seq, record in enumerate(records, 1)]
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_only_forwarded_calls_are_replayed_with_their_secrets_as_markers(tmp_path: Path, specs: dict) -> None:
    log = _log(tmp_path / "mcp_calls.jsonl",
               {"tool_name": "amazon__login", "status_code": 200,
                "arguments": {"username": "maya@example.com", "password": REDACTED}},
               {"tool_name": "amazon__show_orders", "status_code": None, "refused": "episode_over"},
               {"tool_name": "gmail__show_inbox_threads", "status_code": None, "in_scope": False},  # refused by scope
               {"tool_name": "amazon__show_orders", "status_code": 503,  # a fault on purpose: answered by the gateway
                "fault": {"kind": "error", "position": 1, "delivered": "Response status code is 503: ..."}},
               {"tool_name": "amazon__show_orders", "status_code": 200,
                "arguments": {"page_index": 1, "page_limit": None, "access_token": REDACTED, "extra": "x"}},
               {"tool_name": "amazon__download_order_receipt", "status_code": 401,
                "arguments": {"order_id": 7, "access_token": REDACTED, "file_system_access_token": REDACTED}})
    plan = replay_plan(log, BATTLE, "tools", specs)
    assert plan.records == 6 and [c.seq for c in plan.calls] == [1, 5, 6]
    login, orders, receipt = plan.calls
    assert (login.method, login.url, login.login, login.username) == ("POST", "/amazon/auth/token", True,
                                                                      "maya@example.com")
    assert login.password and login.password.isalnum() and login.password.encode() in base64.b64decode(login.body)
    assert orders.url == "/amazon/orders?page_index=1"  # the gateway's rule: None and unknown arguments dropped
    (marker, app), = orders.tokens.items()
    assert app == "amazon" and orders.headers["Authorization"] == f"Bearer {marker}" and not orders.body
    assert sorted(receipt.tokens.values()) == ["amazon", "file_system"] and receipt.recorded == 401
    assert all(m in receipt.url or m in receipt.headers.get("Authorization", "") for m in receipt.tokens)
    code = replay_plan(log, BATTLE, "code", specs).calls[1]  # code mode sends a None as AppWorld's requester does
    assert code.url == "/amazon/orders?page_index=1" and code.tokens.keys() != orders.tokens.keys()  # fresh nonce


def test_calls_are_replayed_in_the_order_they_reached_the_world_not_the_logs(tmp_path: Path, specs: dict) -> None:
    """Parallel calls are logged after forwarding: a record's `seq` (taken under the forwarder's lock) is the order."""
    log = _log(tmp_path / "mcp_calls.jsonl",
               {"tool_name": "simple_note__show_note", "status_code": 404, "arguments": {"note_id": 1}},
               {"tool_name": "simple_note__show_note", "status_code": 404, "arguments": {"note_id": 2}},
               {"tool_name": "simple_note__show_note", "status_code": 404, "arguments": {"note_id": 3}})
    lines = log.read_text().splitlines()
    log.write_text("\n".join([lines[2], lines[0], lines[1]]) + "\n")  # logged 3, 1, 2; forwarded 1, 2, 3
    assert [c.seq for c in replay_plan(log, BATTLE, "tools", specs).calls] == [1, 2, 3]


@pytest.mark.parametrize("record,why", [
    ({"tool_name": "log_capped", "refused": "log_capped"}, "reached the gateway's cap at call 1"),
    ({"tool_name": "simple_note__create_note", "status_code": 200, "arguments": {"title": "[omitted: 5000 bytes]"},
      "arguments_bytes": 5000}, "left its arguments out"),
    ({"tool_name": "amazon__reset_password", "status_code": 200,
      "arguments": {"email": "a@b.c", "password_reset_code": REDACTED, "new_password": REDACTED}},
     "'password_reset_code' is redacted in the log and cannot be re-derived"),
    ({"tool_name": "amazon__no_such_api", "status_code": 200}, "names no AppWorld API"),
    ({"tool_name": "simple_note__create_note", "status_code": 201,  # a password the agent wrote, scrubbed by value
      "arguments": {"title": "logins", "content": f"amazon: {REDACTED}", "access_token": REDACTED}},
     "'content' holds a redacted value that cannot be re-derived"),
])
def test_a_log_that_cannot_be_replayed_whole_is_refused(tmp_path: Path, specs: dict, record: dict, why: str) -> None:
    with pytest.raises(NotReplayable, match=why):
        replay_plan(_log(tmp_path / "mcp_calls.jsonl", record), BATTLE, "tools", specs)


def test_the_replayed_state_is_compared_as_archived_and_the_difference_named(tmp_path: Path, specs: dict) -> None:
    saved, outputs = tmp_path / "saved", tmp_path / "outputs"
    replayed = outputs / "checkpoints" / "replayed"  # where `world/replay.py` has AppWorld save it
    answer_line = ["UPDATE tasks SET status=?, answer=? WHERE tasks.id = ?", ["success", "445.29", 1], False]
    _write(saved, "supervisor.jsonl", [[INSERT, ["h1", 1, "amazon", REDACTED], False], answer_line])
    _write(replayed, "supervisor.jsonl", [[INSERT, ["h1", 1, "amazon", "s3cret"], False], answer_line])
    plan = replay_plan(_log(tmp_path / "mcp_calls.jsonl", {"tool_name": "supervisor__complete_task",
                                                           "status_code": 200, "arguments": {"answer": "445.29"}}),
                       BATTLE, "tools", specs)
    assert replay_differences(saved, outputs, {"mismatch_count": 0, "mismatches": []}, plan) == []
    _write(replayed, "supervisor.jsonl", [[INSERT, ["h1", 1, "amazon", "s3cret"], False],
                                          [answer_line[0], ["success", "null", 1], False]])
    found = replay_differences(saved, outputs, {"mismatch_count": 3, "mismatches": [
        {"call": 1, "tool": "supervisor__complete_task", "recorded": 200, "replayed": 422}]}, plan)
    assert found[0] == ("its own calls do not produce the saved end state: replaying the 1 forwarded call(s) of "
                        "mcp_calls.jsonl gives another supervisor.jsonl (line 2, UPDATE tasks: column answer differs)")
    assert found[1:] == ["call 1 (supervisor__complete_task): the log records HTTP 200, the replay got another status",
                         "2 more call(s) got another HTTP status when replayed"]


REPLAYED_HASH = "58kwyIUS6ho="
"""The record_hash AppWorld computes for the replayed row: what a forger lacks to make the saved state match."""


@pytest.mark.parametrize("saved_lines,replayed_lines,named", [
    ([["UPDATE tasks SET status=?, record_hash=?, answer=? WHERE tasks.id = ?", ["success", "AAAAAAAAAAA=", "1", 1],
       False]], [["UPDATE tasks SET status=?, record_hash=?, answer=? WHERE tasks.id = ?",
                  ["success", REPLAYED_HASH, "1", 1], False]], "line 1, UPDATE tasks: column record_hash differs"),
    ([[INSERT, [["AAAAAAAAAAA=", 1, "a", REDACTED], ["BBBBBBBBBBB=", 1, "b", REDACTED]], True]],  # as archived
     [[INSERT, [["AAAAAAAAAAA=", 1, "a", "p"], [REPLAYED_HASH, 1, "b", "q"]], True]],
     "line 1, INSERT INTO account_passwords, row 2: column record_hash differs"),
    ([[INSERT, ["AAAAAAAAAAA=", 1, "a", "p"], False]],
     [["INSERT INTO notes (record_hash, title) VALUES (?, ?)", [REPLAYED_HASH, "t"], False]],
     "line 1: another statement than the saved INSERT INTO account_passwords"),
    ([], [[INSERT, [REPLAYED_HASH, 1, "a", "p"], False]], "the replay has 1 more line(s), from line 1"),
    ([{"note": "x", "hash": "AAAAAAAAAAA="}], [{"note": "x", "hash": REPLAYED_HASH}], 'line 1: key "hash" differs'),
])
def test_a_difference_names_the_line_and_field_never_the_replayed_value(tmp_path: Path, specs: dict,
                                                                         saved_lines: list, replayed_lines: list,
                                                                         named: str) -> None:
    """A forger who edits the saved state to match the replay lacks only what AppWorld computes (a row's
    record_hash): a message that printed the replayed row would hand it over (the next run re-judges equal)."""
    saved, outputs = tmp_path / "saved", tmp_path / "outputs"
    _write(saved, "supervisor.jsonl", saved_lines)
    _write(outputs / "checkpoints" / "replayed", "supervisor.jsonl", replayed_lines)
    plan = replay_plan(_log(tmp_path / "mcp_calls.jsonl", {"tool_name": "supervisor__complete_task",
                                                           "status_code": 200, "arguments": {"answer": "1"}}),
                       BATTLE, "tools", specs)
    found = replay_differences(saved, outputs, {"mismatch_count": 1, "mismatches": [
        {"call": 1, "tool": "supervisor__complete_task", "recorded": 200, "replayed": 409}]}, plan)
    text = " ".join(found)
    assert f"supervisor.jsonl ({named})" in text, text
    pieces = {REPLAYED_HASH[i:i + 4] for i in range(len(REPLAYED_HASH) - 3)} | {"409", "notes", "title"}
    assert not [piece for piece in pieces if piece in text], text


def test_model_hashes_that_do_not_cover_the_replays_are_named_by_the_saved_keys_only(tmp_path: Path,
                                                                                      specs: dict) -> None:
    saved, outputs = tmp_path / "saved", tmp_path / "outputs"
    replayed = outputs / "checkpoints" / "replayed"
    for folder, counts in ((saved, {"supervisor": {"Task": 1}}), (replayed, {"supervisor": {"Task": 7},
                                                                             "venmo": {"Payment": 5}})):
        folder.mkdir(parents=True)
        (folder / "model_hashes.json").write_text(json.dumps(counts, indent=4))
    plan = replay_plan(_log(tmp_path / "mcp_calls.jsonl", {"tool_name": "supervisor__complete_task",
                                                           "status_code": 200, "arguments": {"answer": "1"}}),
                       BATTLE, "tools", specs)
    (found,) = replay_differences(saved, outputs, {"mismatch_count": 0, "mismatches": []}, plan)
    assert found.endswith("gives another model_hashes.json (the saved count of supervisor Task does not cover the "
                          "replay's)"), found
    assert "7" not in found and "venmo" not in found and "Payment" not in found


def _provenance(split: str | None, count: int, shard: tuple[int, int] | None = None,
                driver: list[str] | None = None) -> Provenance:
    words, whole = task_set_words(split, count, shard)
    return Provenance(grader=GraderRecord(appworld_green="x", outcome_rule=1), interaction="tools", task_set=words,
                      whole_split=whole, driver_custom=driver or [])


def _config(**changes: object) -> RunConfig:
    return RunConfig(**{"blue": "reference", "predictor": "auto", "split": "dev", "deadline_s": 1200.0, **changes})


def test_the_defaults_on_a_whole_split_or_a_shard_of_one_are_standard() -> None:
    assert custom_settings(_config(), _provenance("dev", 21)) == []
    assert custom_settings(_config(split=None), _provenance("dev", 7, (1, 3))) == []
    assert task_set_words(None, 2, (0, 3)) == ("shard 1 of 3 of a task list, not a whole split", False)
    assert custom_settings(_config(interaction="code"), _provenance("dev", 21),
                           ["bubblewrap sandbox (/usr/bin/bwrap 0.8.0; process cap: cgroup_v1)"]) == []


@pytest.mark.parametrize("config,provenance,isolations,expected", [
    ({"scope_policy": "enforce"}, ("dev", 21), [], "scope policy enforce (standard: advise)"),
    ({"split": None}, (None, 2), [], "task set: a list of 2 task(s), not a whole split"),
    ({"interaction": "code"}, ("dev", 21),
     ["NO sandbox: agent code runs as a plain process (--unsafe-code-in-process)"],
     "agent code ran without a real sandbox (NO sandbox"),
    ({"deadline_s": 60.0}, ("dev", 21), [], "deadline 60 s per battle (standard: 1200 s)"),
    ({"max_infra_retries": 0}, ("dev", 21), [], "0 infra retries per battle (standard: 2)"),
    ({"predictor": "ground_truth"}, ("dev", 21), [], "the agent was shown the task's gold APIs"),
])
def test_each_custom_setting_is_named_in_words(config: dict, provenance: tuple, isolations: list,
                                               expected: str) -> None:
    found = custom_settings(_config(**config), _provenance(*provenance), isolations)
    assert len(found) == 1 and expected in found[0]


def test_a_drivers_own_changes_and_an_old_run_without_provenance(settings: Settings) -> None:
    assert custom_settings(_config(), _provenance("dev", 5, driver=["max_steps 5"])) == ["max_steps 5"]
    assert custom_settings(_config(split=None), None) == ["task set: a task list, not a whole split"]
    assert custom_settings(_config(), None) == []
    found = run_provenance(settings, "tools", None, "dev", 21)
    assert found.whole_split and found.task_pack and len(found.world_digest or "") == 64
    assert found.grader.outcome_rule >= 1 and found.image_digest == settings.appworld_green_image_digest


@pytest.mark.parametrize("config,shard_of,custom", [
    ({}, ("dev", 0, 1), []),
    ({"num_shards": 3, "shard_index": 2}, ("dev", 2, 3), []),
    ({"task_ids": ["f0a7c07_1"]}, (None, 0, 1), []),
    ({"num_tasks": 3}, (None, 0, 1), ["only the first 3 task(s) of the dev split (num_tasks)"]),
    ({"max_steps": 5, "turn_timeout_s": 30}, ("dev", 0, 1), ["max_steps 5 purple replies per task (standard: 100)",
                                                             "turn_timeout_s 30 per reply (standard: 240)"]),
])
def test_an_assessment_says_which_split_its_shard_is_of_and_what_it_changed(config: dict, shard_of: tuple | None,
                                                                          custom: list[str],
                                                                          settings: Settings) -> None:
    from green_agent.a2a.assessment import assessment_standard, effective_config
    from green_agent.a2a.request import parse_request

    assessment = parse_request(json.dumps({"participants": {"agent": "http://127.0.0.1:1/"}, "config": config}))
    facts = assessment_standard(assessment, effective_config(assessment, settings.model_copy(
        update={"default_split": "dev"})))
    assert facts == {"shard_of": shard_of, "driver_custom": custom}


@pytest.mark.parametrize("saved,equal", [
    ({"supervisor": {"Task": 2}, "amazon": {"CartEntry": 4, "WishListEntry": 4}}, True),  # a second battle of the task
    ({"amazon": {"CartEntry": 1, "WishListEntry": 1}, "supervisor": {"Task": 1}}, True),  # the first: the same counts
    ({"supervisor": {"Task": 1}, "amazon": {"CartEntry": 0, "WishListEntry": 1}}, False),  # a change hidden
    ({"supervisor": {"Task": 1}}, False),
])
def test_the_saved_model_hashes_must_cover_the_replays(saved: dict, equal: bool) -> None:
    """AppWorld's model-hash counters carry a slot's earlier battles of the task; a lower one hides a change."""
    from green_agent.rejudge.replay import _hashes_cover
    replayed = {"amazon": {"WishListEntry": 1, "CartEntry": 1}, "supervisor": {"Task": 1}}
    assert _hashes_cover(json.dumps(saved).encode(), json.dumps(replayed).encode()) is equal
