"""Units of the run-folder reader (`green_agent.runfolder`) and of the trace's terminal view, on folders written here.

No process and no world: each rule of the reader on a small folder made for it (a link out of the folder, a FIFO,
a sparse 2 GB file, JSON nested too deep, a count past its bound, a task id that is a path, a row out of place, a
hostile events line), and `appworld-green trace`'s console on records whose every text field holds escape sequences.
The subprocess tests on a real run, under a memory cap, are tests/test_runfolder_hostile.py.
"""

from __future__ import annotations

import io
import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from green_agent.batch.checkpoint import prepare_run
from green_agent.batch.rows import start_counts
from green_agent.models.eval_run import EvalResults, EvalRow, RunConfig, RunManifest
from green_agent.models.result import BattleResult
from green_agent.runfolder import files
from green_agent.runfolder.layout import BattleKey, battle_keys, result_path, task_dir
from green_agent.runfolder.limits import MANIFEST, MAX_TASKS, MAX_TRIALS, RESULT
from green_agent.runfolder.reader import RunFolder, read_eval_results
from green_agent.trace.terminal import print_trace
from kernel.errors import BadInputError, RunFolderError
from kernel.trace_record import TableChange, TraceRecord, VerdictTest

TASKS = ["a_1", "a_2"]
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
ESCAPE = "\x1b]0;pwned\x07\x1b[2J\x1b[31m\x9b2J\r"
"""A title change, a screen clear, a colour, the 8-bit CSI, a carriage return: none may reach a terminal raw."""


def manifest(tasks: list[str] = TASKS, trials: int = 1) -> RunManifest:
    return RunManifest(run_id="run", fingerprint="f", task_set_digest="d",
                       config=RunConfig(blue="x", predictor="ground_truth", trials=trials, deadline_s=60),
                       task_ids=tasks, appworld_root="/world", created_at=NOW)


def result(task_id: str | None = "a_1") -> BattleResult:
    return BattleResult.model_validate({"battle_id": "b", "task_id": task_id, "blue": "x", "status": "completed",
                                        "outcome": "passed", "versions": {"appworld_green": "0"}, "started_at": NOW})


def results(rows: list[EvalRow], m: RunManifest | None = None) -> EvalResults:
    from green_agent.batch.aggregate import aggregate
    m = m or manifest()
    return EvalResults(status="completed", manifest=m, rows=rows, aggregates=aggregate(rows, 2, 1, m.task_ids),
                       generated_at=NOW)


def row(task_id: str = "a_1", trial: int = 1, path: str | None = None) -> EvalRow:
    return EvalRow(task_id=task_id, trial=trial, scenario_id="a", battle_id="b", status="completed", outcome="passed",
                   passed=True, result_path=path or result_path(BattleKey(task_id, trial), 1))


def run_folder(tmp_path: Path, m: RunManifest | None = None) -> Path:
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text((m or manifest()).model_dump_json())
    return out


def test_a_clean_folder_reads(tmp_path: Path) -> None:
    out = run_folder(tmp_path)
    (out / "tasks" / "a_1").mkdir(parents=True)
    (out / "tasks" / "a_1" / "result.json").write_text(result().model_dump_json())
    (out / "results.json").write_text(results([row()]).model_dump_json())
    folder = RunFolder(out)
    assert folder.manifest().task_ids == TASKS
    assert folder.result(BattleKey("a_1", 1), 1).result.battle_id == "b"
    assert folder.result(BattleKey("a_2", 1), 1) == (None, "its result.json is missing")
    assert read_eval_results(out).rows[0].task_id == "a_1" == read_eval_results(out / "results.json").rows[0].task_id


@pytest.mark.parametrize(("change", "problem"), [
    ({"config": {"trials": MAX_TRIALS + 1}}, f"more than the {MAX_TRIALS} trials"),
    ({"task_ids": [f"t_{i}" for i in range(MAX_TASKS + 1)]}, f"more than the {MAX_TASKS:,} a run may have"),
    ({"task_ids": ["../../other/tasks/a_1"]}, "task id '../../other/tasks/a_1', which breaks the task-id rule"),
    ({"task_ids": ["/etc/a_1"]}, "task id '/etc/a_1', which breaks"),
    ({"task_ids": ["a_1\x1b[2J"]}, r"task id 'a_1\x1b[2J'"),  # quoted, never raw
    ({"task_ids": ["a_1", "a_1"]}, "names task id a_1 twice"),
])
def test_a_manifest_past_a_rule_is_refused_naming_the_file_and_the_problem(tmp_path: Path, change: dict,
                                                                          problem: str) -> None:
    data = json.loads(manifest().model_dump_json())
    for key, value in change.items():
        data[key] = data[key] | value if isinstance(value, dict) else value
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text(json.dumps(data))
    with pytest.raises(RunFolderError) as caught:
        RunFolder(out).manifest()
    assert str(caught.value).startswith(f"{out}/run.json ") and problem in str(caught.value)
    assert "\x1b" not in str(caught.value)


