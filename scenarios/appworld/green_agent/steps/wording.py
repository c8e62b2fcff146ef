"""The battle's wording: the original instruction, or one paraphrase of it (a reliability run's paraphrase arm).

`open_paraphrases(spec, world)` loads a run's set once (`ParaphraseSpec.set_path`, else the world's authored set,
`kernel.paraphrase_set.AUTHORED_SET` under its data folder) and keeps it for every battle of the process that
asks for the same file unchanged, so every battle of a run draws from one set, with one digest. Each task's lines
pass the validity gate (`green_agent.paraphrase.gate.usable_variants`) the first time a battle of it asks, and the
ones that fail are never used.

`choose_wording(paraphrases, task_id, trial)` is the battle's wording: the variant `choose_index(count, seed,
task, trial, strength)` picks among the usable ones (a pure function: the same command and `--resume` give the
same wording), with its `ParaphraseChoice` (recorded in result.json, the results row and the trace). A task with
no usable variant at the strength is bad input (`BadInputError` naming the task, the strength and the set),
raised in step 1, before the world is touched.

What the wording changes is only what the agent reads (the task message, the gateway's answer to
`supervisor.show_active_task`); the world, the scope predictor's input and AppWorld's evaluator are untouched.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from pydantic import BaseModel, Field

from green_agent.paraphrase.gate import usable_variants
from kernel.errors import BadInputError
from kernel.paraphrase_set import (AUTHORED_SET, Paraphrase, ParaphraseChoice, ParaphraseSet, ParaphraseSpec,
                                   choose_index, load_set)
from kernel.world_data import WorldData

_MAX_CACHED_SETS = 8


class BattleWording(BaseModel):
    """What the agent is asked, and which paraphrase it is."""

    text: str = Field(description="The instruction as the agent reads it.")
    choice: ParaphraseChoice = Field(description="The paraphrase (strength, variant, source, set digest).")


class RunParaphrases:
    """One set, gated per task on first use, for the battles of one spec (thread-safe: an eval's workers share it)."""

    def __init__(self, spec: ParaphraseSpec, paraphrases: ParaphraseSet, world: WorldData) -> None:
        self.spec, self.set, self.world = spec, paraphrases, world
        self._usable: dict[str, list[Paraphrase]] = {}
        self._lock = threading.Lock()

    @property
    def digest(self) -> str:
        return self.set.digest

    def usable(self, task_id: str) -> list[Paraphrase]:
        """The task's lines at the spec's strength that pass the gate now, in variant order (gated once)."""
        with self._lock:
            if task_id not in self._usable:
                self._usable[task_id] = usable_variants(self.set, self.world, task_id, self.spec.strength)
            return list(self._usable[task_id])

    def check_tasks(self, task_ids: list[str]) -> None:
        """BadInputError naming every task with no usable variant (an eval checks its whole task set first)."""
        missing = [t for t in task_ids if not self.usable(t)]
        if missing:
            raise BadInputError(_none_usable(missing, self.spec, self.set.path))


def set_path(spec: ParaphraseSpec, world: WorldData) -> Path:
    """The file the spec names, or the world's authored set."""
    return Path(spec.set_path).expanduser() if spec.set_path else world.data / AUTHORED_SET


_cache: dict[tuple[str, int, int, str, int], RunParaphrases] = {}
_cache_lock = threading.Lock()


def open_paraphrases(spec: ParaphraseSpec, world: WorldData) -> RunParaphrases:
    """The spec's set, loaded once per process while the file is unchanged (BadInputError: missing, malformed)."""
    path = set_path(spec, world)
    try:
        stat = os.stat(path)
    except OSError as error:
        where = "--paraphrase-set" if spec.set_path else "the world's authored set (rebuild the world, or give " \
                                                         "--paraphrase-set FILE)"
        raise BadInputError(f"paraphrase set {path}: cannot read it ({error.strerror}); {where}") from None
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, spec.strength, spec.seed)
    with _cache_lock:
        found = _cache.get(key)
        if found is not None and found.world.root == world.root:
            return found
        opened = RunParaphrases(spec, load_set(path), world)
        if len(_cache) >= _MAX_CACHED_SETS:
            _cache.pop(next(iter(_cache)))
        _cache[key] = opened
        return opened


def choose_wording(paraphrases: RunParaphrases, task_id: str, trial: int) -> BattleWording:
    """The battle's paraphrase (module docstring); BadInputError when the task has no usable variant."""
    spec = paraphrases.spec
    variants = paraphrases.usable(task_id)
    if not variants:
        raise BadInputError(_none_usable([task_id], spec, paraphrases.set.path))
    line = variants[choose_index(len(variants), spec.seed, task_id, trial, spec.strength)]
    return BattleWording(text=line.text, choice=ParaphraseChoice(
        strength=spec.strength, variant=line.variant, source=line.source, set_digest=paraphrases.digest))


def _none_usable(task_ids: list[str], spec: ParaphraseSpec, path: str) -> str:
    shown = ", ".join(task_ids[:5]) + (f" and {len(task_ids) - 5} more" if len(task_ids) > 5 else "")
    return (f"--paraphrase {spec.strength}: no usable paraphrase of task(s) {shown} at strength {spec.strength} in "
            f"{path or 'the set'} (none written, or every one failed the validity gate); add one or leave the "
            "task out")
