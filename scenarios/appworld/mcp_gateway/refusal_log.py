"""A bound on how fast refused calls reach the call log, so nobody can inflate it from outside.

Refused calls are the ones that belong to no running battle: anyone who can reach the Blue-facing
port can send them. Each is counted (on the running battle's state) but only `burst` records, then
`per_second` a second, are written; the next record written says how many were left out
(`CallRecord.suppressed_refusals`). A token bucket, on the event loop (no locking).
"""

from __future__ import annotations

import time

REFUSAL_BURST = 50
"""Refusal records written at once before the rate applies."""
REFUSALS_PER_SECOND = 10.0
"""Refusal records written per second after the burst."""


class RefusalLogLimit:
    """Token bucket deciding whether one more refusal record is written."""

    def __init__(self, burst: int = REFUSAL_BURST, per_second: float = REFUSALS_PER_SECOND) -> None:
        self.burst, self.per_second = burst, per_second
        self._tokens = float(burst)
        self._at = time.monotonic()
        self._suppressed = 0

    def take(self) -> tuple[bool, int]:
        """(write this record?, refusals left out since the last record written)."""
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.per_second)
        self._at = now
        if self._tokens < 1:
            self._suppressed += 1
            return False, 0
        self._tokens -= 1
        suppressed, self._suppressed = self._suppressed, 0
        return True, suppressed
