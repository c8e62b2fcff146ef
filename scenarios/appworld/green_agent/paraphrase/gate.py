"""The validity gate: a paraphrase is used only when it keeps every fact its task depends on and adds none.

Contract (deterministic, no model; `facts.py` says how a text's facts are read):
- `task_facts(world, task_id)` -> `TaskFacts`: the facts of the task's original instruction that a paraphrase must
  keep: every literal (quoted string, path, e-mail), time, month, weekday and number (by value), and the names the
  instruction shares with the task's ground truth (its answer, private and public data, the reference solution,
  the supervisor's profile) or that name one of its required apps (`Simple Note`, `phone`); plus the words a
  paraphrase may use in a name without adding one (the instruction's own words, the supervisor's names).
- `check_paraphrase(line, original, facts)` -> `GateRecord`, checks in order: `not_empty`, `not_original`
  (case, spacing and punctuation ignored), `facts_kept` (literals verbatim; names as whole words, case ignored;
  numbers, times, months, weekdays by value), `no_added_facts` (no number, amount, time, month, weekday, literal
  or multi-word capitalised name that the original does not state). The reason names the fact: "dropped the
  amount 30", "changed amount: 30 -> 35", "dropped the name 'Ann Lee'", "added the number 5 (not in the
  original)".
- `usable_variants(set, world, task_id, strength)`: the lines of that task and strength whose recorded gate did not
  fail (a model's entailment verdict included) and that pass `check_paraphrase` now, in variant order.
What it cannot catch: a changed relation between kept facts ("before" -> "after", "every" -> "some", a negation),
dates moved between kept parts, an added constraint in lower-case words; the model's two-way entailment judgement
(`generate.py`) is the check for those, when a model is available.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, Field

from kernel.paraphrase_set import GateRecord, Paraphrase, ParaphraseSet, Strength
from kernel.world_data import WorldData
from green_agent.paraphrase.facts import Fact, TextFacts, normalise, read_text

CHECKS = ["not_empty", "not_original", "facts_kept", "no_added_facts"]
_KIND_WORD = {"number": "number", "amount": "amount", "month": "month", "weekday": "weekday", "time": "time",
              "literal": "quoted text", "name": "name"}
_VALUE_KINDS = ("number", "amount")


class TaskFacts(BaseModel):
    """What a paraphrase of one task must keep, and the words it may use in names."""

    task_id: str = Field(description="The task.")
    facts: list[Fact] = Field(default_factory=list, description="Facts of the original a paraphrase must keep.")
    known_words: list[str] = Field(default_factory=list, description=(
        "Lower-case words a paraphrase's names may use without adding a name (the original's, the supervisor's)."))


def task_facts(world: WorldData, task_id: str) -> TaskFacts:
    """The facts the task depends on (module docstring)."""
    spec = world.task(task_id)
    truth = world.ground_truth(task_id)
    read = read_text(spec.instruction)
    truth_words = _words(json.dumps([truth.answer, truth.private_data, truth.public_data, spec.supervisor]))
    truth_words |= _words(truth.solution)
    apps = {app.replace("_", " ").lower() for app in truth.required_apps}
    names = [name for name in read.names if _is_task_name(name, truth_words, apps)]
    names += [Fact(kind="name", value=app, text=app) for app in sorted(apps)
              if _has_words(normalise(spec.instruction), app) and all(app != n.value for n in names)]
    supervisor_words = _words(" ".join(str(spec.supervisor.get(key, "")) for key in ("first_name", "last_name")))
    known = _words(spec.instruction) | supervisor_words
    return TaskFacts(task_id=task_id, facts=_unique(read.facts + names), known_words=sorted(known))


def check_paraphrase(line: Paraphrase, original: str, facts: TaskFacts) -> GateRecord:
    """The deterministic gate's verdict on `line` (module docstring)."""
    text = normalise(line.text)
    reason = None
    if not text:
        reason = "empty"
    elif _bare(text) == _bare(original):
        reason = "identical to the original (up to case, spacing and punctuation)"
    else:
        reason = _fact_problem(text, facts)
    return GateRecord(passed=reason is None, checks=list(CHECKS), reason=reason)


