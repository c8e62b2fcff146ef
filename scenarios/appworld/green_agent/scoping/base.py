"""The predictor interface shared by every scoping strategy.

A predictor turns one task (id + instruction) into a `ScopePrediction`: at most `cap` `app.api`
names with `supervisor.complete_task` first. Offline predictors never fail on a well-formed task;
network predictors raise `ScopePredictorError`, which `select.predict_scope` turns into a fallback.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from kernel.errors import InfrastructureError
from green_agent.models.scope import COMPLETE_TASK_API, PredictorName, ScopePrediction, ScopeUsage

__all__ = [
    "COMPLETE_TASK_API", "PLUMBING_APIS", "Predictor", "ScopePrediction", "ScopePredictorError", "ScopeUsage",
    "complete_task_first",
]

PLUMBING_APIS: tuple[str, ...] = (
    COMPLETE_TASK_API,
    "supervisor.show_account_passwords",
    "supervisor.show_profile",
)
"""Supervisor APIs nearly every solution calls (finish, fetch passwords, know who "I" am)."""


class ScopePredictorError(InfrastructureError):
    """A predictor could not produce a scope (no key, timeout, API error, unusable output)."""


@runtime_checkable
class Predictor(Protocol):
    """Anything that scopes a task's API surface."""

    name: PredictorName

    def predict(self, task_id: str, instruction: str) -> ScopePrediction:
        """Return the scope for one task; raise `ScopePredictorError` when it cannot."""
        ...


def complete_task_first(apis: list[str], cap: int | None) -> list[str]:
    """Deduplicate keeping order, move `supervisor.complete_task` to the front, then cut at `cap`."""
    seen: dict[str, None] = {COMPLETE_TASK_API: None}
    for api in apis:
        seen.setdefault(api, None)
    ordered = list(seen)
    return ordered if cap is None else ordered[:cap]
