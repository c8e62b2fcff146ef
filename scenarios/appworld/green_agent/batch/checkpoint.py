"""Checkpoints of a run directory: the manifest, finished battles, atomic writes, the event log.

Resume is safe by construction (tau2-bench style): `run.json` fingerprints the config and the task
set, and a resume with a different fingerprint is refused; finished work is keyed by (task, trial)
and read back from `tasks/<task_id>[/trial-k]/result.json`; a battle counts as finished only when
its result was judged (`status != infra_error`), so infra errors and interrupted battles are rerun.
Every file is written to a temporary name and renamed into place, so a kill never leaves half a file.
`events.jsonl` records each battle start and finish (the audit trail that shows nothing ran twice).
What is read back is read through the run-folder reader (`green_agent.runfolder`): the folder's layout
(`BattleKey`, `battle_dir`, the file names, re-exported here for the batch layer) and its checks are its own.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kernel.atomic import append_text, atomic_write_text
from kernel.errors import BadInputError, RunFolderError
from green_agent.models.eval_run import RunConfig, RunManifest, RunNode
from green_agent.models.result import BattleResult
from green_agent.runfolder.layout import (AGENTBEATS_FILE, EVENTS_FILE, MANIFEST_FILE, REPORT_FILE, RESULT_FILE,
                                          RESULTS_FILE, TASK_INFO_FILE, TASKS_DIR, BattleKey, battle_dir, battle_keys,
                                          task_dir)
from green_agent.runfolder.reader import RunFolder

__all__ = ["AGENTBEATS_FILE", "EVENTS_FILE", "MANIFEST_FILE", "REPORT_FILE", "RESULT_FILE", "RESULTS_FILE",
           "TASK_INFO_FILE", "TASKS_DIR", "BattleKey", "append_event", "battle_dir", "battle_keys", "digest",
           "finished", "fingerprint", "load_manifest", "load_results", "prepare_run", "read_events", "record_nodes",
           "task_dir"]

log = logging.getLogger(__name__)

_FINGERPRINTED = ("blue", "predictor", "scope_policy", "split", "trials", "deadline_s")
_events_lock = threading.Lock()


def digest(task_ids: list[str]) -> str:
    return hashlib.sha256("\n".join(task_ids).encode()).hexdigest()


def fingerprint(config: RunConfig, task_ids: list[str]) -> str:
    """sha256 over what changes results: Blue, predictor, split, trials, deadline and the task set."""
    payload = {name: getattr(config, name) for name in _FINGERPRINTED} | {"tasks": digest(task_ids)}
    if config.interaction != "tools":  # only then, so the runs made before the choice existed keep their fingerprint
        payload["interaction"] = config.interaction
    if config.faults is not None:  # likewise: a run without faults keeps its fingerprint
        payload["faults"] = config.faults.text()
    if config.paraphrase is not None:  # likewise: the wording of every battle follows from the spec and the set
        payload["paraphrase"] = config.paraphrase.model_dump() | {"set_digest": config.paraphrase_set_digest}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def paraphrase_words(config: RunConfig) -> str:
    """`, paraphrase <strength> (seed N, set <digest>)` for a refused resume's message; '' without paraphrases."""
    spec = config.paraphrase
    if spec is None:
        return ""
    return f", paraphrase {spec.strength} (seed {spec.seed}, set {(config.paraphrase_set_digest or '?')[:12]})"


def load_manifest(out: Path) -> RunManifest | None:
    """The run's `run.json`, checked (`RunFolder.manifest`); None when `out` holds none."""
    return RunFolder(out).manifest() if Path(out).is_dir() else None


def prepare_run(out: Path, manifest: RunManifest, resume: bool) -> RunManifest:
    """Write the manifest of a new run, or check that a resume continues the same run.

    Raises:
        BadInputError: the directory holds a run and `resume` is False, or holds a different run.
    """
    try:
        existing = load_manifest(out)
    except RunFolderError as exc:
        raise RunFolderError(f"{exc}; choose another --out or delete the directory") from None
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
                            f"{len(existing.task_ids)} tasks, {existing.config.trials} trial(s)"
                            f"{paraphrase_words(existing.config)}); use a new --out")
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


def load_results(out: Path, keys: list[BattleKey], trials: int) -> dict[BattleKey, BattleResult]:
    """Every readable result on disk for `keys` (judged or not; an unreadable one is rerun)."""
    folder = RunFolder(out)
    found = {}
    for key in keys:
        result = folder.result(key, trials).result
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
    """The records of `events.jsonl` (a line that is not one is skipped), read within its limit."""
    return RunFolder(out).events() if Path(out).is_dir() else []
