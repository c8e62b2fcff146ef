"""A run folder opened for reading: every record it holds, checked before any of it is used.

`RunFolder(path)` (a directory; BadInputError if not) reads:
- `manifest()`: run.json as a `RunManifest` (None when there is none), checked by `check_manifest`: every task id
  passes the task-id rule, none twice, at most `MAX_TASKS`, `trials` at most `MAX_TRIALS`;
- `results()`: results.json as `EvalResults` (None when there is none; `read_eval_results(path)` for a folder or
  the file, as `compare` and `export` take it): its manifest checked the same way, and
  every row one of that manifest's battles, once, whose `result_path` is where that battle's result.json is;
- `result(key, trials)` / `result_at(path)`: a battle's result.json as a `ResultRead` (the result, or why there is
  none: a battle's unreadable result is the battle's problem, not the folder's, so it is reported, never raised);
  a result naming a task id that breaks the rule is unreadable (None is a battle whose task id could not be read);
- `task_info(task_id)`: tasks/<id>/task.json (None when missing or unreadable: it only adds words to the report);
- `events()`: events.jsonl's records (a line that is not a JSON object is skipped);
- `battle_dir(key, trials)`, `file(path, kind)`: a battle's folder, a file of the folder by its size limit.
`battle_folder(path, task_id, trial)` finds one battle's folder in a run folder of either shape (a battle's own,
an eval's), checked the same way.
Every file is read through `green_agent.runfolder.files` (inside the folder, a regular file, its size limit first,
its depth next). A folder that breaks a rule is refused with a `RunFolderError` naming the file and the problem.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, NamedTuple

from green_agent.models.eval_run import EvalResults, RunManifest, TaskInfo
from green_agent.models.otlp_export import OTLP_EXPORT_FILE, OtlpExportRecord
from green_agent.models.result import BattleResult
from green_agent.runfolder import files
from green_agent.runfolder.layout import (EVENTS_FILE, MANIFEST_FILE, RESULT_FILE, RESULTS_FILE, TASK_INFO_FILE,
                                          BattleKey, battle_dir, result_path, task_dir)
from green_agent.runfolder.limits import (EVENTS, MANIFEST, MAX_TASKS, MAX_TRIALS, OTLP_EXPORT, RESULT, RESULTS,
                                          TASK_INFO, FileKind)
from kernel.errors import BadInputError, RunFolderError
from kernel.task_ids import quote_input, validate_task_id

log = logging.getLogger(__name__)


class ResultRead(NamedTuple):
    """A battle's result.json as read: the result, or None and why."""

    result: BattleResult | None
    problem: str | None


def is_task_id(value: object) -> bool:
    """The task-id rule (`kernel.task_ids.validate_task_id`) as a test."""
    try:
        validate_task_id(value)  # type: ignore[arg-type]
    except BadInputError:
        return False
    return True


def check_manifest(manifest: RunManifest, name: str) -> RunManifest:
    """`manifest` if its task ids and counts keep the rules (see the module docstring); RunFolderError if not."""
    ids, trials = manifest.task_ids, manifest.config.trials
    if len(ids) > MAX_TASKS:
        raise RunFolderError(f"{name} names {len(ids):,} tasks, more than the {MAX_TASKS:,} a run may have")
    if trials > MAX_TRIALS:
        raise RunFolderError(f"{name} says config.trials is {trials:,}, more than the {MAX_TRIALS} trials a run may "
                             "have")
    bad = next((t for t in ids if not is_task_id(t)), None)
    if bad is not None:
        raise RunFolderError(f"{name} names task id {quote_input(bad)}, which breaks the task-id rule "
                             "(<letters/digits>_<number>, e.g. 7c1a0e2_1): a task id never names a path")
    if len(set(ids)) != len(ids):
        twice = next(t for i, t in enumerate(ids) if t in ids[:i])
        raise RunFolderError(f"{name} names task id {twice} twice")
    return manifest


