"""What a purple may report it spent, in its A2A replies' metadata, and how the Green reads it.

The key (docs/a2a.md, "Cost per task"): a reply (`Message.metadata`, or a task's
`status.message.metadata` / `Task.metadata`) may carry

    "usage": {"model": "gpt-4o-mini", "input_tokens": 1234, "output_tokens": 56, "cost_usd": 0.0011}

for the model calls behind that one reply (every key optional but at least one of the token counts or
`cost_usd`; tokens are the OpenAI API's `prompt_tokens`/`completion_tokens`). It is the purple's word:
the Green sums it per battle and shows it beside the verdict, never in it. A value that is negative,
not a number, or over the bounds below is refused with a one-line reason and the battle's cost becomes
unknown (None), never 0 and never a changed verdict. A reply without `usage` is unknown too.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, Field

USAGE_KEY = "usage"
MAX_TOKENS_PER_REPLY = 10_000_000
MAX_COST_PER_REPLY_USD = 100.0
MAX_MODEL_CHARS = 100


class ReplyUsage(BaseModel):
    """One reply's reported usage, validated."""

    model: str | None = Field(default=None, max_length=MAX_MODEL_CHARS)
    input_tokens: int | None = Field(default=None, ge=0, le=MAX_TOKENS_PER_REPLY)
    output_tokens: int | None = Field(default=None, ge=0, le=MAX_TOKENS_PER_REPLY)
    cost_usd: float | None = Field(default=None, ge=0, le=MAX_COST_PER_REPLY_USD)


class UsageRefused(ValueError):
    """The reported usage is not acceptable; the message says which key and why (no purple text quoted)."""


def usage_metadata(model: str | None, input_tokens: int | None, output_tokens: int | None,
                   cost_usd: float | None = None) -> dict[str, Any]:
    """The metadata a purple attaches to a reply (keys with None left out)."""
    usage = {"model": model, "input_tokens": input_tokens, "output_tokens": output_tokens, "cost_usd": cost_usd}
    return {USAGE_KEY: {k: v for k, v in usage.items() if v is not None}}


def read_usage(metadata: Any) -> ReplyUsage | None:
    """A reply's usage (None: it reported none); raises UsageRefused for a bad one."""
    if not isinstance(metadata, dict) or USAGE_KEY not in metadata:
        return None
    raw = metadata[USAGE_KEY]
    if not isinstance(raw, dict):
        raise UsageRefused(f"`{USAGE_KEY}` is not an object")
    for key in ("input_tokens", "output_tokens", "cost_usd"):
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise UsageRefused(f"`{USAGE_KEY}.{key}` is not a finite number")
        if key != "cost_usd" and value != int(value):
            raise UsageRefused(f"`{USAGE_KEY}.{key}` is not a whole number")
    model = raw.get("model")
    if model is not None and (not isinstance(model, str) or len(model) > MAX_MODEL_CHARS or not model.isprintable()):
        raise UsageRefused(f"`{USAGE_KEY}.model` is not a short printable string")
    try:
        usage = ReplyUsage.model_validate({k: raw.get(k) for k in ReplyUsage.model_fields})
    except ValueError as exc:
        field = ".".join(str(p) for p in exc.errors()[0]["loc"])  # type: ignore[attr-defined]
        raise UsageRefused(f"`{USAGE_KEY}.{field}` is out of bounds (negative or too large)") from None
    if usage.input_tokens is None and usage.output_tokens is None and usage.cost_usd is None:
        raise UsageRefused(f"`{USAGE_KEY}` has no token count and no cost")
    return usage


class PurpleUsage(BaseModel):
    """One battle's reported usage, summed over the purple's replies (the bridge's report carries it)."""

    replies: int = Field(default=0, description="Replies read.")
    reported: int = Field(default=0, description="Replies that carried a valid `usage`.")
    model: str | None = Field(default=None, description="The model named by the first reply that named one.")
    input_tokens: int = 0
    output_tokens: int = 0
    reported_cost_usd: float | None = Field(default=None, description="Sum of the replies' own `cost_usd` (None: "
                                            "some reply reported tokens but no cost).")
    refused: str | None = Field(default=None, description="Why a reply's usage was refused (the first such reason).")

    @property
    def complete(self) -> bool:
        """Every reply reported valid usage: only then is the battle's purple cost known."""
        return self.replies > 0 and self.reported == self.replies and self.refused is None


class UsageTally:
    """Adds up a battle's replies; `add(metadata)` never raises (a refusal is recorded, never fatal)."""

    def __init__(self) -> None:
        self.usage = PurpleUsage()
        self._costs: list[float | None] = []

    def add(self, metadata: Any) -> None:
        self.usage.replies += 1
        try:
            reply = read_usage(metadata)
        except UsageRefused as exc:
            self.usage.refused = self.usage.refused or str(exc)
            return
        if reply is None:
            return
        self.usage.reported += 1
        self.usage.model = self.usage.model or reply.model
        self.usage.input_tokens += reply.input_tokens or 0
        self.usage.output_tokens += reply.output_tokens or 0
        self._costs.append(reply.cost_usd)
        known = [c for c in self._costs if c is not None]
        self.usage.reported_cost_usd = round(sum(known), 6) if len(known) == len(self._costs) else None
