"""A run folder -> the battles to re-judge, each with its recorded verdict and its saved end state.

Two layouts (docs/eval.md, docs/a2a.md):
- eval, assess, serve: `run.json` + `tasks/<task_id>[/trial-k]/result.json`, each battle's archive beside its
  result (`appworld/dbs`), and `results.json` (its rows are checked against the result.json too);
- battle, demo: one `result.json` at the top of the folder, its archive beside it.
An assessment's results file (`assess --out FILE`, a JSON whose results name `run_dir`) is followed to the run
folder it names. A result.json that cannot be read is a battle whose verdict cannot be checked (a difference).
Every file is read through the run-folder reader (`green_agent.runfolder`): a folder that breaks its rules
(a task id that is a path, counts past their bounds, a file past its size limit) is refused, exit 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, NamedTuple

from green_agent.models.eval_run import EvalResults, EvalRow
from green_agent.models.result import BattleResult
from green_agent.runfolder.files import inside
from green_agent.runfolder.layout import MANIFEST_FILE, RESULT_FILE, battle_keys
from green_agent.runfolder.limits import ASSESSMENT
from green_agent.runfolder.reader import RunFolder, read_json
from green_agent.steps.archive import OUTPUTS_DIR
from kernel.errors import BadInputError, RunFolderError


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


def resolve_run_folder(path: Path) -> Path:
    """`path` itself, or the run folder an assessment's results file names (`results[0].run_dir`)."""
    path = Path(path)
    if path.is_dir():
        return path
    if not path.is_file():
        raise BadInputError(f"{path} does not exist: give a run folder (eval --out, assess/serve's RUNS_DIR/a2a-..., "
                            "battle's runs/<battle>-<task>/)")
    try:
        data = read_json(path, ASSESSMENT)
        folder = next(r["run_dir"] for r in data["results"] if isinstance(r, dict) and r.get("run_dir"))
    except (RunFolderError, OSError, KeyError, TypeError, StopIteration):
        raise BadInputError(f"{path} is neither a run folder nor an assessment's results file naming one "
                            "(results[].run_dir)") from None
    return Path(folder)


def discover(path: Path) -> SavedRun:
    """The battles of the run folder at `path` (see the module docstring). BadInputError if it holds none."""
    root = resolve_run_folder(path)
    if (root / MANIFEST_FILE).is_file():
        return _eval_run(root)
    if (root / RESULT_FILE).is_file():
        result, problem = RunFolder(root).result_at(root / RESULT_FILE)
        battle = SavedBattle(root, RESULT_FILE, result.task_id if result else None, 1, result, problem, None)
        return SavedRun(root, "battle", [_inside(root, battle)], None)
    raise BadInputError(f"{root} is not a run folder: it holds neither {MANIFEST_FILE} (eval, assess, serve) nor "
                        f"{RESULT_FILE} (battle)")


def _eval_run(root: Path) -> SavedRun:
    run = RunFolder(root)
    manifest = run.manifest()
    assert manifest is not None
    trials = manifest.config.trials
    results = _results_file(run)
    rows = {(r.task_id, r.trial): r for r in results.rows} if results else {}
    battles = []
    for key in battle_keys(manifest.task_ids, trials):
        folder = run.battle_dir(key, trials)
        if not (folder / RESULT_FILE).exists():
            continue  # a battle that never ran: nothing recorded, nothing to re-judge
        result, problem = run.result_at(folder / RESULT_FILE)
        battles.append(_inside(root, SavedBattle(folder, (folder / RESULT_FILE).relative_to(root).as_posix(),
                                                 key.task_id, key.trial, result, problem,
                                                 rows.get((key.task_id, key.trial)))))
    if not battles:
        raise BadInputError(f"{root} holds run {manifest.run_id} but no battle result yet: nothing to re-judge")
    return SavedRun(root, "eval", battles, results)


def _inside(root: Path, battle: SavedBattle) -> SavedBattle:
    """`battle` if its saved end state is inside the run folder (a link out of it is refused: RunFolderError)."""
    inside(root, battle.dbs)
    return battle


def _results_file(run: RunFolder) -> EvalResults | None:
    try:
        return run.results()
    except RunFolderError:
        return None
