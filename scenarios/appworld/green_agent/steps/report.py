"""Step 11: hand the result to the reporters (the engine then writes `result.json`).

`Reporter` is the seam for the AgentBeats backend reporter; the local file is always written by the
battle engine (`green_agent.models.result_assembly.write_result`), whatever the reporters do.
"""

from __future__ import annotations

import logging
from typing import Protocol

from green_agent.models.result import BattleResult
from green_agent.models.result_assembly import scrubbed

log = logging.getLogger(__name__)


class Reporter(Protocol):
    """Something that publishes a battle result (e.g. the AgentBeats backend)."""

    def report(self, result: BattleResult) -> None:
        """Publish `result`; raise on failure (the runner records it and carries on)."""


def report(result: BattleResult, reporters: list[Reporter]) -> list[str]:
    """Step 11: call every reporter; return the problems (a failed reporter never loses the local file)."""
    if not reporters:
        return []
    result = scrubbed(result)  # once for every reporter (result.json is scrubbed where it is written)
    problems = []
    for reporter in reporters:
        try:
            reporter.report(result)
        except Exception as exc:
            log.warning("reporter %s failed: %s", type(reporter).__name__, exc)
            problems.append(f"{type(reporter).__name__}: {exc}")
    return problems
