"""The package layout's rules (issue 18), checked on the source so a later change cannot quietly undo them.

- The Blues (the agents under test) and the shared kernel never import the Green (`green_agent`).
- Exactly one module sequences the 11 steps: `green_agent/engine/sequencer.py` is the only place that
  lists them in order; drivers import `STEPS` from it.
- Every quirk code a comment cites (`B1`..`B5` AppWorld, `D1`..`D12` AgentBeats) is defined in
  `docs/quirks.md`, and no code cites the team's reference notes, which are not in the repository.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from green_agent.engine.sequencer import STEPS
from kernel.settings import REPO_ROOT, SCENARIO_DIR

STEP_SEQUENCE = re.compile(r'"task_id",\s*"setup",\s*"scope"')
QUIRK_CODE = re.compile(r"(?<![\w\"'])([BD][0-9]{1,2})\b(?![\"'])")
"""A quirk code as comments and docstrings cite it (a quoted "B9" is test data, not a citation)."""
QUIRK_DEFINITION = re.compile(r"^\| ([BD][0-9]{1,2}) \|", re.MULTILINE)


def python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def green_imports(folder: Path) -> list[str]:
    return [f"{path.relative_to(folder)}: {module}" for path in python_files(folder)
            for module in sorted(imported_modules(path)) if module.split(".")[0] == "green_agent"]


def test_the_blues_and_the_kernel_import_nothing_from_the_green() -> None:
    for folder in ("blue_agent", "offline", "kernel"):
        assert green_imports(SCENARIO_DIR / folder) == [], folder


def test_the_import_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("from green_agent.engine import sequencer\nimport kernel.errors\n")
    assert green_imports(tmp_path) == ["x.py: green_agent.engine"]


def test_exactly_one_module_lists_the_step_order() -> None:
    listing = [path.relative_to(SCENARIO_DIR).as_posix() for path in python_files(SCENARIO_DIR)
               if STEP_SEQUENCE.search(path.read_text())]
    assert listing == ["green_agent/engine/sequencer.py"]
    assert STEPS[-2:] == ("cleanup", "report")  # the world is closed before the result is reported


def test_every_cited_quirk_code_is_defined_and_no_code_cites_notes_outside_the_repository() -> None:
    defined = set(QUIRK_DEFINITION.findall((REPO_ROOT / "docs" / "quirks.md").read_text()))
    assert {"B1", "B5", "D1", "D12"} <= defined
    cited: dict[str, str] = {}
    for path in python_files(SCENARIO_DIR) + python_files(REPO_ROOT / "tests") + python_files(REPO_ROOT / "bench"):
        if "pack" in path.parts:
            continue
        text = path.read_text()
        assert "reference/" + "agentbeats.md" not in text and "reference/" + "appworld.md" not in text, path
        for code in QUIRK_CODE.findall(text):
            cited.setdefault(code, str(path.relative_to(REPO_ROOT)))
    undefined = {code: where for code, where in cited.items() if code not in defined}
    assert cited and not undefined
