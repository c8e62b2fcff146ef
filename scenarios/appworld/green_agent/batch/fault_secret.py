"""A reliability run's secret: drawn when the run starts, kept across `--resume`, published once the run is over.

The fault plan draws on the seed and on a secret of the run (`kernel.fault_spec`), so no agent can predict it while
the run goes on. The run's `run.json` records the secret's commitment (its SHA-256, in `config.faults`) when the run
starts; the secret itself waits in `fault-salt.secret` beside it (mode 0600, never in any file a battle writes)
until the run is over, when `publish` moves it into `run.json`'s `fault_salt` (and so into results.json), deletes
the file, and anyone can check it against the commitment and reproduce the plan. A resume takes the secret back
from that file (or from `run.json` once published); a secret given with the spec (`salt=...`, reproducing a
published run) must match the commitment. A run that was interrupted is not over: its secret stays unpublished.
"""

from __future__ import annotations

import os
from pathlib import Path

from green_agent.models.eval_run import RunManifest
from green_agent.runfolder.layout import MANIFEST_FILE
from green_agent.runfolder.reader import RunFolder
from kernel.atomic import atomic_write_text
from kernel.errors import BadInputError
from kernel.fault_spec import FaultSpec

SECRET_FILE = "fault-salt.secret"


def salted_manifest(out: Path, manifest: RunManifest, new_run: bool, asked: FaultSpec | None) -> RunManifest:
    """`manifest` whose fault spec carries the run's secret (in memory only): a new run's is kept in its file,
    a resumed run's is read back. BadInputError when a resume cannot keep the plan."""
    faults = manifest.config.faults
    if faults is None:
        return manifest
    if new_run:
        assert faults.salt is not None, "build_manifest salts a new run's spec"
        _keep(out, faults.salt)
        return manifest
    salt = manifest.fault_salt or _read(out)
    if salt is None:
        raise BadInputError(f"--resume refused: {out} has no {SECRET_FILE}, the secret its fault plan draws on, "
                            "so the plan could not be kept; start a new run (a new --out)")
    if asked is not None and asked.salt is not None and asked.salt != salt:
        raise BadInputError("--resume refused: the salt given does not match the run's own secret")
    salted = faults.with_salt(salt)
    return manifest.model_copy(update={"config": manifest.config.model_copy(update={"faults": salted})})


def publish(out: Path, manifest: RunManifest) -> None:
    """The run is over: its secret goes into run.json (`fault_salt`) and its private file is deleted."""
    faults = manifest.config.faults
    if faults is None or faults.salt is None:
        return
    on_disk = RunFolder(out).manifest()
    if on_disk is not None and on_disk.fault_salt != faults.salt:
        atomic_write_text(Path(out) / MANIFEST_FILE, on_disk.model_copy(update={"fault_salt": faults.salt})
                          .model_dump_json(indent=2))
    (Path(out) / SECRET_FILE).unlink(missing_ok=True)


def kept_secret(out: Path) -> str | None:
    """The unpublished secret a run keeps for its resume, or the one its run.json published; None: neither."""
    manifest = RunFolder(out).manifest() if (Path(out) / MANIFEST_FILE).is_file() else None
    return (manifest.fault_salt if manifest else None) or _read(out)


def publish_all(runs: list[Path], salt: str) -> None:
    """Several runs that share one secret (a reliability profile's fault sweep) are all over: publish it in each."""
    for out in runs:
        manifest = RunFolder(out).manifest()
        if manifest is not None and manifest.config.faults is not None:
            faults = manifest.config.faults.with_salt(salt)
            publish(out, manifest.model_copy(update={"config": manifest.config.model_copy(update={"faults": faults})}))


def _keep(out: Path, salt: str) -> None:
    path = Path(out) / SECRET_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(salt + "\n")


def _read(out: Path) -> str | None:
    path = Path(out) / SECRET_FILE
    if path.is_symlink() or not path.is_file():
        return None
    with open(path, encoding="ascii", errors="replace") as handle:
        return handle.read(200).strip() or None