def test_a_file_past_its_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    out = run_folder(tmp_path)
    os.truncate(out / "run.json", 2 << 30)  # sparse
    started = time.monotonic()
    with pytest.raises(RunFolderError, match=f"2,147,483,648 bytes, more than the {MANIFEST.limit:,} bytes a run.json"):
        RunFolder(out).manifest()
    assert time.monotonic() - started < 1


def test_json_nested_past_the_depth_is_refused_unparsed(tmp_path: Path) -> None:
    out = run_folder(tmp_path)
    (out / "run.json").write_text('{"run_id": ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(RunFolderError, match="run.json nests 5,001 levels deep, more than the 100"):
        RunFolder(out).manifest()


def test_a_validation_problem_names_where_never_the_hostile_value(tmp_path: Path) -> None:
    out = run_folder(tmp_path)
    data = json.loads((out / "run.json").read_text()) | {"created_at": ESCAPE}
    (out / "run.json").write_text(json.dumps(data))
    with pytest.raises(RunFolderError, match="run.json is not a valid run.json: created_at: ") as caught:
        RunFolder(out).manifest()
    assert "pwned" not in str(caught.value)


def test_a_link_out_of_the_folder_is_refused_and_one_inside_it_is_followed(tmp_path: Path) -> None:
    other = tmp_path / "other" / "a_1"
    other.mkdir(parents=True)
    (other / "result.json").write_text(result().model_dump_json())
    out = run_folder(tmp_path)
    (out / "tasks").mkdir()
    (out / "tasks" / "a_1").symlink_to(other, target_is_directory=True)
    with pytest.raises(RunFolderError, match="tasks/a_1 leaves the run folder"):
        RunFolder(out).battle_dir(BattleKey("a_1", 1), 1)
    (out / "keep").mkdir()
    (out / "keep" / "result.json").write_text(result().model_dump_json())
    (out / "tasks" / "a_2").symlink_to(out / "keep", target_is_directory=True)
    assert RunFolder(out).result(BattleKey("a_2", 1), 1).result is not None


def test_a_fifo_or_a_folder_in_place_of_a_file_is_refused_without_blocking(tmp_path: Path) -> None:
    out = run_folder(tmp_path)
    os.mkfifo(out / "results.json")
    with pytest.raises(RunFolderError, match="results.json is not a regular file"):
        RunFolder(out).results()
    (out / "events.jsonl").mkdir()
    with pytest.raises(RunFolderError, match="events.jsonl is not a regular file"):
        RunFolder(out).events()


def test_a_battles_unreadable_result_is_its_problem_not_the_folders(tmp_path: Path) -> None:
    out = run_folder(tmp_path)
    folder = out / "tasks" / "a_1"
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(result("../../x_1").model_dump_json())
    assert RunFolder(out).result(BattleKey("a_1", 1), 1).problem.startswith(
        "its result.json names task id '../../x_1', which breaks the task-id rule")
    os.truncate(folder / "result.json", RESULT.limit + 1)
    read = RunFolder(out).result(BattleKey("a_1", 1), 1)
    assert read.result is None and "more than the 8,388,608 bytes a result.json may have" in read.problem
    (folder / "result.json").write_text(result(None).model_dump_json())  # a battle whose task id was never read
    assert RunFolder(out).result(BattleKey("a_1", 1), 1).result is not None


@pytest.mark.parametrize(("rows", "problem"), [
    ([row(), row("a_2"), row("a_1", 1)], "holds 3 rows, more than the 2 battles of its run"),
    ([row("b_1")], "row 1 names task id 'b_1', not one of its run's"),
    ([row(), row("a_1", 1)], "row 2: trial 1 of task a_1 is not a battle of its run, or is there twice"),
    ([row("a_1", 2, "tasks/a_1/result.json")], "row 1: trial 2 of task a_1 is not a battle"),
    ([row(path="../other/tasks/a_1/result.json")], "row 1: result_path '../other/tasks/a_1/result.json' is not where"),
    ([row(path="/" + "runs/a_1/result.json")], "row 1: result_path '/runs/a_1/result.json' is not where"),
])
def test_results_rows_must_be_their_runs_battles_in_their_places(tmp_path: Path, rows: list[EvalRow],
                                                                 problem: str) -> None:
    out = run_folder(tmp_path)
    (out / "results.json").write_text(results(rows).model_dump_json())
    with pytest.raises(RunFolderError, match="results.json ") as caught:
        read_eval_results(out)
    assert problem in str(caught.value)


def test_results_json_manifest_is_checked_like_run_json(tmp_path: Path) -> None:
    out = run_folder(tmp_path)
    data = json.loads(results([row()]).model_dump_json())
    data["manifest"]["config"]["trials"] = 10**9
    (out / "results.json").write_text(json.dumps(data))
    with pytest.raises(RunFolderError, match=r"results.json \(its manifest\) says config.trials is 1,000,000,000"):
        read_eval_results(out)


def test_events_lines_that_are_not_records_are_skipped_and_counts_ignore_strangers(tmp_path: Path) -> None:
    out = run_folder(tmp_path)
    lines = [json.dumps({"event": "start", "task_id": "a_1", "trial": 1}), "[" * 50_000 + "]" * 50_000, "not json",
             "[1, 2]", json.dumps({"event": "start", "task_id": ["a", "list"], "trial": 1}),
             json.dumps({"event": "start", "task_id": "z_9", "trial": 1}),
             json.dumps({"event": "start", "task_id": "a_1", "trial": 1})]
    (out / "events.jsonl").write_text("\n".join(lines) + "\n")
    events = RunFolder(out).events()
    assert len(events) == 4
    assert start_counts(events, battle_keys(TASKS, 1)) == {BattleKey("a_1", 1): 2}


def test_a_task_id_becomes_a_folder_only_by_the_rule(tmp_path: Path) -> None:
    assert task_dir(tmp_path, "a_1") == tmp_path / "tasks" / "a_1"
    for bad in ("../a_1", "/abs/a_1", "a_1/../../x"):
        with pytest.raises(BadInputError, match="invalid task id"):
            task_dir(tmp_path, bad)
    assert result_path(BattleKey("a_1", 2), 3) == "tasks/a_1/trial-2/result.json"


def test_a_resume_into_a_hostile_run_json_is_refused_with_what_to_do(tmp_path: Path) -> None:
    out = run_folder(tmp_path, manifest())
    data = json.loads((out / "run.json").read_text())
    data["config"]["trials"] = 10**9
    (out / "run.json").write_text(json.dumps(data))
    with pytest.raises(RunFolderError, match="more than the 100 trials a run may have; choose another --out"):
        prepare_run(out, manifest(), resume=True)


def test_rejudge_refuses_a_saved_state_linked_from_outside_the_folder(tmp_path: Path) -> None:
    from green_agent.rejudge.discover import discover
    battle = tmp_path / "battle"
    battle.mkdir()
    (battle / "result.json").write_text(result().model_dump_json())
    (tmp_path / "elsewhere" / "dbs").mkdir(parents=True)
    assert discover(battle).battles[0].result is not None
    (battle / "appworld").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(RunFolderError, match="appworld/dbs leaves the run folder"):
        discover(battle)


def test_files_inside_refuses_a_path_that_climbs_out(tmp_path: Path) -> None:
    assert files.inside(tmp_path, tmp_path / "a" / ".." / "b") == (tmp_path / "b").resolve()
    with pytest.raises(RunFolderError, match="leaves the run folder"):
        files.inside(tmp_path / "run", tmp_path / "run" / ".." / "x")


def hostile_trace() -> list[TraceRecord]:
    """A trace whose every text field, in every kind the terminal shows, holds `ESCAPE`."""
    common = {"at": NOW, "battle_id": "b"}
    return [
        TraceRecord(**common, kind="task_message", source="green", text=ESCAPE, note=ESCAPE),
        TraceRecord(**common, kind="tool_call", source="gateway", tool=ESCAPE, arguments={ESCAPE: ESCAPE},
                    result=ESCAPE, error=ESCAPE, ok=False, seq=1),
        TraceRecord(**common, kind="execution", source="gateway", text=ESCAPE, result=ESCAPE, ok=False,
                    killed=ESCAPE),
        TraceRecord(**common, kind="agent_reply", source="green", text=ESCAPE, error=ESCAPE),
        TraceRecord(**common, kind="verdict", source="green", winner="blue_agent", outcome=ESCAPE, note=ESCAPE,
                    tests=[VerdictTest(requirement=ESCAPE, passed=False)]),
        TraceRecord(**common, kind="world_changes", source="green",
                    changes=[TableChange(app=ESCAPE, table=ESCAPE, added=1)]),
    ]


def test_the_terminal_gets_no_control_character_of_any_field_only_richs_own_styles() -> None:
    out = io.StringIO()
    print_trace(hostile_trace(), file=out, page=f"/runs/{ESCAPE}/trace.html")
    printed = out.getvalue()
    assert "pwned" in printed and printed.count("[2J") >= 8  # every field shown, its controls dropped
    assert not any(c in printed for c in "\x1b\x07\x9b\r")


def test_rich_styles_still_reach_a_real_terminal_and_the_payload_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = io.StringIO()
    print_trace(hostile_trace(), file=out)
    printed = out.getvalue()
    assert "\x1b[" in printed  # rich's own colours: the cleaning is of text, not of the console's styles
    assert not any(seq in printed for seq in ("\x1b]0;", "\x1b[2J", "\x07", "\x9b", "\r"))
