"""A paraphrase set: other wordings of a world's tasks, and which one a battle gets.

A set is a JSONL file, one `Paraphrase` a line: the task id, its strength (`mild` synonyms and voice, `medium`
reordered and restructured, `strong` a persona and facts stated indirectly, `naturalistic` typos, abbreviations,
a casual register), the variant's number, the text, where it came from (`authored`, or the model that wrote it)
and the validity gate's verdict when it was written (`GateRecord`). The shipped world carries an authored set
(`AUTHORED_SET`, written by the world build from the task pack); `appworld-green paraphrase` writes one for any
world. Every line passes the gate again before any battle uses it (`green_agent.paraphrase.gate`): a line is
data, whoever wrote it.

`ParaphraseSet.choose(strength, task_id, trial, seed)` is the battle's wording: a pure function of (seed, task,
trial), as the fault plan's draw is, over the variants that passed the gate, in variant order; the same command
gives the same wording, and `--resume` keeps it. `digest` (the file's SHA-256) goes into the run's provenance.

Bad input (a file too large, a line that is not JSON, a field of the wrong type, the same (task, strength,
variant) twice) is refused with a `BadInputError` naming the line, before anything starts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kernel.bounded_json import JsonTooDeep, loads_bounded
from kernel.errors import BadInputError

Strength = Literal["mild", "medium", "strong", "naturalistic"]
STRENGTHS: tuple[Strength, ...] = get_args(Strength)
AUTHORED = "authored"
AUTHORED_SET = Path("paraphrases") / "authored.jsonl"
"""Where the world build writes the pack's authored set, under the world's data folder."""
MAX_SET_BYTES = 64 * 1024 * 1024
MAX_TEXT_CHARS = 4000


class GateRecord(BaseModel):
    """The validity gate's verdict on a line when it was written (re-checked before use)."""

    model_config = ConfigDict(extra="forbid")

    passed: bool = Field(description="Every check passed.")
    checks: list[str] = Field(default_factory=list, description="The checks run, by name.")
    reason: str | None = Field(default=None, description="Why it failed, in words (None: it passed).")
    entailment_model: str | None = Field(default=None, description=(
        "The model that judged two-way entailment (None: no model judged it)."))


class Paraphrase(BaseModel):
    """One wording of one task."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1, max_length=200, description="The AppWorld task id.")
    strength: Strength = Field(description="How far the wording moves from the original.")
    variant: int = Field(ge=1, le=1000, description="The variant's number within (task, strength), from 1.")
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS, description="What the agent is asked.")
    source: str = Field(min_length=1, max_length=200, description="`authored`, or the model that wrote it.")
    gate: GateRecord | None = Field(default=None, description="The gate's verdict when written (None: not yet).")


class ParaphraseSpec(BaseModel):
    """A run's paraphrase setting (`--paraphrase STRENGTH`, the A2A config's `"paraphrase"`): which strength,
    from which set, under which seed. Rides `BattleChoices.paraphrase`; None there: the original wording."""

    model_config = ConfigDict(extra="forbid")

    strength: Strength = Field(description="The strength every battle of the run is asked at.")
    seed: int = Field(default=0, description="Input of the variant choice (`choose_index`), with task and trial.")
    set_path: str | None = Field(default=None, description=(
        "The set file (None: the world's authored set, `AUTHORED_SET` under its data folder)."))


class ParaphraseChoice(BaseModel):
    """Which wording a battle ran: recorded in result.json, results.json rows and the trace."""

    strength: Strength
    variant: int = Field(ge=1)
    source: str = Field(description="`authored`, or the model that wrote it.")
    set_digest: str = Field(description="SHA-256 of the set file the wording came from.")


class ParaphraseSet:
    """The lines of one set file, indexed by (task, strength)."""

    def __init__(self, lines: Iterable[Paraphrase], digest: str, path: str = "") -> None:
        self.lines = list(lines)
        self.digest = digest
        self.path = path
        self._by_key: dict[tuple[str, str], list[Paraphrase]] = {}
        seen: set[tuple[str, str, int]] = set()
        for line in self.lines:
            key = (line.task_id, line.strength, line.variant)
            if key in seen:
                raise BadInputError(f"paraphrase set {path or '(memory)'}: {line.task_id} {line.strength} variant "
                                    f"{line.variant} appears twice")
            seen.add(key)
            self._by_key.setdefault((line.task_id, line.strength), []).append(line)
        for variants in self._by_key.values():
            variants.sort(key=lambda p: p.variant)

    def variants(self, task_id: str, strength: Strength) -> list[Paraphrase]:
        """The task's lines at that strength, in variant order (gated or not: the caller gates)."""
        return list(self._by_key.get((task_id, strength), []))

    def tasks(self) -> set[str]:
        return {task_id for task_id, _ in self._by_key}


def choose_index(count: int, seed: int, task_id: str, trial: int, strength: str) -> int:
    """Which of `count` variants a battle gets: a pure function of (seed, task, trial, strength)."""
    if count < 1:
        raise ValueError("no variant to choose from")
    digest = hashlib.sha256(f"paraphrase:{seed}:{task_id}:{trial}:{strength}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def parse_set(data: bytes, path: str = "") -> ParaphraseSet:
    """A set from a file's bytes (module docstring's errors)."""
    where = path or "(memory)"
    if len(data) > MAX_SET_BYTES:
        raise BadInputError(f"paraphrase set {where}: {len(data)} bytes, more than {MAX_SET_BYTES}")
    lines = []
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            lines.append(Paraphrase.model_validate(loads_bounded(raw.decode("utf-8"))))
        except (UnicodeDecodeError, json.JSONDecodeError, JsonTooDeep) as error:
            raise BadInputError(f"paraphrase set {where}, line {number}: not a JSON object ({error})") from None
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "(line)"
            raise BadInputError(f"paraphrase set {where}, line {number}: {field}: {first['msg']}") from None
    return ParaphraseSet(lines, hashlib.sha256(data).hexdigest(), path)


def load_set(path: Path) -> ParaphraseSet:
    """The set in `path` (BadInputError when missing, unreadable or malformed)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SET_BYTES + 1)
    except OSError as error:
        raise BadInputError(f"paraphrase set {path}: cannot read it ({error.strerror})") from None
    return parse_set(data, str(path))


def dump_lines(lines: Iterable[Paraphrase]) -> str:
    """The JSONL text of `lines` (one object a line, keys in field order)."""
    return "".join(line.model_dump_json(exclude_none=False) + "\n" for line in lines)