def usable_variants(paraphrases: ParaphraseSet, world: WorldData, task_id: str, strength: Strength) -> list[Paraphrase]:
    """The lines of (task, strength) that pass the gate now, in variant order (module docstring)."""
    lines = [line for line in paraphrases.variants(task_id, strength) if line.gate is None or line.gate.passed]
    if not lines:
        return []
    original = world.task(task_id).instruction
    facts = task_facts(world, task_id)
    return [line for line in lines if check_paraphrase(line, original, facts).passed]


def _fact_problem(text: str, facts: TaskFacts) -> str | None:
    """The first fact dropped, changed or added, in words; None when every fact is kept and none added."""
    found = read_text(text)
    kept = _values(found)
    dropped = [fact for fact in facts.facts if not _kept(fact, text, kept)]
    original = {(_family(f.kind), f.value) for f in facts.facts}
    added = [fact for fact in found.facts
             if (_family(fact.kind), fact.value) not in original and not _wraps_literal(fact, facts)]
    added += [name for name in found.names if _adds_name(name, facts)]
    for fact in dropped:
        twin = next((a for a in added if _family(a.kind) == _family(fact.kind)), None)
        if twin is not None:
            return f"changed {_KIND_WORD[fact.kind]}: {_shown(fact)} -> {_shown(twin)}"
    if dropped:
        return f"dropped the {_KIND_WORD[dropped[0].kind]} {_shown(dropped[0])}"
    if added:
        return f"added the {_KIND_WORD[added[0].kind]} {_shown(added[0])} (not in the original)"
    return None


def _kept(fact: Fact, text: str, kept: set[tuple[str, str]]) -> bool:
    if fact.kind == "literal":
        return fact.value in text
    if fact.kind == "name":
        return _has_words(text, fact.value)
    return (_family(fact.kind), fact.value) in kept


def _wraps_literal(fact: Fact, facts: TaskFacts) -> bool:
    """A quoted span of the paraphrase around one of the original's literals adds nothing (`"the 'x' note"`)."""
    return fact.kind == "literal" and any(f.kind == "literal" and f.value in fact.value for f in facts.facts)


def _adds_name(name: Fact, facts: TaskFacts) -> bool:
    """A name of the paraphrase adds one when it has a word neither the original nor the supervisor uses."""
    known = set(facts.known_words)
    return len(name.value.split()) > 1 and any(word not in known for word in name.value.split())


def _is_task_name(name: Fact, truth_words: set[str], apps: set[str]) -> bool:
    return name.value in apps or all(word in truth_words for word in name.value.split())


def _values(found: TextFacts) -> set[tuple[str, str]]:
    return {(_family(fact.kind), fact.value) for fact in found.facts}


def _family(kind: str) -> str:
    return "number" if kind in _VALUE_KINDS else kind


def _shown(fact: Fact) -> str:
    if fact.kind in ("literal", "name"):
        return repr(fact.text)
    return fact.value if fact.kind in _VALUE_KINDS else fact.text


def _words(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"[A-Za-z]+", text)}


def _has_words(text: str, words: str) -> bool:
    pattern = r"\s+".join(re.escape(word) for word in words.split())
    return re.search(rf"(?<![\w]){pattern}(?![\w])", text, re.IGNORECASE) is not None


def _bare(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", normalise(text).lower()).split())


def _unique(facts: list[Fact]) -> list[Fact]:
    """One fact per (family, value), the first as written (an amount `$30` and a number `30` are one)."""
    first: dict[tuple[str, str], Fact] = {}
    for fact in facts:
        first.setdefault((_family(fact.kind), fact.value), fact)
    return list(first.values())
