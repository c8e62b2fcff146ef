"""Compatibility predictor: the seed's way, AppWorld's companion package in its own interpreter.

For users who have `appworld_agents` (AppWorld's experiments package) installed under
`APPWORLD_PYTHON`: we run a short script there that loads the task with `appworld` (so
`APPWORLD_ROOT` must hold the task, with the upstream demo tasks for `predicted` mode) and calls the
upstream `APIPredictor` in `predicted` mode; its answer is re-parsed with our strict rules. Off by
default (only `--predictor appworld_agents` selects it). If the package is not importable there,
a `BadInputError` says how to proceed. The upstream API is outside our control; this adapter is
best-effort and its JSON handshake is the only contract we rely on.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from kernel.errors import BadInputError, InfrastructureError
from green_agent.models.scope import ScopePrediction
from green_agent.scoping.parsing import parse_api_lines
from kernel.world_data import WorldData

IMPORT_PATH = "appworld_agents.code.common.api_predictor"
DEFAULT_TIMEOUT_S = 300.0
UPSTREAM_DEMO_TASK_IDS = ("82e2fac_1", "29caf6f_1", "d0b1f43_1")

_SCRIPT = r"""
import json, sys
args = json.loads(sys.argv[1])
import appworld_agents.code.common.api_predictor as common
from appworld.task import Task
from appworld_agents.code.simplified.api_predictor import APIPredictor
from pathlib import Path
prompt = Path(common.__file__).resolve().parents[2] / "prompts" / "api_predictor.txt"
predictor = APIPredictor(model_config={"name": args["model"]}, prompt_file_path=str(prompt),
                         demo_task_ids=args["demos"], max_predicted_apis=args["cap"],
                         app_api_separator=".", mode="predicted")
result = predictor.predict(task=Task.load(task_id=args["task_id"]))
apis = result[0] if isinstance(result, tuple) else result
print("<<APIS>>" + json.dumps(list(apis)))
"""


class AppWorldAgentsPredictor:
    """Runs upstream's predictor in the AppWorld interpreter (see the module docstring)."""

    name = "appworld_agents"

    def __init__(self, world: WorldData, *, appworld_python: Path, model: str, cap: int = 20,
                 timeout_s: float = DEFAULT_TIMEOUT_S, env: dict[str, str] | None = None) -> None:
        self.world, self.python, self.model, self.cap = world, Path(appworld_python), model, cap
        self.timeout_s, self.env = timeout_s, env

    def check_installed(self) -> None:
        """Raise `BadInputError` unless `appworld_agents` imports under `appworld_python`."""
        if not self.python.is_file():
            raise BadInputError(f"APPWORLD_PYTHON={self.python} does not exist; point it at the interpreter "
                                "that has appworld and appworld_agents, or use --predictor llm/lexical")
        probe = self._run(["-c", f"import {IMPORT_PATH}"], timeout_s=60)
        if probe.returncode != 0:
            raise BadInputError(
                f"`{IMPORT_PATH}` is not importable with APPWORLD_PYTHON={self.python} (AppWorld's companion "
                "package appworld_agents is not installed there); install it from the AppWorld repository's "
                "experiments folder, or use --predictor llm or lexical"
            )

    def predict(self, task_id: str, instruction: str) -> ScopePrediction:
        self.check_installed()
        payload = {"task_id": task_id, "model": self.model, "cap": self.cap, "demos": list(UPSTREAM_DEMO_TASK_IDS)}
        done = self._run(["-c", _SCRIPT, json.dumps(payload)], timeout_s=self.timeout_s)
        marker = next((line for line in done.stdout.splitlines() if line.startswith("<<APIS>>")), None)
        if done.returncode != 0 or marker is None:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise InfrastructureError(f"appworld_agents predictor failed for {task_id}: {' | '.join(tail)[:400]}")
        known = self.world.all_apis()
        parsed = parse_api_lines("\n".join(json.loads(marker[len("<<APIS>>"):])), known, self.cap)
        return ScopePrediction(predictor="appworld_agents", requested="appworld_agents", apis=parsed.apis,
                               model=self.model)

    def _run(self, argv: list[str], timeout_s: float) -> subprocess.CompletedProcess:
        try:
            return subprocess.run([str(self.python), *argv], capture_output=True, text=True, timeout=timeout_s,
                                  env=self.env, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise InfrastructureError(f"appworld_agents predictor timed out after {timeout_s:g}s") from exc
        except OSError as exc:
            raise BadInputError(f"cannot run APPWORLD_PYTHON={self.python}: {exc}") from exc
