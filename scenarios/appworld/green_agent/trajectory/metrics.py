"""Pure metric functions and their definitions.

"Selected records" are the call records of the requested battle and/or task, in file order (the
gateway appends one line per finished call, so file order is call order for one Blue). "Next
record" always means the next selected record, whatever other battles wrote in between.

- total_calls, successful_calls, failed_calls: selected records; with success true / false (failed: except the
  faults the gateway injected on purpose, which are not the agent's errors; `green_agent.trajectory.faults`).
- error_rate = failed_calls / total_calls, a fraction in 0..1 (the seed printed a percentage);
  None with zero calls.
- avg_duration_ms: arithmetic mean of `duration_ms`; None with zero calls.
- p50/p95_duration_ms: nearest-rank percentile, the value at 1-based rank ceil(p/100 * n) of the
  ascending durations (always an observed value); None with zero calls.
- first_call_at / last_call_at: earliest / latest `timestamp` (call start, UTC); naive timestamps
  of the seed's shape are taken as UTC.
- calls_per_minute = total_calls / ((last_call_at - first_call_at) in minutes); None when the span
  is zero (zero calls, a single call, or all calls in the same instant).
- unique_tools: distinct `tool_name`s; calls_per_tool / failed_calls_per_tool: counts by tool.
- retry_count: calls that repeat a call (same API, same arguments: `trajectory.faults.call_identity`) whose last
  attempt failed; retries_after_fault: those whose last attempt was a fault injected on purpose.
- out_of_scope_calls: records with `in_scope` false (outside the battle's scope: refused under the
  enforce policy, served under advise); out_of_scope_tools: their distinct tool names.
- pagination_sequences (the seed's metric): maximal runs of >= 2 consecutive records with the same
  tool whose name contains "list", "search" or "library".
- pagination (ours): see `green_agent.trajectory.pagination`.
- API selection and scope quality: see `green_agent.trajectory.api_selection`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

SEED_PAGINATION_WORDS = ("list", "search", "library")


def ratio(numerator: float, denominator: float) -> float | None:
    """numerator / denominator, or None when the denominator is 0 (undefined, not zero)."""
    return numerator / denominator if denominator else None


def nearest_rank(sorted_values: Sequence[float], percent: float) -> float | None:
    """Nearest-rank percentile of ascending `sorted_values`; None if empty.

    Args:
        sorted_values: Values in ascending order.
        percent: In (0, 100].
    """
    if not sorted_values:
        return None
    rank = max(1, math.ceil(percent / 100.0 * len(sorted_values)))
    return float(sorted_values[rank - 1])


def mean(total: float, count: int) -> float | None:
    """total / count, or None for no values."""
    return ratio(total, count)


def calls_per_minute(calls: int, first: datetime | None, last: datetime | None) -> float | None:
    """Calls per minute over the first..last call-start span; None if the span is zero or unknown."""
    if first is None or last is None:
        return None
    minutes = (last - first).total_seconds() / 60.0
    return calls / minutes if minutes > 0 else None


def f1(precision: float | None, recall: float | None) -> float | None:
    """Harmonic mean; 0.0 if both are 0; None if either is undefined."""
    if precision is None or recall is None:
        return None
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def is_seed_pagination_tool(tool_name: str) -> bool:
    """The seed's test for a pagination-like tool: its name contains list, search or library."""
    lowered = tool_name.lower()
    return any(word in lowered for word in SEED_PAGINATION_WORDS)
