"""Standard or custom: may a run's numbers be compared with other runs' (a leaderboard row, `compare`)?

A run is **standard** when it used the defaults that make numbers comparable; `custom_settings` lists, in
words, each way a run differs from them (an empty list: standard):
- the task set is a split's whole task list (a shard of one counts: the shards together are the split);
- the scope policy is `advise` (under `enforce` the gateway refuses APIs outside a predicted scope);
- the scope predictor does not read the answer (`ground_truth` shows the agent the task's gold APIs);
- the deadline per battle is the shipped default (`DEFAULT_COMPLETION_DEADLINE_S`);
- the infra-retry rule is the shipped one (`DEFAULT_INFRA_RETRIES` retries of our own faults);
- in code mode, every battle's agent code ran in a real sandbox (bubblewrap or the landlock fallback), never
  as a plain process (`--unsafe-code-in-process`);
- no faults were injected (a reliability run's `--faults` makes it custom, naming the spec);
- the agent was asked in each task's own wording (a paraphrase arm, `--paraphrase`, makes it custom, naming the
  strength, the seed and the set's digest);
- whatever a driver recorded beside (an assessment's task subset, step and turn limits: `driver_custom`).
Trials, workers and the executor change no number's meaning and are not part of the rule.
"""

from __future__ import annotations

from collections.abc import Iterable

from green_agent.models.eval_run import RunConfig
from green_agent.models.provenance import Provenance
from kernel.settings import DEFAULT_COMPLETION_DEADLINE_S, DEFAULT_SCOPE_POLICY

DEFAULT_INFRA_RETRIES = 2
"""The shipped infra-retry rule: a battle that ended in an infrastructure error on our side is retried twice."""
REAL_SANDBOXES = ("bubblewrap sandbox", "landlock sandbox")
"""How `Isolation.summary` names the two real sandboxes (anything else: no sandbox)."""


def task_set_words(split: str | None, task_count: int, shard: tuple[int, int] | None = None) -> tuple[str, bool]:
    """The task set in words, and whether it is a whole split (or a shard of one)."""
    sharded = shard is not None and shard[1] > 1
    if split is None:
        if sharded:
            return f"shard {shard[0] + 1} of {shard[1]} of a task list, not a whole split", False
        return f"a list of {task_count} task(s), not a whole split", False
    if sharded:
        return f"shard {shard[0] + 1} of {shard[1]} of the whole {split} split", True
    return f"the whole {split} split", True


def sandbox_differences(interaction: str, isolations: Iterable[str | None]) -> list[str]:
    """Code mode: the isolations of the run's battles that are not a real sandbox, in words."""
    if interaction != "code":
        return []
    weak = sorted({i or "unknown isolation" for i in isolations if not (i or "").startswith(REAL_SANDBOXES)})
    return [f"agent code ran without a real sandbox ({i})" for i in weak]


def custom_settings(config: RunConfig, provenance: Provenance | None,
                    isolations: Iterable[str | None] = ()) -> list[str]:
    """Each way the run differs from a standard run, in words (see the module docstring); [] when standard."""
    found = []
    if provenance is None:
        if config.split is None:
            found.append("task set: a task list, not a whole split")
    elif not provenance.whole_split:
        found.append(f"task set: {provenance.task_set}")
    if config.scope_policy != DEFAULT_SCOPE_POLICY:
        found.append(f"scope policy {config.scope_policy} (standard: {DEFAULT_SCOPE_POLICY}): the gateway refused "
                     "APIs outside the predicted scope")
    if config.predictor == "ground_truth":
        found.append("scope predictor ground_truth: the agent was shown the task's gold APIs")
    if config.deadline_s != DEFAULT_COMPLETION_DEADLINE_S:
        found.append(f"deadline {config.deadline_s:g} s per battle (standard: {DEFAULT_COMPLETION_DEADLINE_S:g} s)")
    if config.max_infra_retries != DEFAULT_INFRA_RETRIES:
        found.append(f"{config.max_infra_retries} infra retries per battle (standard: {DEFAULT_INFRA_RETRIES})")
    found += sandbox_differences(config.interaction, isolations)
    if config.faults is not None:
        found.append(f"faults {config.faults.text()}: a reliability run, the gateway answered a planned share of "
                     "the apps' calls with a fault")
    if config.paraphrase is not None:
        found.append(f"paraphrase {config.paraphrase.strength} (seed {config.paraphrase.seed}, set "
                     f"{(config.paraphrase_set_digest or 'unknown')[:12]}): the agent was asked in another wording of "
                     "each task")
    if provenance is not None:
        found += provenance.driver_custom
    return found


def standard_sentence(standard: bool | None, custom: list[str]) -> str:
    """`standard run: ...` or `custom run: <differences>`, for summaries, the report and `compare`."""
    if standard is None:
        return "standard or custom: not recorded (a results.json written before it existed)"
    if standard:
        return "standard run: its numbers may be compared with other standard runs on the same split and world"
    return "custom run (compare with care): " + "; ".join(custom)
