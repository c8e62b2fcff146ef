"""API selection quality against the task's gold required APIs, and scope quality.

Names are compared as `app.api` (tool names `app__api` are converted). Definitions:
- called: the set of APIs with at least one successful selected call, leaving out the `api_docs`
  app (reading documentation is not choosing an API; gold sets never contain it).
- api_precision = |called ∩ gold| / |called|; None if gold is unknown or nothing was called.
- api_recall = |called ∩ gold| / |gold|; None if gold is unknown or empty.
- api_f1 = 2PR / (P + R); 0.0 if P = R = 0; None if P or R is None.
- missing_gold_apis = gold − called; extra_apis = called − gold (both empty if gold is unknown).
- scope_recall = |gold ∩ scope| / |gold| for the predicted scope given to Blue; None if the scope
  or gold is unknown, or gold is empty. scope_size = |scope| (None without a scope).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

from green_agent.trajectory.metrics import f1, ratio
from kernel.api_names import api_name

SELECTION_IGNORED_APPS = frozenset({"api_docs"})


class ApiSelection(NamedTuple):
    """The API-selection fields of `TrajectoryMetrics`."""

    called_apis: list[str]
    gold_apis: list[str] | None
    api_precision: float | None
    api_recall: float | None
    api_f1: float | None
    missing_gold_apis: list[str]
    extra_apis: list[str]
    scope_size: int | None
    scope_recall: float | None


def normalize(names: Collection[str]) -> set[str]:
    """`app.api` names from `app.api` or `app__api` names."""
    return {api_name(name) for name in names}


def counts_for_selection(api: str) -> bool:
    """True if a successful call of `api` counts towards the called set."""
    return api.partition(".")[0] not in SELECTION_IGNORED_APPS


def score_selection(called: Collection[str], gold: Collection[str] | None,
                    scope: Collection[str] | None) -> ApiSelection:
    """Score the successfully called APIs against gold and the scope against gold.

    Args:
        called: APIs called successfully (`app.api` or tool names).
        gold: The task's gold required APIs; None if unknown.
        scope: The predicted scope given to Blue; None if no scope.
    """
    called_set = {api for api in normalize(called) if counts_for_selection(api)}
    scope_set = None if scope is None else normalize(scope)
    if gold is None:
        return ApiSelection(sorted(called_set), None, None, None, None, [], [],
                            None if scope_set is None else len(scope_set), None)
    gold_set = normalize(gold)
    hits = len(called_set & gold_set)
    precision = ratio(hits, len(called_set))
    recall = ratio(hits, len(gold_set))
    scope_recall = None if scope_set is None else ratio(len(gold_set & scope_set), len(gold_set))
    return ApiSelection(
        called_apis=sorted(called_set), gold_apis=sorted(gold_set),
        api_precision=precision, api_recall=recall, api_f1=f1(precision, recall),
        missing_gold_apis=sorted(gold_set - called_set), extra_apis=sorted(called_set - gold_set),
        scope_size=None if scope_set is None else len(scope_set), scope_recall=scope_recall,
    )
