"""`appworld-green analyze`: JSON on stdout, per-battle counts, gold and paginated APIs from the world files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from green_agent.cli import main

VENV_BIN = Path(sys.executable).parent


def rec(battle: str, second: int, tool: str, ok: bool, **extra: object) -> str:
    return json.dumps({"timestamp": f"2025-03-01T10:00:{second:02d}Z", "battle_id": battle, "task_id": "t1",
                       "tool_name": tool, "arguments": extra.pop("arguments", {}), "success": ok,
                       "duration_ms": 10.0, **extra})


@pytest.fixture()
def log(tmp_path: Path) -> Path:
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join([
        rec("A", 0, "spotify__login", False),
        rec("B", 1, "spotify__login", True),
        rec("A", 2, "spotify__login", True),                                     # A: retry
        rec("A", 3, "spotify__show_song_library", True, result_items=5),         # full page 0 ...
        rec("B", 4, "spotify__show_song_library", True, result_items=2),         # B: short page 0
        rec("A", 5, "supervisor__complete_task", True),                          # ... A never pages on
        '{"battle_id": "A", "timestamp": "2025-03-01T10:00:0',                   # truncated line of A
    ]) + "\n")
    return path


@pytest.fixture()
def world(tmp_path: Path) -> Path:
    """A minimal AppWorld data folder in 0.1.3's layout, as `WorldData` reads it: a task's
    `ground_truth/required_apis.json` (gold `app.api` list) and `api_docs/standard/<app>.json`
    (`{api_name: {path, method, parameters: [{name, ...}]}}`)."""
    root = tmp_path / "world"
    gt = root / "data" / "tasks" / "t1" / "ground_truth"
    gt.mkdir(parents=True)
    (gt.parent / "specs.json").write_text(json.dumps({"instruction": "x", "supervisor": {}, "datetime": ""}))
    (gt / "required_apis.json").write_text(json.dumps(["spotify.login", "spotify.show_song_library", "supervisor.complete_task"]))
    docs = root / "data" / "api_docs" / "standard"
    docs.mkdir(parents=True)
    param = lambda name: {"name": name, "type": "integer", "required": False}  # noqa: E731
    (docs / "spotify.json").write_text(json.dumps({
        "login": {"path": "/spotify/auth/token", "method": "POST", "parameters": [{"name": "username"}]},
        "show_song_library": {"path": "/spotify/library/songs", "method": "GET",
                              "parameters": [param("page_index"), param("page_limit")]},
    }))
    return root


def _analyze(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["--env-file", "/nonexistent.env", "analyze", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_two_interleaved_battles(log: Path, world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _analyze(capsys, str(log), "--battle-id", "A", "--task-id", "t1", "--appworld-root", str(world))
    b = _analyze(capsys, str(log), "--battle-id", "B", "--task-id", "t1", "--appworld-root", str(world))
    assert (a["total_calls"], a["failed_calls"], a["retry_count"], a["malformed_lines"]) == (4, 1, 1, 1)
    assert (b["total_calls"], b["failed_calls"], b["retry_count"], b["malformed_lines"]) == (2, 0, 0, 0)
    assert a["gold_apis"] == ["spotify.login", "spotify.show_song_library", "supervisor.complete_task"]
    assert a["api_recall"] == 1.0 and a["api_precision"] == 1.0
    assert b["missing_gold_apis"] == ["supervisor.complete_task"] and b["api_recall"] == pytest.approx(2 / 3)
    # paginated per the docs: A stopped after a full page, B saw a short one
    assert a["pagination_incomplete_apis"] == ["spotify.show_song_library"]
    assert b["pagination_complete_apis"] == ["spotify.show_song_library"]


def test_cli_scope_and_unknown_world(log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _analyze(capsys, str(log), "--battle-id", "A", "--task-id", "t1", "--appworld-root", str(tmp_path / "none"),
                   "--scope", "spotify__login, supervisor.complete_task")
    assert out["gold_apis"] is None and out["scope_size"] == 2 and out["scope_recall"] is None
    assert out["pagination"] == {}   # no docs: inferred, and A passed no paging arguments


def test_cli_missing_log_and_bad_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _analyze(capsys, str(tmp_path / "absent.jsonl"), "--appworld-root", str(tmp_path))
    assert out["log_found"] is False and out["total_calls"] == 0
    assert main(["--env-file", "/nonexistent.env", "analyze", str(tmp_path / "x"), "--task-id", "../../etc/passwd"]) == 2
    assert "invalid task id" in capsys.readouterr().err


def test_console_script_prints_only_json(log: Path, tmp_path: Path) -> None:
    proc = subprocess.run([str(VENV_BIN / "appworld-green"), "--env-file", "/nonexistent.env", "analyze", str(log),
                           "--battle-id", "B", "--appworld-root", str(tmp_path / "none")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["calls_per_tool"] == {"spotify__login": 1, "spotify__show_song_library": 1}


def test_a_task_id_alone_analyzes_its_latest_battle_and_says_so(log: Path, world: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = _analyze(capsys, str(log), "--task-id", "t1", "--appworld-root", str(world))
    assert out["battle_id"] == "A" and out["total_calls"] == 4  # A's last call (10:00:05) is newer than B's (10:00:04)
    assert main(["--env-file", "/nonexistent.env", "analyze", str(log), "--task-id", "t1", "--appworld-root", str(world)]) == 0
    err = capsys.readouterr().err
    assert "task t1 has 2 battles" in err and "analyzing the latest, A" in err and "--battle-id for another (B)" in err


def test_a_run_folder_is_read_alone_its_battle_task_and_scope_from_its_result(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`analyze RUN`: the battle folder's own archived calls (not a shared log beside it), its battle and scope."""
    from batch_fakes import make_result

    run = tmp_path / "run"
    run.mkdir()
    result = make_result("abc_1", "mine", "failed", run)  # scope: simple_note.login, supervisor.complete_task
    (run / "result.json").write_text(result.model_dump_json())
    mine = [json.loads(rec("mine", 0, "simple_note__login", True)) | {"task_id": "abc_1"},
            json.loads(rec("mine", 1, "supervisor__complete_task", True)) | {"task_id": "abc_1"}]
    (run / "mcp_calls.jsonl").write_text("".join(json.dumps(r) + "\n" for r in mine))
    shared = tmp_path / "shared.jsonl"  # another user's battle of the same task, in a log the checkout shares
    shared.write_text(json.dumps(json.loads(rec("theirs", 9, "spotify__login", True)) | {"task_id": "abc_1"}) + "\n")
    out = _analyze(capsys, str(run), "--appworld-root", str(tmp_path / "none"))
    assert (out["battle_id"], out["total_calls"], out["scope_size"]) == ("mine", 2, 2)
    assert out["calls_per_tool"] == {"simple_note__login": 1, "supervisor__complete_task": 1}
    assert main(["--env-file", "/nonexistent.env", "analyze", str(run), "--task-id", "other_1"]) == 2
    assert "is the battle of task abc_1, not of other_1" in capsys.readouterr().err


def test_no_log_or_run_named_and_a_folder_that_is_no_run_are_refused(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:  # no default: the checkout's shared log is never read by accident
        main(["--env-file", "/nonexistent.env", "analyze", "--task-id", "abc_1"])
    assert exited.value.code == 2
    capsys.readouterr()
    assert main(["--env-file", "/nonexistent.env", "analyze", str(tmp_path)]) == 2
    assert "holds neither a battle's result.json nor a run's run.json" in capsys.readouterr().err
