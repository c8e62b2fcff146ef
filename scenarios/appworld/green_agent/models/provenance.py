"""Where a run's numbers come from, in one record: world, grader, interaction, sandbox, image, how to verify.

`Provenance` is written once into `run.json` when a run starts (`green_agent.batch.provenance.run_provenance`)
and repeated in `results.json`, the A2A artifact and the report header, so each says, beside its numbers,
which AppWorld judged them on which world with which rules, and the command that re-judges them
(`appworld-green rejudge`). `task_set` and `driver_custom` are what the standard rule
(`green_agent.batch.standard`) needs beyond the run's config: whether the task set is a whole split (a shard of
one counts as whole: the shards together are the split) and what a driver (an assessment) changed that the
run's config does not hold (a task subset, its step and turn limits).
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class GraderRecord(BaseModel):
    """Who graded: this package and the outcome rule's version."""

    appworld_green: str = Field(description="This package's version (the Green that judged).")
    outcome_rule: int = Field(description="Version of the outcome rule "
                              "(`green_agent.steps.judge.OUTCOME_RULE_VERSION`).")


class Provenance(BaseModel):
    """What produced a run's numbers (see the module docstring)."""

    appworld: str | None = Field(default=None, description="AppWorld package version that evaluated the battles.")
    world_digest: str | None = Field(default=None, description="sha256 of the world's data folder "
                                     "(`batch.world_digest.world_digest`).")
    task_pack: str | None = Field(default=None, description="Version of the offline task pack and builder (the "
                                  "digest in `data/.built`); None for a world not built from our pack.")
    grader: GraderRecord = Field(description="This package's version and the outcome rule's.")
    interaction: str = Field(description="tools | code.")
    sandbox: str | None = Field(default=None, description="Code mode: the isolation agent code ran under; None in "
                                "tools mode.")
    image_digest: str | None = Field(default=None, description="The container image's digest or revision when the "
                                     "Green runs in our image (APPWORLD_GREEN_IMAGE, set by the Dockerfile); None "
                                     "outside it.")
    task_set: str = Field(description="The task set in words (e.g. `the whole dev split`, `shard 2 of 3 of the "
                          "whole dev split`, `a list of 2 task(s)`).")
    whole_split: bool = Field(description="The task set is a whole split, or a shard of one.")
    driver_custom: list[str] = Field(default_factory=list, description=(
        "What the driver changed from the standard that the run's config does not hold (an assessment's task subset, "
        "step and turn limits), in words."))
    paraphrase_set_digest: str | None = Field(default=None, description=(
        "A paraphrase arm: SHA-256 of the paraphrase set its battles' wordings came from (None: the original "
        "wording)."))
    rejudge_command: str | None = Field(default=None, description="The command that re-judges the run's saved end "
                                        "states (filled where the run folder is known).")
