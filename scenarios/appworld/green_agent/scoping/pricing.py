"""Approximate model prices, for the cost figure recorded with each LLM prediction.

USD per one million tokens (input, output), list prices as published by OpenAI in 2025 for
standard (non-batch, non-cached) usage. They are approximate: cached-input discounts, batch
pricing and later price changes are ignored. Unknown models cost 0.0 and are flagged by
`is_priced`. Dated model names match their family by prefix (`gpt-5-2025-08-07` -> `gpt-5`).
"""

from __future__ import annotations

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5": (1.25, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "o4-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
}


def _family(model: str) -> str | None:
    # Longest prefix first, so `gpt-5-mini` is not priced as `gpt-5`.
    for name in sorted(PRICES_PER_MTOK, key=len, reverse=True):
        if model == name or model.startswith(name + "-"):
            return name
    return None


def is_priced(model: str) -> bool:
    return _family(model) is not None


def approximate_cost_usd(model: str, input_tokens: int, output_tokens: int) -> float:
    """Approximate USD cost of one call; 0.0 for models not in the table."""
    family = _family(model)
    if family is None:
        return 0.0
    price_in, price_out = PRICES_PER_MTOK[family]
    return round((input_tokens * price_in + output_tokens * price_out) / 1_000_000, 6)
