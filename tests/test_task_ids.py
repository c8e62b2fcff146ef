"""Step 1: task id extraction and validation, before any use (hostile inputs included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel.errors import BadInputError, UnknownTaskError
from kernel.task_ids import extract_task_token, resolve_task, validate_task_id
from kernel.world_data import WorldData


@pytest.fixture()
def world(tmp_path: Path) -> WorldData:
    """A minimal AppWorld data folder: two tasks and a `dev` split (section 10 layout)."""
    for task_id in ("7c1a0e2_1", "b4d9e51_1"):
        directory = tmp_path / "data" / "tasks" / task_id
        directory.mkdir(parents=True)
        (directory / "specs.json").write_text('{"instruction": "x", "supervisor": {}, "datetime": ""}')
    (tmp_path / "data" / "datasets").mkdir()
    (tmp_path / "data" / "datasets" / "dev.txt").write_text("b4d9e51_1\n7c1a0e2_1:tagged\n")
    return WorldData(tmp_path)


@pytest.mark.parametrize("config, expected", [
    ("Task description: 7c1a0e2_1", "7c1a0e2_1"),
    ("  Task description:   b4d9e51_1  \nmore text", "b4d9e51_1"),
    ("task description: 7c1a0e2_1", "7c1a0e2_1"),
    ("7c1a0e2_1", "7c1a0e2_1"),
])
def test_forms_resolve(world: WorldData, config: str, expected: str) -> None:
    ref = resolve_task(config, world, "dev")
    assert ref.task_id == expected and ref.source == "id"


def test_bare_number_is_one_based_index_into_split(world: WorldData) -> None:
    assert resolve_task("1", world, "dev").task_id == "b4d9e51_1"
    ref = resolve_task("Task description: 2", world, "dev")
    assert (ref.task_id, ref.source, ref.split, ref.index) == ("7c1a0e2_1", "index", "dev", 2)
    for bad in ("0", "3"):
        with pytest.raises(BadInputError, match="out of range"):
            resolve_task(bad, world, "dev")
    with pytest.raises(BadInputError, match="unknown split"):
        resolve_task("1", world, "nosuch")


@pytest.mark.parametrize("hostile", [
    "../../etc/passwd", "x; rm -rf /", "7c1a0e2_1; ls", "$(id)_1", "7c1a0e2_1/../x", "7с1a0e2_1",  # Cyrillic es
    "7c1a0e2_١", "7c1a0e2_1\n", "a_" + "1" * 70, "x" * 100_000, "", "_1", "abc_", "a__1", "a_1_2",
])
def test_hostile_ids_are_refused_before_use(world: WorldData, hostile: str) -> None:
    with pytest.raises(BadInputError) as exc:
        validate_task_id(hostile)
    assert len(str(exc.value)) < 300  # quotes at most ~80 characters of the input
    assert not isinstance(exc.value, UnknownTaskError)


def test_huge_task_config_is_refused_with_short_message() -> None:
    with pytest.raises(BadInputError) as exc:
        extract_task_token("Task description: " + "A" * 200_000)
    assert len(str(exc.value)) < 300 and "200018 characters" in str(exc.value)


def test_unknown_id_names_the_id(world: WorldData) -> None:
    with pytest.raises(UnknownTaskError, match="zzz9999_7"):
        resolve_task("Task description: zzz9999_7", world, "dev")


def test_lookup_is_used_when_world_files_are_absent() -> None:
    class Lookup:
        def __init__(self) -> None:
            self.asked: list[str] = []

        def has_task(self, task_id: str) -> bool:
            self.asked.append(task_id)
            return task_id == "7c1a0e2_1"

    lookup = Lookup()
    assert resolve_task("7c1a0e2_1", None, "dev", lookup=lookup).task_id == "7c1a0e2_1"
    with pytest.raises(UnknownTaskError):
        resolve_task("b4d9e51_1", None, "dev", lookup=lookup)
    with pytest.raises(BadInputError):
        resolve_task("../x_1", None, "dev", lookup=lookup)
    assert lookup.asked == ["7c1a0e2_1", "b4d9e51_1"]  # the hostile id never reached the lookup
    with pytest.raises(BadInputError, match="split files"):
        resolve_task("1", None, "dev", lookup=lookup)
