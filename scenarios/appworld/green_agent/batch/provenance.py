"""Gather a run's provenance (`green_agent.models.provenance.Provenance`) when it starts, and say how to verify it.

`run_provenance` reads what the run's numbers rest on: AppWorld's version (its virtualenv), the world's digest
(`batch.world_digest.world_digest`) and task pack version (the digest the builder writes in `data/.built`),
this package's version and the outcome rule's, the interaction and sandbox, and the image digest when the Green
runs in our image (`Settings.appworld_green_image_digest`, set by the Dockerfile). `rejudge_command` is the
command that re-judges a run folder's saved end states.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from green_agent import __version__
from green_agent.batch.standard import task_set_words
from green_agent.batch.world_digest import world_digest
from green_agent.models.provenance import GraderRecord, Provenance
from green_agent.models.result_assembly import collect_versions
from green_agent.runtime.world_build import STAMP_NAME
from green_agent.steps.judge import OUTCOME_RULE_VERSION
from kernel.settings import Settings


def task_pack_version(root: Path) -> str | None:
    """The pack-and-builder digest our builder stamps into `data/.built`, or None (a world not built by it)."""
    try:
        stamp = json.loads((Path(root) / "data" / STAMP_NAME).read_text())
    except (OSError, ValueError):
        return None
    digest = stamp.get("digest") if isinstance(stamp, dict) else None
    return str(digest) if digest else None


def run_provenance(settings: Settings, interaction: str, sandbox: str | None, split: str | None, task_count: int,
                   shard: tuple[int, int] | None = None, driver_custom: list[str] | None = None,
                   paraphrase_set_digest: str | None = None) -> Provenance:
    """The provenance of a run starting now on `settings`' world (see the module docstring); a paraphrase arm's set
    digest beside."""
    words, whole = task_set_words(split, task_count, shard)
    return Provenance(appworld=collect_versions(settings.appworld_python).appworld,
                      world_digest=world_digest(settings.appworld_root),
                      task_pack=task_pack_version(settings.appworld_root),
                      grader=GraderRecord(appworld_green=__version__, outcome_rule=OUTCOME_RULE_VERSION),
                      interaction=interaction, sandbox=sandbox, image_digest=settings.appworld_green_image_digest,
                      task_set=words, whole_split=whole, driver_custom=list(driver_custom or []),
                      paraphrase_set_digest=paraphrase_set_digest)


def rejudge_command(run_dir: Path | str) -> str:
    """The command that re-judges the run folder `run_dir`."""
    return f"appworld-green rejudge {shlex.quote(str(run_dir))}"
