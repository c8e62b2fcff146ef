"""The offline world builder: pack validation (fast, real builder in .venv-appworld) and the built world (e2e)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from green_agent.runtime.world_build import BUILD_SCRIPT, WORLD_DIR, build_world
from kernel.errors import AppWorldUnavailableError, BadInputError, InfrastructureError
from kernel.settings import Settings
from kernel.world_data import WorldData

CANARY_PREFIX = "# Canary String: appworld:"

# A well-formed scenario; each case below overrides one task field (or the scenario id) to break it.
SCENARIO_TEMPLATE = '''
from dataclasses import replace
from pack.types import ScenarioDef, TaskDef

EVALUATION = """
def evaluate(test, public_data, private_data, main_user, models, ground_truth_answer):
    with test(\\"\\"\\"
        assert answers match.
    \\"\\"\\"):
        test.answer(None, ground_truth_answer)
    with test(\\"\\"\\"
        assert no model changes.
    \\"\\"\\"):
        test.case(models.changed_model_names(), "is_falsy")
"""
SOLUTION = """
def solution(apis, requester):
    apis.supervisor.complete_task(answer=3)
"""

PARAPHRASES = {{"mild": ("How many things exist?",), "medium": ("The things: how many are there?",),
               "strong": ("It's me, counting stuff: what is the number of things?",),
               "naturalistic": ("how many thigns r there",)}}

def task(number, **override):
    base = TaskDef(variant=number, instruction="How many things are there?", difficulty=1, answer=3,
                   solution=SOLUTION, evaluation=EVALUATION, test_labels=("no_op_fail", "no_op_pass"),
                   required_apps=(), paraphrases=PARAPHRASES)
    return replace(base, **override)

SCENARIO = ScenarioDef(scenario_id={scenario_id!r}, title="Draft", split="dev", apps=("simple_note",),
                       tasks=(task(1), task(2, {override}), task(3)))
'''

BAD_CASES = [
    pytest.param("difficulty=5", "f0dead1_2", "field difficulty", id="difficulty-out-of-range"),
    pytest.param("test_labels=('no_op_fail',)", "f0dead1_2", "field test_labels", id="labels-vs-blocks"),
    pytest.param("test_labels=('no_op_fail', 'no_op_fail')", "f0dead1_2", "needs at least one 'no_op_pass'",
                 id="missing-no-op-pass"),
    pytest.param("solution='def solve(apis):\\n    apis.supervisor.complete_task(answer=3)\\n'", "f0dead1_2",
                 "field solution", id="no-solution-function"),
    pytest.param("answer=None", "f0dead1_2", "field answer", id="action-task-solution-answers"),
    pytest.param("required_apps=('venmo',)", "f0dead1_2", "field required_apps", id="required-apps-mismatch"),
    pytest.param("variant=1", "f0dead1_1", "field variant: duplicate task id", id="duplicate-variant"),
    pytest.param("evaluation=EVALUATION.replace('no model changes', 'answers match')", "f0dead1_2",
                 "requirement text repeated", id="duplicate-requirement"),
    pytest.param("private_data={}, evaluation=EVALUATION.replace('models.changed_model_names()', 'private_data.x')",
                 "f0dead1_2", "field private_data", id="evaluation-reads-missing-private-data"),
    pytest.param("paraphrases={k: v for k, v in PARAPHRASES.items() if k != 'strong'}", "f0dead1_2",
                 "field paraphrases: needs at least one 'strong' wording", id="paraphrases-miss-a-strength"),
    pytest.param("paraphrases={**PARAPHRASES, 'loud': ('HOW MANY THINGS?',)}", "f0dead1_2",
                 "field paraphrases: unknown strength 'loud'", id="paraphrases-unknown-strength"),
    pytest.param("paraphrases={**PARAPHRASES, 'mild': ('how many things are  there?',)}", "f0dead1_2",
                 "mild variant 1 is the instruction itself", id="paraphrase-is-the-instruction"),
]


def _validate(settings: Settings, tmp_path: Path, override: str = "", scenario_id: str = "f0dead1"):
    draft = tmp_path / f"{scenario_id}_draft.py"
    draft.write_text(SCENARIO_TEMPLATE.format(scenario_id=scenario_id, override=override))
    command = [str(settings.appworld_python), str(BUILD_SCRIPT), "--only-validate", "--extra-scenario", str(draft)]
    return subprocess.run(command, cwd=WORLD_DIR, capture_output=True, text=True, timeout=60)


def test_builder_accepts_the_pack_plus_a_well_formed_draft(settings: Settings, tmp_path: Path) -> None:
    result = _validate(settings, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "task pack OK" in result.stdout


# A draft written with pack.snippets, as AUTHORING.md §8 describes.
SNIPPETS_DRAFT = '''
from pack.snippets import action_checks, check, login_preamble, paginate, question_checks, solution
from pack.types import ScenarioDef, TaskDef

LOGIN = login_preamble("simple_note") + paginate("notes", "simple_note.search_notes", 'tags=["draft"]')
PARAPHRASES = {"mild": ("What number of draft notes do I have?",), "medium": ("My draft notes: how many?",),
               "strong": ("It's me, tidying up: what count of drafts sits in my notes?",),
               "naturalistic": ("how many draft notes do i hav",)}
COUNT = dict(instruction="How many draft notes do I have?", difficulty=1, answer=3, required_apps=("simple_note",),
             paraphrases=PARAPHRASES,
             solution=solution(LOGIN, "    apis.supervisor.complete_task(answer=len(notes))"),
             **question_checks("the number of draft notes"))
PIN = TaskDef(
    variant=2, instruction="Pin my draft notes.", difficulty=2, required_apps=("simple_note",),
    paraphrases={"mild": ("Pin each of my draft notes.",), "medium": ("My draft notes: pin them all.",),
                 "strong": ("It's me; keep every draft at the top, pinned.",), "naturalistic": ("pin my drafts pls",)},
    solution=solution(LOGIN, """
    for note in notes:
        apis.simple_note.update_note(note_id=note["note_id"], pinned=True, access_token=token)
    apis.supervisor.complete_task()
"""),
    **action_checks(check("no_op_fail", "assert some note was updated.", """
        test.case(len(models.changed_records("simple_note.Note")[1]), ">", 0)
    """), check("no_op_pass", "assert nothing outside simple_note.Note changed.", """
        test.case(models.changed_model_names() - {"simple_note.Note"}, "is_falsy")
    """)),
)
SCENARIO = ScenarioDef(scenario_id="f0beef2", title="Draft", split="dev", apps=("simple_note",),
                       tasks=(TaskDef(variant=1, **COUNT), PIN, TaskDef(variant=3, **COUNT)))
'''


def test_a_draft_using_snippets_validates_and_snippets_is_not_a_scenario(settings: Settings, tmp_path: Path) -> None:
    draft = tmp_path / "f0beef2_draft.py"
    draft.write_text(SNIPPETS_DRAFT)
    command = [str(settings.appworld_python), str(BUILD_SCRIPT), "--only-validate", "--extra-scenario", str(draft)]
    result = subprocess.run(command, cwd=WORLD_DIR, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    code = "from pack import scenario_files; print([p.name for p in scenario_files()])"
    listing = subprocess.run([str(settings.appworld_python), "-c", code], cwd=WORLD_DIR, capture_output=True,
                             text=True, timeout=60)
    assert listing.returncode == 0, listing.stderr
    assert "snippets.py" not in listing.stdout and "f0a1c01_recipe_notes.py" in listing.stdout


@pytest.mark.parametrize(("override", "task_id", "message"), BAD_CASES)
def test_builder_refuses_a_malformed_task(settings: Settings, tmp_path: Path, override: str, task_id: str, message: str) -> None:
    result = _validate(settings, tmp_path, override=override)
    assert result.returncode == 2, result.stdout + result.stderr
    problem_lines = [line for line in result.stderr.splitlines() if message in line]
    assert problem_lines, result.stderr
    assert task_id in problem_lines[0]


@pytest.mark.parametrize(("scenario_id", "message"), [
    pytest.param("abc1234", "field scenario_id: must be 7 lower-case hex", id="not-f0-hex"),
    pytest.param("f0a1c01", "field scenario_id: duplicate id", id="collides-with-pack"),
])
def test_builder_refuses_a_bad_scenario_id(settings: Settings, tmp_path: Path, scenario_id: str, message: str) -> None:
    result = _validate(settings, tmp_path, scenario_id=scenario_id)
    assert result.returncode == 2
    assert any(message in line and scenario_id in line for line in result.stderr.splitlines()), result.stderr


def test_world_build_maps_builder_exit_codes(settings: Settings, tmp_path: Path) -> None:
    """`build_world` contract: builder exit 2 -> BadInputError, other failures -> InfrastructureError."""
    fake_python = tmp_path / "python"
    for code, error in ((2, BadInputError), (1, InfrastructureError), (0, InfrastructureError)):  # 0 w/o stamp
        fake_python.write_text(f"#!/bin/sh\nexit {code}\n")
        fake_python.chmod(0o755)
        with pytest.raises(error):
            build_world(settings.model_copy(update={"appworld_python": fake_python}), root=tmp_path / "root")
    with pytest.raises(AppWorldUnavailableError, match="make venvs"):
        build_world(settings.model_copy(update={"appworld_python": tmp_path / "missing"}), root=tmp_path / "root")


@pytest.mark.e2e
def test_built_world_has_native_layout(appworld_root: Path) -> None:
    data = appworld_root / "data"
    world = WorldData(appworld_root)
    assert (data / ".built").is_file()
    assert len(list((data / "base_dbs").glob("*.db"))) == 12
    train, dev, test = world.split("train"), world.split("dev"), world.split("test")
    assert len(train) == 9 and len(dev) == 21 and len(test) == 15
    assert not set(train) & set(dev) and not set(test) & set(train + dev)
    assert sorted(world.split("all")) == sorted(train + dev + test)
    for task_id in train + dev + test:
        gt = data / "tasks" / task_id / "ground_truth"
        for name in ("solution.py", "compiled_solution.py", "evaluation.py"):
            assert (gt / name).read_text().startswith(CANARY_PREFIX), (task_id, name)
        metadata = json.loads((gt / "metadata.json").read_text())
        assert metadata["mode"] == "full" and 1 <= metadata["difficulty"] <= 3
        labels = [test["label"] for test in json.loads((gt / "test_data.json").read_text())]
        assert {"no_op_fail", "no_op_pass"} <= set(labels), task_id
        apis = json.loads((gt / "required_apis.json").read_text())
        assert apis == sorted(apis) and "supervisor.complete_task" in apis
        assert world.task(task_id).gold_apis == apis


@pytest.mark.e2e
def test_appworld_verify_tasks_passes_every_task(settings: Settings, appworld_root: Path) -> None:
    appworld_cli = Path(settings.appworld_python).parent / "appworld"
    result = subprocess.run(
        [str(appworld_cli), "verify", "tasks", "--root", str(appworld_root)],
        # unbuffered: with a block-buffered pipe the final 'Passed N/N' line was observed to go missing
        env={**os.environ, "APPWORLD_ROOT": str(appworld_root), "PYTHONUNBUFFERED": "1"},
        cwd=appworld_root, capture_output=True, text=True, timeout=600,
    )
    # AppWorld's `verify tasks` checks train + dev only (its own list); check_pack below covers test too
    total = len(WorldData(appworld_root).split("train")) + len(WorldData(appworld_root).split("dev"))
    assert f"Passed {total}/{total} tasks." in result.stdout, result.stdout[-2000:] + result.stderr[-2000:]


@pytest.mark.e2e
def test_reference_solutions_succeed_and_no_op_fails(settings: Settings, appworld_root: Path) -> None:
    result = subprocess.run(
        [str(settings.appworld_python), str(WORLD_DIR / "check_pack.py"), "--root", str(appworld_root)],
        cwd=WORLD_DIR, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "0 mismatched" in result.stdout