def check_rows(results: EvalResults, name: str) -> EvalResults:
    """`results` if each row is one of its manifest's battles, once, at that battle's place; RunFolderError if not."""
    manifest = results.manifest
    tasks, trials = set(manifest.task_ids), manifest.config.trials
    if len(results.rows) > len(tasks) * trials:
        raise RunFolderError(f"{name} holds {len(results.rows):,} rows, more than the {len(tasks) * trials:,} battles "
                             f"of its run ({len(tasks)} tasks x {trials} trials)")
    seen: set[BattleKey] = set()
    for number, row in enumerate(results.rows, start=1):
        key = BattleKey(row.task_id, row.trial)
        if row.task_id not in tasks:
            raise RunFolderError(f"{name} row {number} names task id {quote_input(row.task_id)}, not one of its run's")
        if row.trial > trials or key in seen:
            raise RunFolderError(f"{name} row {number}: trial {row.trial} of task {row.task_id} is not a battle of its "
                                 f"run, or is there twice")
        if row.result_path != result_path(key, trials):
            raise RunFolderError(f"{name} row {number}: result_path {quote_input(row.result_path)} is not where the "
                                 f"battle's result is ({result_path(key, trials)})")
        seen.add(key)
    return results


class RunFolder:
    """One run folder, read through its checks (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise BadInputError(f"{self.path} is not a directory: give a run folder")
        self.root = self.path.resolve()

    def _name(self, path: Path) -> str:
        return files.shown(path)

    def manifest(self) -> RunManifest | None:
        path = self.path / MANIFEST_FILE
        manifest = files.read_model(self.path, path, MANIFEST, RunManifest)
        return None if manifest is None else check_manifest(manifest, self._name(path))

    def results(self, path: Path | None = None) -> EvalResults | None:
        """results.json (or the results file `path` of this folder), checked; None when there is none."""
        path = self.path / RESULTS_FILE if path is None else Path(path)
        results = files.read_model(self.path, path, RESULTS, EvalResults)
        if results is None:
            return None
        check_manifest(results.manifest, f"{self._name(path)} (its manifest)")
        return check_rows(results, self._name(path))

    def battle_dir(self, key: BattleKey, trials: int) -> Path:
        """The battle's folder (inside the run folder: a link out of it is refused)."""
        folder = battle_dir(self.path, key, trials)
        files.inside(self.path, folder)
        return folder

    def result(self, key: BattleKey, trials: int) -> ResultRead:
        return self.result_at(self.battle_dir(key, trials) / RESULT_FILE)

    def result_at(self, path: Path) -> ResultRead:
        """The result.json at `path` (inside the folder), or why it cannot be had."""
        try:
            data = files.read_bytes(self.path, path, RESULT)
            if data is None:
                return ResultRead(None, "its result.json is missing")
            result = files.parse_model(self._name(path), data, BattleResult, RESULT)
        except RunFolderError as exc:
            log.warning("ignoring unreadable %s: %s", self._name(path), exc)
            return ResultRead(None, f"its result.json cannot be read: {exc}")
        if result.task_id is not None and not is_task_id(result.task_id):
            return ResultRead(None, f"its result.json names task id {quote_input(result.task_id)}, which breaks the "
                                    "task-id rule")
        return ResultRead(result, None)

    def otlp_export(self, key: BattleKey, trials: int) -> OtlpExportRecord | None:
        """The battle's live-export record (`otlp_export.json`), or None (none written, or unreadable)."""
        path = self.battle_dir(key, trials) / OTLP_EXPORT_FILE
        try:
            return files.read_model(self.path, path, OTLP_EXPORT, OtlpExportRecord)
        except RunFolderError as exc:
            log.warning("ignoring unreadable %s: %s", self._name(path), exc)
            return None

    def task_info(self, task_id: str) -> TaskInfo | None:
        path = task_dir(self.path, task_id) / TASK_INFO_FILE
        try:
            return files.read_model(self.path, path, TASK_INFO, TaskInfo)
        except RunFolderError as exc:
            log.warning("ignoring unreadable %s: %s", self._name(path), exc)
            return None

    def events(self) -> list[dict[str, Any]]:
        return list(files.read_lines(self.path, self.path / EVENTS_FILE, EVENTS))

    def file(self, path: Path, kind: FileKind) -> Path | None:
        """`path` (a file of the folder) if it is there within `kind.limit`; None if it is not there."""
        name = self._name(path)
        resolved = files.inside(self.path, path)
        if not resolved.exists():
            return None
        if not resolved.is_file():
            raise RunFolderError(f"{name} is not a regular file: {files.UNTRUSTED}")
        size = resolved.stat().st_size
        if size > kind.limit:
            raise files.too_large(name, size, kind)
        return path


