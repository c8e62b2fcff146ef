"""The task pack: the shared base world (`world.py`) and one module per scenario (`scenarios/`).

Scenario modules are discovered automatically: drop `scenarios/<scenario_id>_<slug>.py` exposing
`SCENARIO = ScenarioDef(...)` and the builder picks it up. No AppWorld import happens here.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from pack.types import ScenarioDef

PACK_DIR = Path(__file__).resolve().parent
SCENARIO_DIR = PACK_DIR / "scenarios"


class PackError(Exception):
    """A task-pack definition is malformed. The message names the scenario/task and the field."""


def scenario_files(extra: list[Path] | None = None) -> list[Path]:
    """Every scenario module of the pack (sorted by name), then `extra` files in the given order."""
    files = sorted(p for p in SCENARIO_DIR.glob("*.py") if not p.name.startswith("_"))
    return files + [Path(p).resolve() for p in (extra or [])]


def load_scenario(path: Path) -> ScenarioDef:
    """Import one scenario module by path and return its `SCENARIO`, with `source` set."""
    module_name = f"pack_scenario_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise PackError(f"{path.name}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a broken module must name itself, whatever it raised
        raise PackError(f"{path.name}: import failed: {type(exc).__name__}: {exc}") from exc
    scenario = getattr(module, "SCENARIO", None)
    if not isinstance(scenario, ScenarioDef):
        raise PackError(f"{path.name}: field SCENARIO: the module must define SCENARIO = ScenarioDef(...)")
    object.__setattr__(scenario, "source", path.name)
    return scenario


def load_scenarios(extra: list[Path] | None = None) -> list[ScenarioDef]:
    """All scenarios of the pack (plus `extra` files), in file order."""
    return [load_scenario(path) for path in scenario_files(extra)]


def source_digest(extra: list[Path] | None = None) -> str:
    """SHA-256 over the pack's and builder's sources: the `.built` stamp's content."""
    world_dir = PACK_DIR.parent
    files = sorted(
        p for p in world_dir.rglob("*") if p.is_file() and p.suffix in (".py", ".md") and "__pycache__" not in p.parts
    )
    digest = hashlib.sha256()
    for path in files + [Path(p).resolve() for p in (extra or [])]:
        digest.update(str(path.relative_to(world_dir) if path.is_relative_to(world_dir) else path.name).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()
