"""Checkpoints of a run directory: the manifest, finished battles, atomic writes, the event log.

Resume is safe by construction (tau2-bench style): `run.json` fingerprints the config and the task
set, and a resume with a different fingerprint is refused; finished work is keyed by (task, trial)
and read back from `tasks/<task_id>[/trial-k]/result.json`; a battle counts as finished only when
its result was judged (`status != infra_error`), so infra errors and interrupted battles are rerun.
Every file is written to a temporary name and renamed into place, so a kill never leaves half a file.
`events.jsonl` records each battle start and finish (the audit trail that shows nothing ran twice).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from kernel.atomic import append_text, atomic_write_text
from kernel.errors import BadInputError
from green_agent.models.eval_run import EvalResults, RunConfig, RunManifest, RunNode
from green_agent.models.result import BattleResult
from green_agent.models.result_assembly import RESULT_FILE

log = logging.getLogger(__name__)

MANIFEST_FILE = "run.json"
RESULTS_FILE = "results.json"
AGENTBEATS_FILE = "agentbeats_results.json"
REPORT_FILE = "report.html"
EVENTS_FILE = "events.jsonl"
TASKS_DIR = "tasks"
TASK_INFO_FILE = "task.json"

_FINGERPRINTED = ("blue", "predictor", "scope_policy", "split", "trials", "deadline_s")
_events_lock = threading.Lock()


class BattleKey(NamedTuple):
    """One unit of work: a task and a trial (1-based)."""

    task_id: str
    trial: int


def battle_keys(task_ids: list[str], trials: int) -> list[BattleKey]:
    """Every (task, trial) of a run, task-major."""
    return [BattleKey(task, trial) for task in task_ids for trial in range(1, trials + 1)]


def task_dir(out: Path, task_id: str) -> Path:
    return Path(out) / TASKS_DIR / task_id


def battle_dir(out: Path, key: BattleKey, trials: int) -> Path:
    """`tasks/<task_id>` with one trial, `tasks/<task_id>/trial-<k>` with several."""
    base = task_dir(out, key.task_id)
    return base if trials == 1 else base / f"trial-{key.trial}"


def digest(task_ids: list[str]) -> str:
    return hashlib.sha256("\n".join(task_ids).encode()).hexdigest()


def fingerprint(config: RunConfig, task_ids: list[str]) -> str:
    """sha256 over what changes results: Blue, predictor, split, trials, deadline and the task set."""
    payload = {name: getattr(config, name) for name in _FINGERPRINTED} | {"tasks": digest(task_ids)}
    if config.interaction != "tools":  # only then, so the runs made before the choice existed keep their fingerprint
        payload["interaction"] = config.interaction
    if config.faults is not None:  # likewise: a run without faults keeps its fingerprint
        payload["faults"] = config.faults.text()
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def load_manifest(out: Path) -> RunManifest | None:
    path = Path(out) / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        return RunManifest.model_validate_json(path.read_text())
    except (ValidationError, ValueError) as exc:
        raise BadInputError(f"{path} is not a run manifest ({exc.__class__.__name__}); "
                            "choose another --out or delete the directory") from None


def prepare_run(out: Path, manifest: RunManifest, resume: bool) -> RunManifest:
    """Write the manifest of a new run, or check that a resume continues the same run.

    Raises:
        BadInputError: the directory holds a run and `resume` is False, or holds a different run.
    """
    existing = load_manifest(out)
    if existing is None:
        if Path(out, TASKS_DIR).is_dir() and any(Path(out, TASKS_DIR).iterdir()):
            raise BadInputError(f"{out} holds task results but no {MANIFEST_FILE}: choose another --out")
        atomic_write_text(Path(out) / MANIFEST_FILE, manifest.model_dump_json(indent=2))
        return manifest
    if not resume:
        raise BadInputError(f"{out} already holds run {existing.run_id}: pass --resume to continue it, "
                            "or choose another --out")
    if existing.fingerprint != manifest.fingerprint:
        raise BadInputError(f"--resume refused: {out} holds run {existing.run_id} with another config or task set "
                            f"(blue {existing.config.blue}, predictor {existing.config.predictor}, "
                            f"{len(existing.task_ids)} tasks, {existing.config.trials} trial(s)); use a new --out")
    updated = existing.model_copy(update={"config": existing.config.model_copy(
        update={"workers": manifest.config.workers, "max_infra_retries": manifest.config.max_infra_retries,
                "executor": manifest.config.executor})})
    atomic_write_text(Path(out) / MANIFEST_FILE, updated.model_dump_json(indent=2))
    return updated


def record_nodes(out: Path, nodes: list[RunNode]) -> RunManifest | None:
    """Add the nodes an invocation used to `run.json` (first-use order, no duplicates)."""
    manifest = load_manifest(out)
    if manifest is None or not nodes:
        return manifest
    merged = list(manifest.nodes)
    for node in nodes:
        if node not in merged:
            merged.append(node)
    updated = manifest.model_copy(update={"nodes": merged})
    atomic_write_text(Path(out) / MANIFEST_FILE, updated.model_dump_json(indent=2))
    return updated


def load_eval_results(path: Path) -> EvalResults:
    """A run's `results.json`, from the run directory or the file itself.

    Raises:
        BadInputError: no such file (naming `report` when the run directory lacks it), or not results.json.
    """
    path = Path(path)
    file = path / RESULTS_FILE if path.is_dir() else path
    if not file.is_file():
        hint = (f"run `appworld-green report {path}` first" if (path / MANIFEST_FILE).is_file()
                else "give an eval run directory (eval --out) or its results.json")
        raise BadInputError(f"{file} does not exist: {hint}")
    try:
        return EvalResults.model_validate_json(file.read_text())
    except (ValidationError, ValueError, OSError) as exc:
        raise BadInputError(f"{file} is not an eval results.json ({exc.__class__.__name__}): "
                            "regenerate it with `appworld-green report DIR`") from None


def load_result(path: Path) -> BattleResult | None:
    """A `result.json`, or None if missing or unreadable (an unreadable one is rerun)."""
    if not path.is_file():
        return None
    try:
        return BattleResult.model_validate_json(path.read_text())
    except (ValidationError, ValueError, OSError) as exc:
        log.warning("ignoring unreadable %s: %s", path, exc)
        return None


def load_results(out: Path, keys: list[BattleKey], trials: int) -> dict[BattleKey, BattleResult]:
    """Every result on disk for `keys` (judged or not)."""
    found = {}
    for key in keys:
        result = load_result(battle_dir(out, key, trials) / RESULT_FILE)
        if result is not None:
            found[key] = result
    return found


def finished(out: Path, keys: list[BattleKey], trials: int) -> dict[BattleKey, BattleResult]:
    """The judged results on disk: the battles a resume skips."""
    return {k: r for k, r in load_results(out, keys, trials).items() if r.status != "infra_error"}


def append_event(out: Path, event: str, key: BattleKey, **fields: Any) -> None:
    """Append one line to `events.jsonl` (thread-safe, one write per line)."""
    record = {"time": datetime.now(timezone.utc).isoformat(), "event": event, "task_id": key.task_id,
              "trial": key.trial, **fields}
    line = json.dumps(record, default=str) + "\n"
    with _events_lock:
        append_text(Path(out) / EVENTS_FILE, line)


def read_events(out: Path) -> list[dict[str, Any]]:
    path = Path(out) / EVENTS_FILE
    if not path.is_file():
        return []
    events = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events
