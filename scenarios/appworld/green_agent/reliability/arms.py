"""The arms of a reliability profile, from what was asked: a fault sweep and paraphrase strengths.

One place parses both doors' forms (the command line's text, the A2A config's JSON) into `ArmSpec`s; every error
is a BadInputError naming the key (`--faults`, `--paraphrase`, `config.faults`, `config.paraphrase`):
- faults: a fault spec whose `rate` may be a sweep, `rate=0.1+0.2+0.3` (the config: `"rate": [0.1, 0.2]` or
  `"rate": "0.1+0.2"`): one arm per rate, every other key the same, named `faults-rate<R>`;
- paraphrase: strengths as a `+` list (`mild+strong`) or a JSON list, each its own arm, `paraphrase-<strength>`,
  with the run's paraphrase seed and set (`kernel.paraphrase_set.ParaphraseSpec`).
A rate or strength given twice is refused. Arms run in the order given: the sweep, then the strengths.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from green_agent.models.reliability_profile import ArmAxis
from kernel.errors import BadInputError
from kernel.fault_spec import FaultSpec, fault_spec_from, parse_fault_spec
from kernel.paraphrase_set import STRENGTHS, ParaphraseSpec, Strength

MAX_ARMS = 12


class ArmSpec(BaseModel):
    """One arm: its folder name and the one perturbation it runs under."""

    name: str = Field(description="Its folder under the profile's.")
    axis: ArmAxis = Field(description="What it perturbs.")
    faults: FaultSpec | None = Field(default=None, description="faults: the spec (the run's shared salt added later).")
    paraphrase: ParaphraseSpec | None = Field(default=None, description="paraphrase: the strength, seed and set.")


def _rates(text: str, where: str) -> list[float]:
    rates = []
    for part in text.split("+"):
        try:
            rates.append(float(part))
        except ValueError:
            raise BadInputError(f"{where}: rate must be a number or a sweep R1+R2+..., got {part.strip()[:40]!r}") \
                from None
    return rates


def _distinct(values: list[Any], what: str, where: str) -> None:
    seen = [v for i, v in enumerate(values) if v in values[:i]]
    if seen:
        raise BadInputError(f"{where}: {what} {seen[0]} is given twice")
    if len(values) > MAX_ARMS:
        raise BadInputError(f"{where}: at most {MAX_ARMS} arms, got {len(values)}")


def fault_sweep(text: str, where: str = "--faults") -> list[FaultSpec]:
    """`rate=R1+R2,seed=S,...` -> one spec per rate (each checked as a spec, naming `where`)."""
    if not isinstance(text, str) or not text.strip():
        return [parse_fault_spec(text, where)]
    parts = [p.strip() for p in text.split(",")]
    rate = next((p for p in parts if p.startswith("rate=")), None)
    if rate is None or "+" not in rate:
        return [parse_fault_spec(text, where)]
    rates = _rates(rate[len("rate="):], where)
    _distinct(rates, "rate", where)
    return [parse_fault_spec(",".join(f"rate={r!r}" if p == rate else p for p in parts), where) for r in rates]


def fault_sweep_from(value: Any, where: str = "config.faults") -> list[FaultSpec]:
    """The A2A config's `"faults"` object, whose `"rate"` may be a list or a `+` string -> one spec per rate."""
    if not isinstance(value, dict) or not isinstance(value.get("rate"), (list, str)):
        return [fault_spec_from(value, where)]
    given = value["rate"]
    rates = _rates(given, where) if isinstance(given, str) else given
    if not rates or not all(isinstance(r, (int, float)) and not isinstance(r, bool) for r in rates):
        raise BadInputError(f"{where}: rate must be a number or a list of numbers")
    _distinct(list(rates), "rate", where)
    return [fault_spec_from({**value, "rate": r}, where) for r in rates]


def strengths(value: Any, where: str = "--paraphrase") -> list[Strength]:
    """`mild+strong` or `["mild", "strong"]` -> the strengths; BadInputError naming an unknown one."""
    items = value.split("+") if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise BadInputError(f"{where}: expected strengths as S1+S2 or a list ({', '.join(STRENGTHS)})")
    found: list[Strength] = []
    for item in items:
        name = item.strip() if isinstance(item, str) else item
        if name not in STRENGTHS:
            raise BadInputError(f"{where}: unknown strength {str(name)[:40]!r} (strengths: {', '.join(STRENGTHS)})")
        found.append(name)
    _distinct(found, "strength", where)
    return found


def build_arms(faults: list[FaultSpec], paraphrase: list[Strength], seed: int = 0,
               set_path: str | None = None) -> list[ArmSpec]:
    """The arms in run order: one per fault rate, then one per strength."""
    arms = [ArmSpec(name=f"faults-rate{spec.rate:g}", axis="faults", faults=spec) for spec in faults]
    arms += [ArmSpec(name=f"paraphrase-{s}", axis="paraphrase",
                     paraphrase=ParaphraseSpec(strength=s, seed=seed, set_path=set_path)) for s in paraphrase]
    _distinct([a.name for a in arms], "arm", "arms")
    if not arms:
        raise BadInputError("reliability: give --faults and/or --paraphrase (an arm to measure against the baseline)")
    return arms
