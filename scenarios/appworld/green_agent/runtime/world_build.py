"""Build the offline world: run the task-pack builder and check it left a built world.

The builder (`scenarios/appworld/world/build.py`) imports AppWorld, so it runs as a subprocess with
`settings.appworld_python`; its output streams to this process's stdout/stderr. Its exit codes map to
our errors: 2 (malformed task pack) -> `BadInputError`, anything else non-zero -> `InfrastructureError`.
Called by `appworld-green world build` and by a Ray slot actor on a node without a world.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from kernel.errors import AppWorldUnavailableError, BadInputError, InfrastructureError
from kernel.settings import SCENARIO_DIR, Settings

WORLD_DIR = SCENARIO_DIR / "world"
BUILD_SCRIPT = WORLD_DIR / "build.py"
STAMP_NAME = ".built"
PACK_ERROR_EXIT = 2


def builder_command(settings: Settings, root: Path, only_validate: bool = False) -> list[str]:
    """The builder's argv (also used by tests that drive the builder directly)."""
    command = [str(settings.appworld_python), str(BUILD_SCRIPT), "--root", str(root)]
    return command + (["--only-validate"] if only_validate else [])


def build_world(settings: Settings, root: Path | None = None, only_validate: bool = False) -> Path:
    """Run the builder; return the root it built. Output streams to this process's stdout/stderr.

    Raises:
        AppWorldUnavailableError: the AppWorld virtualenv's Python is missing.
        BadInputError: the task pack is malformed (the builder named the task and field above).
        InfrastructureError: the build failed for another reason, or left no `.built` stamp.
    """
    root = Path(root or settings.appworld_root).resolve()
    if not Path(settings.appworld_python).is_file():
        raise AppWorldUnavailableError(
            f"AppWorld's Python not found at {settings.appworld_python}: run `make venvs` "
            "(or set APPWORLD_PYTHON to the python of a virtualenv with appworld==0.1.3.post1)"
        )
    returncode = subprocess.run(builder_command(settings, root, only_validate), cwd=WORLD_DIR, check=False).returncode
    if returncode == PACK_ERROR_EXIT:
        raise BadInputError("the task pack is malformed (see the problems listed above); fix the named fields")
    if returncode != 0:
        raise InfrastructureError(f"world build failed (builder exit code {returncode}); see its output above")
    if not only_validate and not (root / "data" / STAMP_NAME).is_file():
        raise InfrastructureError(f"world build finished but {root / 'data' / STAMP_NAME} is missing")
    return root