def read_eval_results(path: Path) -> EvalResults:
    """A run's checked `results.json`, from the run folder or the file itself (`compare`, `export`).

    Raises:
        BadInputError: no such file (naming `report` when the run folder lacks it); RunFolderError: a bad one.
    """
    path = Path(path)
    folder, file = (path, path / RESULTS_FILE) if path.is_dir() else (path.parent, path)
    if not file.is_file():
        hint = (f"run `appworld-green report {path}` first" if (path / MANIFEST_FILE).is_file()
                else "give an eval run directory (eval --out) or its results.json")
        raise BadInputError(f"{file} does not exist: {hint}")
    results = RunFolder(folder).results(file)
    assert results is not None
    return results


def read_json(path: Path, kind: FileKind) -> Any:
    """The JSON value of the file at `path` (not a run folder's own: an assessment's results file), read within
    `kind.limit` and `MAX_DEPTH`. Raises RunFolderError (a bad file) or FileNotFoundError (none)."""
    path = Path(path)
    data = files.read_bytes(path.parent, path, kind)
    if data is None:
        raise FileNotFoundError(path)
    name = files.shown(path)
    files.check_depth(name, data, kind)
    try:
        return json.loads(data)
    except ValueError:
        raise RunFolderError(f"{name} is not JSON") from None


class BattleFolder(NamedTuple):
    """One battle's folder found in a run folder, and its result (None when it has none readable)."""

    path: Path
    result: BattleResult | None


def battle_folder(path: Path, task_id: str | None = None, trial: int = 1) -> BattleFolder:
    """The battle's folder of a run folder: `path` itself when it holds a battle's `result.json` (`battle --out`;
    `task_id`, if given, must be its task), else the battle `task_id`, `trial` of the eval run folder `path`
    (run.json; `task_id` may be left out when the run has one task).

    Raises:
        BadInputError: not a run folder, no such battle, or no task named where the run has several;
        RunFolderError: a run folder that breaks a reader's rule.
    """
    folder = RunFolder(path)
    if (folder.path / RESULT_FILE).is_file():
        read = folder.result_at(folder.path / RESULT_FILE)
        if task_id is not None and read.result is not None and read.result.task_id != task_id:
            raise BadInputError(f"{folder.path} is the battle of task {read.result.task_id}, not of {task_id}")
        return BattleFolder(folder.path, read.result)
    manifest = folder.manifest()
    if manifest is None:
        raise BadInputError(f"{folder.path} holds neither a battle's result.json nor a run's run.json: give a run "
                            "folder (battle --out, eval --out) or a call log file")
    if task_id is None:
        if len(manifest.task_ids) != 1:
            raise BadInputError(f"{folder.path} is a run of {len(manifest.task_ids)} tasks: name one with --task-id")
        task_id = manifest.task_ids[0]
    if task_id not in manifest.task_ids or not 1 <= trial <= manifest.config.trials:
        raise BadInputError(f"no battle of task {quote_input(task_id)}, trial {trial} in {folder.path} (its tasks: "
                            f"{', '.join(manifest.task_ids[:10])}{' ...' if len(manifest.task_ids) > 10 else ''}; "
                            f"trials 1..{manifest.config.trials})")
    battle = folder.battle_dir(BattleKey(task_id, trial), manifest.config.trials)
    return BattleFolder(battle, folder.result_at(battle / RESULT_FILE).result)
