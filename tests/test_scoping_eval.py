"""Scope quality on the built offline world (dev split), the CLI, and the offline predictors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernel.errors import BadInputError
from green_agent.scoping.appworld_agents import AppWorldAgentsPredictor
from green_agent.scoping.evaluate import evaluate_split
from green_agent.scoping.lexical import LexicalPredictor
from green_agent.scoping.select import predict_scope
from kernel.settings import Settings
from kernel.world_data import WorldData
from scoping_world import write_tiny_world

CAP = 20


@pytest.fixture(scope="module")
def world(appworld_root: Path) -> WorldData:
    return WorldData(appworld_root).require()


@pytest.fixture(scope="module")
def offline_settings(appworld_root: Path) -> Settings:
    return Settings(openai_api_key=None, appworld_root=appworld_root, max_predicted_apis=CAP)


def test_ground_truth_recall_is_exactly_one(world: WorldData, offline_settings: Settings) -> None:
    report = evaluate_split(world, "dev", "ground_truth", offline_settings)
    assert report.tasks == len(world.split("dev")) >= 7
    assert report.recall == 1.0 and report.precision == 1.0 and report.max_apis <= CAP
    assert all(not s.missing for s in report.per_task) and report.full_coverage == 1.0


def test_lexical_recall_on_dev(world: WorldData, offline_settings: Settings) -> None:
    report = evaluate_split(world, "dev", "lexical", offline_settings)
    assert report.recall >= 0.85, report.worst
    assert report.max_apis <= CAP and report.fallbacks == 0
    assert 0 < report.precision < 1 and len(report.worst) == 3
    assert report.worst[0].recall == min(s.recall for s in report.per_task)


def test_lexical_meets_the_target_on_the_held_out_test_split(world: WorldData, offline_settings: Settings) -> None:
    """docs/scoping.md's target for the held-out split (never used to tune the predictor)."""
    report = evaluate_split(world, "test", "lexical", offline_settings)
    assert report.tasks == 15 and report.max_apis <= 20
    assert report.recall >= 0.95 and report.full_coverage >= 0.9, report.worst
    assert report.full_coverage == round(sum(1 for s in report.per_task if not s.missing) / 15, 4)


def test_lexical_never_reads_gold(world: WorldData, offline_settings: Settings,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    task_id = world.split("dev")[0]
    instruction = world.task(task_id).instruction

    def forbidden(*_: object) -> list[str]:
        raise AssertionError("the lexical predictor read gold APIs")

    monkeypatch.setattr(WorldData, "gold_apis", forbidden)
    prediction = predict_scope(task_id, instruction, offline_settings, world, "lexical")
    assert prediction.predictor == "lexical" and prediction.apis[0] == "supervisor.complete_task"


def test_upstream_first20_is_upstreams_capped_prefix(world: WorldData, offline_settings: Settings) -> None:
    prediction = predict_scope("any_1", "anything", offline_settings, world, "upstream_first20")
    everything = world.all_apis()
    assert len(everything) == 453 and len(prediction.apis) == CAP
    assert prediction.apis == ["supervisor.complete_task"] + everything[:CAP - 1]
    assert prediction.predictor == "upstream_first20"


@pytest.mark.parametrize("name", ["all", "none"])
def test_all_and_none_mean_every_api(world: WorldData, offline_settings: Settings, name: str) -> None:
    prediction = predict_scope("any_1", "anything", offline_settings, world, name)
    assert prediction.predictor == "all" and prediction.requested == name
    assert sorted(prediction.apis) == sorted(world.all_apis()) and prediction.apis[0] == "supervisor.complete_task"


def test_the_lexical_index_is_built_once_per_docs_version_and_again_for_rebuilt_docs(tmp_path: Path) -> None:
    """Every battle builds a fresh WorldData: its lexical predictor finds the index its run already built, and the
    same scope; docs rewritten (another mtime or size) are indexed again."""
    root = write_tiny_world(tmp_path / "w")
    first, second = LexicalPredictor(WorldData(root)), LexicalPredictor(WorldData(root))
    assert first.index is second.index and first.docs is second.docs
    instruction = "Add the songs I liked to a new playlist"
    assert first.choose(instruction) == second.choose(instruction) and first.choose(instruction)
    docs_file = root / "data" / "api_docs" / "standard" / "spotify.json"
    docs = json.loads(docs_file.read_text())
    docs["add_song_to_playlist"]["description"] += " Appends one track."
    docs_file.write_text(json.dumps(docs))
    rebuilt = LexicalPredictor(WorldData(root))
    assert rebuilt.index is not first.index and "append" in rebuilt.index.idf  # the new words are indexed
    assert LexicalPredictor(WorldData(root)).index is rebuilt.index


def test_unknown_predictor_and_missing_gold_are_bad_input(tmp_path: Path) -> None:
    world = WorldData(write_tiny_world(tmp_path / "w"))
    (world.task_dir("bbbbbbb_1") / "ground_truth" / "required_apis.json").unlink()
    settings = Settings(openai_api_key=None, appworld_root=world.root)
    with pytest.raises(BadInputError, match="unknown scope predictor"):
        predict_scope("bbbbbbb_1", "x", settings, world, "magic")
    with pytest.raises(BadInputError, match="no gold APIs"):
        predict_scope("bbbbbbb_1", "x", settings, world, "ground_truth")


def test_appworld_agents_not_installed_is_a_clear_error(tmp_path: Path) -> None:
    world = WorldData(write_tiny_world(tmp_path / "w"))
    with pytest.raises(BadInputError, match="appworld_agents.code.common.api_predictor. is not importable"):
        AppWorldAgentsPredictor(world, appworld_python=Path(sys.executable), model="gpt-5").predict("bbbbbbb_1", "x")
    with pytest.raises(BadInputError, match="does not exist"):
        AppWorldAgentsPredictor(world, appworld_python=tmp_path / "no-python", model="gpt-5").predict("bbbbbbb_1", "x")


@pytest.mark.e2e
def test_scope_eval_cli_prints_one_json_object(appworld_root: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "green_agent.cli", "--env-file", "/nonexistent", "scope-eval", "--predictor", "lexical",
         "--split", "dev", "--appworld-root", str(appworld_root)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert {"predictor", "tasks", "recall", "precision", "f1", "mean_apis", "worst"} <= set(report)
    assert report["predictor"] == "lexical" and report["recall"] >= 0.85
    bad = subprocess.run([sys.executable, "-m", "green_agent.cli", "scope-eval", "--predictor", "lexical", "--split",
                          "nosuch", "--appworld-root", str(appworld_root)], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown split" in bad.stderr
