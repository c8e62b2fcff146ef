"""Shared fixtures. Network use is loopback only; every server a test starts is stopped again.

The one world every test uses is the offline world that `make world` builds (`.appworld/`, or
`APPWORLD_ROOT`): `appworld_root` gives it. A test that needs a world of its own (one it changes,
or one with a split of its own) copies that one with `world_copy`; nothing reads a folder outside
the repository, its virtualenvs, the built world and the test's own temporary directories.
`appworld_servers` runs one APIs + environment server pair on free ports for the whole session.

Under pytest-xdist (`make test`: two workers, then the `serial` tests alone; docs/testing.md) each worker
owns a port band and its world slots (tests/workers.py). A worker takes whole files (`--dist loadfile`: a
module's fixtures are built once), a few files that share a session fixture together (`workers.SHARED_UNITS`),
slowest first (`workers.SLOWEST_FIRST`), so the last to end is a short one.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import workers
from green_agent.runtime.appworld_servers import AppWorldServers, AppWorldServerSpec
from kernel.ports import free_port
from kernel.settings import Settings, load_settings
from kernel.world_data import WorldData

if TYPE_CHECKING:
    from code_llm_script import ScriptedRun
    from shared_evals import SharedEval

WorldCopy = Callable[..., Path]


def pytest_configure(config: pytest.Config) -> None:
    workers.claim_port_band()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    workers.order(items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    return workers.make_scheduler(config, log) if config.getvalue("dist") == "loadfile" else None


@pytest.fixture(scope="session")
def settings() -> Settings:
    return load_settings()


@pytest.fixture(scope="session")
def appworld_root(settings: Settings) -> Path:
    """The built offline world; fails (never skips) when it has not been built."""
    root = settings.appworld_root
    if not (root / "data" / ".built").is_file():
        pytest.fail(f"no built offline world at {root}/data (no .built stamp): run `make world` "
                    "(`make test` does it for you)")
    return root


@pytest.fixture()
def world_copy(appworld_root: Path, tmp_path: Path) -> WorldCopy:
    """Copies parts of the built world's `data/` into `tmp_path/world` and returns that root.

    `parts`: folders of `data/` to copy (default `tasks` and `datasets`, all the batch layer reads).
    `splits`: extra split files to write, name -> task ids (e.g. a two-task `mini` split).
    """

    def copy(parts: Sequence[str] = ("tasks", "datasets"), splits: dict[str, Sequence[str]] | None = None) -> Path:
        root = tmp_path / "world"
        for part in parts:
            shutil.copytree(appworld_root / "data" / part, root / "data" / part, dirs_exist_ok=True)
        for name, task_ids in (splits or {}).items():
            (root / "data" / "datasets" / f"{name}.txt").write_text("".join(f"{t}\n" for t in task_ids))
        return root

    return copy


@pytest.fixture(scope="session")
def mini_tasks(appworld_root: Path) -> tuple[str, str]:
    """Two tasks of two different dev scenarios: an action task, then a question task."""
    world = WorldData(appworld_root)

    def is_question(task_id: str) -> bool:  # the builder writes answer.json for every task, null for actions
        return json.loads((world.task_dir(task_id) / "ground_truth" / "answer.json").read_text()) is not None

    dev = world.split("dev")
    action = next(t for t in dev if not is_question(t))
    question = next(t for t in dev if is_question(t) and t.split("_")[0] != action.split("_")[0])
    return action, question


@pytest.fixture(scope="session")
def appworld_servers(settings: Settings, appworld_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppWorldServers]:
    spec = AppWorldServerSpec(
        appworld_root=appworld_root,
        appworld_python=settings.appworld_python,
        env_port=free_port(),
        apis_port=free_port(),
        log_dir=tmp_path_factory.mktemp("appworld-logs"),
    )
    with AppWorldServers(spec) as servers:
        yield servers


@pytest.fixture(scope="session")
def scripted_code_eval(appworld_root: Path, tmp_path_factory: pytest.TempPathFactory) -> "ScriptedRun":
    """The scripted llm Blue's code-mode eval of one task, run once for the tests that read it (code_llm_script)."""
    from code_llm_script import run_scripted_code_eval
    return run_scripted_code_eval(appworld_root, tmp_path_factory.mktemp("scripted-code-eval"))


@pytest.fixture(scope="session")
def enforced_tools_eval(appworld_root: Path, tmp_path_factory: pytest.TempPathFactory) -> "SharedEval":
    """The reference Blue's tools-mode eval of f0f4d44_1-2 under an enforced scope, made once (shared_evals)."""
    from shared_evals import enforced_tools_eval
    return enforced_tools_eval(appworld_root, tmp_path_factory.mktemp("enforced-tools"))


@pytest.fixture(scope="session")
def enforced_code_eval(appworld_root: Path, tmp_path_factory: pytest.TempPathFactory) -> "SharedEval":
    """The reference Blue's code-mode eval of f0f4d44_2 under an enforced scope, made once (shared_evals)."""
    from shared_evals import enforced_code_eval
    return enforced_code_eval(appworld_root, tmp_path_factory.mktemp("enforced-code"))
