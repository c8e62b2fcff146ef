"""Pagination completeness: did Blue keep paging a paginated API until the data ran out?

A paginated API is one whose docs have a `page_index` parameter (`ApiDoc.is_paginated`). When no
list of paginated APIs is given, an API counts as paginated if any of its calls in the selection
passed `page_index` or `page_limit` (a heuristic; pass the list from the API docs to be exact).

Definitions:
- A *series* is the calls of one API with the same arguments apart from `page_index`
  (`page_limit` is part of the key, with AppWorld's default 5 filled in when absent), so two
  searches with different queries are two series.
- A *page* is a successful call whose `result_items` (length of the returned list) was logged.
  Its index is `page_index` (default 0); its limit `page_limit` (default `DEFAULT_PAGE_LIMIT`).
  It is *short* if `result_items < page_limit` (an empty page is short).
- A series is *complete* if for some short page p, pages 0..p-1 were all fetched too;
  *incomplete* if it has pages but none like that; *unknown* if it has no page (all calls failed or
  the log has no `result_items`).
- An API is *incomplete* if any series is incomplete, else *complete* if any series is complete,
  else *unknown*. This says whether Blue saw all the data, not whether it needed to.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Hashable
from dataclasses import dataclass, field
from typing import Any

from green_agent.models.trajectory import PaginationReport, PaginationStatus

DEFAULT_PAGE_LIMIT = 5
"""AppWorld's default `page_limit` for every paginated API (0.1.3 docs)."""

_PAGING_ARGS = ("page_index", "page_limit")


def _as_index(value: Any, default: int) -> int | None:
    """A non-negative int from an argument value (int or digit string); None if invalid."""
    if value is None:
        return default
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


@dataclass
class _Series:
    fetched: set[int] = field(default_factory=set)
    short: set[int] = field(default_factory=set)

    def status(self) -> PaginationStatus:
        if not self.fetched:
            return "unknown"
        for page in self.short:
            if len(self.fetched) > page and all(i in self.fetched for i in range(page)):
                return "complete"
        return "incomplete"


@dataclass
class _Api:
    series: dict[Hashable, _Series] = field(default_factory=dict)
    pages_fetched: int = 0
    saw_paging_args: bool = False


class PaginationTracker:
    """Accumulates per-series page state, one call at a time.

    Args:
        paginated_apis: `app.api` names with a `page_index` parameter; None infers them from arguments.
        default_page_limit: The `page_limit` assumed when a call does not pass one.
    """

    def __init__(self, paginated_apis: Collection[str] | None = None, default_page_limit: int = DEFAULT_PAGE_LIMIT) -> None:
        self.paginated_apis = None if paginated_apis is None else frozenset(paginated_apis)
        self.default_page_limit = default_page_limit
        self._apis: dict[str, _Api] = {}

    def add(self, api: str, arguments: dict[str, Any], success: bool, result_items: int | None) -> None:
        """Record one call of `api` (`app.api`)."""
        if self.paginated_apis is not None and api not in self.paginated_apis:
            return
        if self.paginated_apis is None and result_items is None and not any(k in arguments for k in _PAGING_ARGS):
            return
        state = self._apis.setdefault(api, _Api())
        state.saw_paging_args |= any(k in arguments for k in _PAGING_ARGS)
        state.pages_fetched += success
        index = _as_index(arguments.get("page_index"), 0)
        limit = _as_index(arguments.get("page_limit"), self.default_page_limit)
        if index is None or not limit:
            return  # AppWorld rejects such arguments; the call tells nothing about pages
        series = state.series.setdefault(self._key(arguments, limit), _Series())
        if not success or result_items is None:
            return
        series.fetched.add(index)
        if result_items < limit:
            series.short.add(index)

    @staticmethod
    def _key(arguments: dict[str, Any], limit: int) -> Hashable:
        """The series key: the arguments except page_index, with the effective page_limit."""
        rest = tuple(sorted((k, v) for k, v in arguments.items() if k not in _PAGING_ARGS))
        try:
            hash(rest)
        except TypeError:  # list/dict values: fall back to a canonical JSON string
            return limit, json.dumps(dict(rest), sort_keys=True, default=str)
        return limit, rest

    def report(self) -> dict[str, PaginationReport]:
        """Per paginated API called: status and series counts."""
        out: dict[str, PaginationReport] = {}
        for api, state in sorted(self._apis.items()):
            if self.paginated_apis is None and not state.saw_paging_args:
                continue
            statuses = [s.status() for s in state.series.values()]
            complete, incomplete = statuses.count("complete"), statuses.count("incomplete")
            status: PaginationStatus = "incomplete" if incomplete else "complete" if complete else "unknown"
            out[api] = PaginationReport(status=status, series=len(statuses), complete_series=complete,
                                        incomplete_series=incomplete, pages_fetched=state.pages_fetched)
        return out
