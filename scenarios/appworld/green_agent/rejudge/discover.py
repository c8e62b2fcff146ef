"""A run folder -> the battles to re-judge, each with its recorded verdict and its saved end state.

Two layouts (docs/eval.md, docs/a2a.md):
- eval, assess, serve: `run.json` + `tasks/<task_id>[/trial-k]/result.json`, each battle's archive beside its
  result (`appworld/dbs`), and `results.json` (its rows are checked against the result.json too);
- battle, demo: one `result.json` at the top of the folder, its archive beside it.
An assessment's results file (`assess --out FILE`, a JSON whose results name `run_dir`) is followed to the run
folder it names. A result.json that cannot be read is a battle whose verdict cannot be checked (a difference).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import ValidationError

from green_agent.batch.checkpoint import MANIFEST_FILE, RESULTS_FILE, battle_dir, battle_keys, load_manifest
from green_agent.models.eval_run import EvalResults, EvalRow
from green_agent.models.result import BattleResult
from green_agent.models.result_assembly import RESULT_FILE
from green_agent.steps.archive import OUTPUTS_DIR
from kernel.errors import BadInputError

MAX_RESULT_BYTES = 8 << 20
"""Largest result.json / results.json read (ours are a few KiB; a run folder may come from anyone)."""


class SavedBattle(NamedTuple):
    """One battle of a run folder."""

    folder: Path
    result_path: str
    task_id: str | None
    trial: int
    result: BattleResult | None
    problem: str | None
    row: EvalRow | None

    @property
    def dbs(self) -> Path:
        return self.folder / OUTPUTS_DIR / "dbs"


class SavedRun(NamedTuple):
    """A run folder's battles, in the run's order."""

    root: Path
    kind: Literal["eval", "battle"]
    battles: list[SavedBattle]
    results: EvalResults | None


def read_bounded(path: Path, limit: int = MAX_RESULT_BYTES) -> str:
    """The text of `path` if it is a regular file of at most `limit` bytes; ValueError otherwise."""
    if path.is_symlink() or not path.is_file():
        raise ValueError(f"{path.name} is not a regular file")
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path.name} is larger than {limit} bytes")
    return data.decode("utf-8", "replace")


def _load(path: Path) -> tuple[BattleResult | None, str | None]:
    try:
        return BattleResult.model_validate_json(read_bounded(path)), None
    except FileNotFoundError:
        return None, "its result.json is missing"
    except (OSError, ValueError, ValidationError) as exc:
        return None, f"its result.json cannot be read ({type(exc).__name__})"


def resolve_run_folder(path: Path) -> Path:
    """`path` itself, or the run folder an assessment's results file names (`results[0].run_dir`)."""
    path = Path(path)
    if path.is_dir():
        return path
    if not path.is_file():
        raise BadInputError(f"{path} does not exist: give a run folder (eval --out, assess/serve's RUNS_DIR/a2a-..., "
                            "battle's runs/<battle>-<task>/)")
    try:
        data = json.loads(read_bounded(path))
        folder = next(r["run_dir"] for r in data["results"] if isinstance(r, dict) and r.get("run_dir"))
    except (ValueError, KeyError, TypeError, StopIteration):
        raise BadInputError(f"{path} is neither a run folder nor an assessment's results file naming one "
                            "(results[].run_dir)") from None
    return Path(folder)


def discover(path: Path) -> SavedRun:
    """The battles of the run folder at `path` (see the module docstring). BadInputError if it holds none."""
    root = resolve_run_folder(path)
    if (root / MANIFEST_FILE).is_file():
        return _eval_run(root)
    if (root / RESULT_FILE).is_file():
        result, problem = _load(root / RESULT_FILE)
        battle = SavedBattle(root, RESULT_FILE, result.task_id if result else None, 1, result, problem, None)
        return SavedRun(root, "battle", [battle], None)
    raise BadInputError(f"{root} is not a run folder: it holds neither {MANIFEST_FILE} (eval, assess, serve) nor "
                        f"{RESULT_FILE} (battle)")


def _eval_run(root: Path) -> SavedRun:
    manifest = load_manifest(root)
    assert manifest is not None
    trials = manifest.config.trials
    results = _results_file(root)
    rows = {(r.task_id, r.trial): r for r in results.rows} if results else {}
    battles = []
    for key in battle_keys(manifest.task_ids, trials):
        folder = battle_dir(root, key, trials)
        if not (folder / RESULT_FILE).exists():
            continue  # a battle that never ran: nothing recorded, nothing to re-judge
        result, problem = _load(folder / RESULT_FILE)
        battles.append(SavedBattle(folder, (folder / RESULT_FILE).relative_to(root).as_posix(), key.task_id,
                                   key.trial, result, problem, rows.get((key.task_id, key.trial))))
    if not battles:
        raise BadInputError(f"{root} holds run {manifest.run_id} but no battle result yet: nothing to re-judge")
    return SavedRun(root, "eval", battles, results)


def _results_file(root: Path) -> EvalResults | None:
    try:
        return EvalResults.model_validate_json(read_bounded(root / RESULTS_FILE))
    except (OSError, ValueError, ValidationError):
        return None
