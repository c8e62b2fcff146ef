"""The fault spec of a reliability run: which share of the apps' calls the gateway answers with a fault.

One spec rides every front door that takes a battle's settings (`battle|eval|reliability --faults SPEC`, the
assessment config's `"faults"` object) to the gateway, which alone draws and applies the plan
(`mcp_gateway.faults`). The text form is `rate=R,seed=S[,kinds=K1+K2+...][,timeout_s=T][,max_consecutive=M][,salt=HEX]`;
the config form is the same keys as a JSON object. Kinds (docs/reliability.md says what each stands for):
- `error`: 503, the service is temporarily unavailable;
- `rate_limit`: 429, with a retry-after in seconds in the body;
- `timeout`: the call waits `timeout_s`, then fails as a timed-out request (504);
- `empty` (opt-in, silent): a GET whose docs answer a list answers `[]`;
- `malformed` (opt-in): the answer is cut short and is not valid JSON;
- `lost_response` (opt-in): a call that changes state is forwarded and changes the world, and the agent receives
  a timeout (504) instead of the answer, as when a real API times out after committing: the one kind that touches
  the world, by design (a blind repeat double-writes).
A fault is silent when the agent is not told (an `empty` page; a `malformed` answer in tools mode, a 200), loud
when it gets an error; the gateway marks each delivered fault so (`kernel.call_record.InjectedFault.silent`).

The plan also draws on the run's secret, `salt` (`new_salt`: 256 bits from the operating system), so no agent can
predict it from the published seed: a spec with a salt records only its commitment (`commitment`, the salt's
SHA-256) wherever it is written (the field is excluded from every dump), the gateway alone receives the salt
(`wire`), and the run publishes it apart once it is over; `salt=HEX` in the text form reproduces a published run.

Bad input (an unknown kind or key, a rate outside (0, 1], a seed that is not an integer) is refused with a
`BadInputError` naming the bad part, before anything starts.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator, model_validator

from kernel.errors import BadInputError

FaultKind = Literal["error", "rate_limit", "timeout", "empty", "malformed", "lost_response"]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)
DEFAULT_KINDS: tuple[FaultKind, ...] = ("error", "rate_limit", "timeout")
FORWARDED_KINDS: tuple[FaultKind, ...] = ("lost_response",)
"""Kinds whose call still reaches the world (the rest are answered by the gateway alone)."""
DEFAULT_TIMEOUT_S = 5.0
MAX_TIMEOUT_S = 15.0
"""The most one faulted call may hold a battle: the forwarder's own read timeout (a real hung call ends there), below
AgentBeats SDK agents' 20 s MCP call timeout and the gateway's 30 s drain at the episode's end, well inside code
mode's 100 s execution limit."""
DEFAULT_MAX_CONSECUTIVE = 2
SPEC_KEYS = ("rate", "seed", "kinds", "timeout_s", "max_consecutive", "salt")
SALT_BYTES = 32
"""A run's secret: 256 bits (the issue asks 128 or more)."""
SALT_PATTERN = r"^[0-9a-f]{32,128}$"
COMMITMENT_PATTERN = r"^[0-9a-f]{64}$"


def new_salt() -> str:
    """A fresh secret for a run's plan, from the operating system's random source (hex)."""
    return secrets.token_hex(SALT_BYTES)


def salt_commitment(salt: str) -> str:
    """The commitment a run records when it starts: the salt's SHA-256 (hex)."""
    return hashlib.sha256(salt.encode("ascii")).hexdigest()


