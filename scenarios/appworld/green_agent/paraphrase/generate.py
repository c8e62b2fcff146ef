"""A paraphrase set written by a model, every line gated (the logic behind `appworld-green paraphrase`).

Contract:
- `generate_set(world, task_ids, strengths, variants, chat, model)`: per (task, strength) one chat call asks for
  `variants` wordings of the task's instruction at that strength (the field's definitions, `STRENGTH_GUIDE`),
  answered as JSON `{"paraphrases": [...]}`. Every wording becomes one `Paraphrase` line (source: the model's
  name) with its `GateRecord`: the deterministic gate (`gate.check_paraphrase`) first; a line that passes it is
  then judged by the same model for two-way entailment ("does A entail B and B entail A"), recorded as
  `entailment_model`. A rejected line stays in the set with `passed: false` and its reason, so the rejection
  rate is computable from the file (and `usable_variants` never uses it). A reply that is not the JSON asked for
  gives rejected lines saying so; a missing wording is a rejected line too (the set always has `variants` lines
  per (task, strength)).
- `summarise(lines)` -> `SetSummary`: lines, rejected, rejection rate, per strength, reasons by count.
`chat(messages) -> str` is the only seam to the model (the command builds it over the `openai` package).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from kernel.paraphrase_set import MAX_TEXT_CHARS, GateRecord, Paraphrase, Strength
from kernel.world_data import WorldData
from green_agent.paraphrase.gate import CHECKS, check_paraphrase, task_facts

Chat = Callable[[list[dict[str, str]]], str]
ENTAILMENT_CHECK = "two_way_entailment"
STRENGTH_GUIDE: dict[str, str] = {
    "mild": "synonyms and a change of voice; keep the sentence order and most words.",
    "medium": "reorder and restructure the sentences; mostly the same words.",
    "strong": "a persona (the user introduces themselves and their situation) restating the request indirectly.",
    "naturalistic": "a casual register: lower case, abbreviations such as pls or w/, and a couple of typos in "
                    "ordinary words.",
}
RULES = (
    "Keep every fact literally: each quoted string exactly (same characters), every number in digits, every date, "
    "time, amount, file path, and the names of people, apps, items and places, spelled exactly, with no typos in "
    "them. Add nothing: no new number, name, date or condition. Do not answer the task. Reply with JSON only: "
    '{"paraphrases": ["...", ...]}.'
)
ENTAILMENT_PROMPT = (
    "A and B are two requests a user could give an assistant that acts in their apps. Does A entail B and does B "
    "entail A, i.e. does doing one exactly do the other (same actions, same facts, same constraints, same answer)? "
    'Reply with JSON only: {"a_entails_b": true|false, "b_entails_a": true|false, "why": "one short sentence"}.'
)


class StrengthSummary(BaseModel):
    lines: int = Field(description="Lines at this strength.")
    rejected: int = Field(description="Of which the gate rejected.")


class SetSummary(BaseModel):
    """What `paraphrase` stores beside the set (`<out>.summary.json`) and prints."""

    lines: int = Field(description="Lines written.")
    rejected: int = Field(description="Lines whose gate record failed.")
    rejection_rate: float = Field(description="rejected / lines (0 for an empty set).")
    by_strength: dict[str, StrengthSummary] = Field(default_factory=dict, description="The same per strength.")
    reasons: dict[str, int] = Field(default_factory=dict, description="Rejection reasons, by count.")
    model: str | None = Field(default=None, description="The model that wrote and judged the lines.")


def generate_set(world: WorldData, task_ids: Sequence[str], strengths: Sequence[Strength], variants: int,
                 chat: Chat, model: str) -> list[Paraphrase]:
    """The set's lines, in (task, strength, variant) order (module docstring)."""
    lines = []
    for task_id in task_ids:
        original = world.task(task_id).instruction
        facts = task_facts(world, task_id)
        for strength in strengths:
            texts, problem = _ask(chat, original, strength, variants)
            for variant in range(1, variants + 1):
                text = texts[variant - 1] if variant <= len(texts) else ""
                line = Paraphrase(task_id=task_id, strength=strength, variant=variant,
                                  text=(text or "(none)")[:MAX_TEXT_CHARS], source=model)
                gate = (GateRecord(passed=False, checks=list(CHECKS), reason=problem or "the model gave no wording")
                        if not text.strip() else check_paraphrase(line, original, facts))
                if gate.passed:
                    gate = _judge(chat, model, original, line.text)
                lines.append(line.model_copy(update={"gate": gate}))
    return lines


def summarise(lines: Sequence[Paraphrase], model: str | None = None) -> SetSummary:
    """Counts and the rejection rate of a set's lines (a line without a gate record counts as unrejected)."""
    rejected = [line for line in lines if line.gate is not None and not line.gate.passed]
    by_strength: dict[str, StrengthSummary] = {}
    for line in lines:
        entry = by_strength.setdefault(line.strength, StrengthSummary(lines=0, rejected=0))
        entry.lines += 1
        entry.rejected += int(line in rejected)
    reasons = Counter(line.gate.reason or "" for line in rejected if line.gate is not None)
    return SetSummary(lines=len(lines), rejected=len(rejected), rejection_rate=len(rejected) / len(lines) if lines
                      else 0.0, by_strength=by_strength, reasons=dict(reasons.most_common()), model=model)


def _ask(chat: Chat, original: str, strength: str, variants: int) -> tuple[list[str], str | None]:
    """The model's wordings, or ([], why not)."""
    messages = [
        {"role": "system", "content": "You rewrite task requests without changing their meaning. " + RULES},
        {"role": "user", "content": f"Strength: {strength}: {STRENGTH_GUIDE[strength]}\nWrite {variants} "
                                    f"different wording(s) of this request.\nRequest: {original}"},
    ]
    reply = _json_of(chat(messages))
    wordings = reply.get("paraphrases") if isinstance(reply, dict) else None
    if not isinstance(wordings, list) or not all(isinstance(text, str) for text in wordings):
        return [], 'the model\'s reply was not {"paraphrases": [strings]}'
    return [text.strip() for text in wordings], None


def _judge(chat: Chat, model: str, original: str, paraphrase: str) -> GateRecord:
    """The model's two-way entailment verdict on a line the deterministic checks passed."""
    messages = [{"role": "system", "content": ENTAILMENT_PROMPT},
                {"role": "user", "content": f"A: {original}\nB: {paraphrase}"}]
    reply = _json_of(chat(messages))
    checks = [*CHECKS, ENTAILMENT_CHECK]
    if not isinstance(reply, dict) or not isinstance(reply.get("a_entails_b"), bool) \
            or not isinstance(reply.get("b_entails_a"), bool):
        return GateRecord(passed=False, checks=checks, reason="entailment: the model's verdict was not the JSON asked",
                          entailment_model=model)
    failed = [name for name, key in (("the original does not entail it", "a_entails_b"),
                                     ("it does not entail the original", "b_entails_a")) if not reply[key]]
    why = str(reply.get("why") or "")[:200]
    reason = f"entailment: {' and '.join(failed)}" + (f" ({why})" if why else "") if failed else None
    return GateRecord(passed=not failed, checks=checks, reason=reason, entailment_model=model)


def _json_of(text: str) -> object:
    """The JSON object in a reply (a ```json fence around it is tolerated); None when there is none."""
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    try:
        return json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        return None
