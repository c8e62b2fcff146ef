"""The package layout's rules (issues 18 and 25), checked on the source so a later change cannot quietly undo them.

- Floors, bottom up: `kernel` (shared by everyone), the gateway (`mcp_gateway`), then the Green
  (`green_agent`); the Blues (the agents under test) and the offline scenario stand beside the Green
  on the kernel. No module imports from a floor above its own or from a Blue: the kernel imports
  neither the gateway, the Green nor a Blue; the gateway neither the Green nor a Blue; a Blue never
  the Green.
- Inside the Green, drivers are on top: no library module imports a driver (`green_agent/commands/`,
  `green_agent/cli.py`); only drivers do.
- No import circle between modules, lazy (function-level) imports included.
- The run-folder reader (`green_agent/runfolder`) is one floor below every reader of a run folder: it imports only
  the records (`green_agent/models`) and the kernel; and the trace (`green_agent/trace`), which the engine writes
  and the batch layer links, never imports the engine, the batch layer or re-judging (issue 50).
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


BLUES = ("blue_agent", "offline")
FORBIDDEN_ABOVE: dict[str, tuple[str, ...]] = {
    "kernel": ("green_agent", "mcp_gateway", *BLUES),
    "mcp_gateway": ("green_agent", *BLUES),
    "blue_agent": ("green_agent",),
    "offline": ("green_agent",),
}
"""Each folder of `scenarios/appworld/` and the top-level packages it must never import."""
DRIVERS = ("green_agent.commands", "green_agent.cli")
"""The Green's drivers: the command line. Only drivers may import them."""


def imports_of(folder: Path, packages: tuple[str, ...]) -> list[str]:
    """`file: module` for every import under `folder` of a module in one of `packages` (or below it)."""
    return [f"{path.relative_to(folder)}: {module}" for path in python_files(folder)
            for module in sorted(imported_modules(path))
            if any(module == p or module.startswith(p + ".") for p in packages)]


def green_imports(folder: Path) -> list[str]:
    return imports_of(folder, ("green_agent",))


def test_no_folder_imports_a_floor_above_its_own() -> None:
    for folder, forbidden in FORBIDDEN_ABOVE.items():
        assert imports_of(SCENARIO_DIR / folder, forbidden) == [], folder


def test_the_import_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("from green_agent.engine import sequencer\nimport kernel.errors\n")
    assert green_imports(tmp_path) == ["x.py: green_agent.engine"]
    (tmp_path / "y.py").write_text("def f():\n    from green_agent.cli import main\n")
    assert imports_of(tmp_path, DRIVERS) == ["y.py: green_agent.cli"]


def is_driver(path: Path) -> bool:
    relative = path.relative_to(SCENARIO_DIR / "green_agent").as_posix()
    return relative == "cli.py" or relative.startswith("commands/")


def test_no_library_module_imports_a_driver() -> None:
    offenders = [f"{path.relative_to(SCENARIO_DIR)}: {module}"
                 for path in python_files(SCENARIO_DIR / "green_agent") if not is_driver(path)
                 for module in sorted(imported_modules(path))
                 if any(module == d or module.startswith(d + ".") for d in DRIVERS)]
    assert offenders == []


def test_the_records_import_only_records_and_the_kernel() -> None:
    """`green_agent/models` is the floor the rest of the Green builds on: it never reaches up into the engine,
    the steps or the batch layer (assembling a result from the engine's state is the engine's own work)."""
    offenders = [f"{path.relative_to(SCENARIO_DIR)}: {module}"
                 for path in python_files(SCENARIO_DIR / "green_agent" / "models")
                 for module in sorted(imported_modules(path))
                 if module.startswith("green_agent.") and not module.startswith("green_agent.models")]
    assert offenders == []


READER_MAY_IMPORT = ("green_agent.models", "green_agent.runfolder")
ABOVE_THE_TRACE = ("green_agent.batch", "green_agent.engine", "green_agent.rejudge")


def test_the_run_folder_reader_and_the_trace_import_nothing_above_them() -> None:
    reader = [line for line in green_imports(SCENARIO_DIR / "green_agent" / "runfolder")
              if not line.split(": ")[1].startswith(READER_MAY_IMPORT)]
    assert reader == []
    assert imports_of(SCENARIO_DIR / "green_agent" / "trace", ABOVE_THE_TRACE) == []


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SCENARIO_DIR).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = SCENARIO_DIR) -> dict[str, set[str]]:
    """Module -> the modules of `root` it imports (`from pkg import sub` counts as importing `pkg.sub`)."""
    modules = {module_name(path): path for path in python_files(root) if "pack" not in path.parts}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                           for alias in node.names]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_no_import_circle() -> None:
    assert import_circles(import_graph()) == []


def test_the_circle_check_can_fail() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_circles(graph) == [["a", "b", "c"]]


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


def self_calls(path: Path) -> list[str]:
    """`Class.method` for every method that calls itself (`self.method(...)`) in its own body."""
    found = []
    for cls in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(cls, ast.ClassDef):
            continue
        for method in cls.body:
            if isinstance(method, ast.FunctionDef) and any(
                    isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method.name
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
                    for node in ast.walk(method)):
                found.append(f"{cls.name}.{method.name}")
    return found


def test_the_sequencer_reads_forwards(tmp_path: Path) -> None:
    assert self_calls(SCENARIO_DIR / "green_agent" / "engine" / "sequencer.py") == []
    (tmp_path / "r.py").write_text("class B:\n    def run_step(self, n):\n        return self.run_step(n - 1)\n")
    assert self_calls(tmp_path / "r.py") == ["B.run_step"]