class FaultSpec(BaseModel):
    """A seeded fault plan's parameters (the gateway draws the plan from them, `mcp_gateway.faults.plan`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rate: float = Field(gt=0, le=1, description="Share of faultable calls answered with a fault, in (0, 1].")
    seed: StrictInt = Field(description="Seed of the plan: the same seed faults the same calls the same way.")
    kinds: tuple[FaultKind, ...] = Field(default=DEFAULT_KINDS, min_length=1, description=(
        "Kinds drawn from, uniformly among those a call admits (error, rate_limit, timeout; opt-in empty, "
        "malformed, lost_response)."))
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S, description=(
        "How long a `timeout` fault holds the call before it fails."))
    max_consecutive: int = Field(default=DEFAULT_MAX_CONSECUTIVE, ge=1, le=100, description=(
        "The same API is never faulted more than this many times in a row (a retrying agent gets through)."))
    salt: str | None = Field(default=None, exclude=True, repr=False, pattern=SALT_PATTERN, description=(
        "The run's secret the plan draws on (hex, 128-512 bits). Never written with the spec: only the gateway "
        "receives it (`wire`) and the run publishes it apart once it is over."))
    commitment: str | None = Field(default=None, pattern=COMMITMENT_PATTERN, description=(
        "SHA-256 of the salt, recorded when the run starts, so the salt published at the end can be checked."))

    @model_validator(mode="before")
    @classmethod
    def _commit(cls, value: Any) -> Any:
        """A given salt fixes the commitment; one given beside it must match."""
        if isinstance(value, dict) and isinstance(value.get("salt"), str):
            committed = salt_commitment(value["salt"])
            if value.get("commitment") not in (None, committed):
                raise ValueError("the salt does not match the commitment")
            value = {**value, "commitment": committed}
        return value

    @field_validator("kinds", mode="before")
    @classmethod
    def _plus_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split("+"))
        return value

    @field_validator("kinds")
    @classmethod
    def _distinct(cls, value: tuple[FaultKind, ...]) -> tuple[FaultKind, ...]:
        if len(set(value)) != len(value):
            raise ValueError("a kind is named twice")
        return value

    def text(self) -> str:
        """The spec's public parameters in text form, every key written (what `custom`, the report and the run's
        fingerprint name); never the salt."""
        return (f"rate={self.rate:g},seed={self.seed},kinds={'+'.join(self.kinds)},timeout_s={self.timeout_s:g},"
                f"max_consecutive={self.max_consecutive}")

    def salted(self) -> "FaultSpec":
        """This spec with a salt: its own, or a fresh one (`new_salt`)."""
        return self if self.salt is not None else self.with_salt(new_salt())

    def with_salt(self, salt: str) -> "FaultSpec":
        """This spec with `salt`; BadInputError if it is not a salt or does not match the recorded commitment."""
        return fault_spec_from({**self.model_dump(), "salt": salt}, "salt")

    def wire(self) -> dict[str, Any]:
        """The spec as the gateway's control route receives it: the salt included (only the gateway's)."""
        return {**self.model_dump(mode="json"), "salt": self.salt}


def parse_fault_spec(text: str, where: str = "--faults") -> FaultSpec:
    """`rate=R,seed=S[,kinds=...][,timeout_s=T][,max_consecutive=M][,salt=HEX]` -> a FaultSpec; BadInputError naming the bad part."""
    if not isinstance(text, str) or not text.strip():
        raise BadInputError(f"{where}: expected rate=R,seed=S[,kinds=K1+K2][,timeout_s=T][,max_consecutive=M]")
    if len(text) > 500:
        raise BadInputError(f"{where}: the spec is too long ({len(text)} characters)")
    fields: dict[str, Any] = {}
    for part in text.split(","):
        key, eq, value = part.strip().partition("=")
        if not eq or not key:
            raise BadInputError(f"{where}: {part.strip()[:40]!r} is not KEY=VALUE")
        if key not in SPEC_KEYS:
            raise BadInputError(f"{where}: unknown key {key[:40]!r} (keys: {', '.join(SPEC_KEYS)})")
        if key in fields:
            raise BadInputError(f"{where}: {key} is given twice")
        fields[key] = _typed(key, value.strip(), where)
    return fault_spec_from(fields, where)


def fault_spec_from(value: Any, where: str = "faults") -> FaultSpec:
    """A FaultSpec from a mapping (the assessment config's `"faults"` object); BadInputError naming the bad part."""
    if isinstance(value, FaultSpec):
        return value
    if not isinstance(value, dict):
        raise BadInputError(f"{where}: expected an object with rate and seed, got {type(value).__name__}")
    try:
        return FaultSpec.model_validate(value)
    except ValidationError as exc:
        raise BadInputError(f"{where}: {describe_error(exc)}") from None


def describe_error(exc: ValidationError) -> str:
    """The first problem of a FaultSpec validation, in words naming the bad part."""
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"]]
    key = loc[0] if loc else "spec"
    given = error.get("input")
    if error["type"] == "extra_forbidden":
        return f"unknown key {key[:40]!r} (keys: {', '.join(SPEC_KEYS)})"
    if error["type"] == "missing":
        return f"{key} is required"
    if key == "kinds" and error["type"] == "literal_error":
        return f"unknown kind {str(given)[:40]!r} (kinds: {', '.join(FAULT_KINDS)})"
    if key == "rate":
        shown = f"{given:g}" if isinstance(given, float) else str(given)[:40]
        return f"rate must be in (0, 1], got {shown}"
    if key == "seed":
        return f"seed must be an integer, got {str(given)[:40]!r}"
    if key == "salt":
        return "salt must be 32-128 lowercase hex characters (the secret a finished run published)"
    if key == "commitment" or (not loc and "commitment" in error["msg"]):
        return "the salt does not match the run's commitment (its SHA-256 recorded when the run started)"
    return f"{key}: {error['msg']}"


def _typed(key: str, value: str, where: str) -> Any:
    """A text value as its key's type (kinds stay text: the model splits them)."""
    if key in ("kinds", "salt"):
        return value
    try:
        return int(value) if key in ("seed", "max_consecutive") else float(value)
    except ValueError:
        kind = "an integer" if key in ("seed", "max_consecutive") else "a number"
        raise BadInputError(f"{where}: {key} must be {kind}, got {value[:40]!r}") from None
