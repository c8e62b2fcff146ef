"""Strict parsing of an LLM's API list (upstream's rules).

Rules: split into lines, strip, lowercase; a line counts only if it is exactly a known `app.api`
(the MCP form `app__api` is accepted and normalised to `app.api`); duplicates are dropped keeping
the first occurrence; `supervisor.complete_task` is put first (always needed; this keeps it inside
the cap); the list is cut at the cap. Deliberate leniency beyond upstream: a markdown list marker
(`- `, `* `, `1. `) and surrounding backticks are removed before the exact match, since chat models
add them despite the instructions. Nothing else is guessed: no fuzzy matching, no partial names.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from pydantic import BaseModel, Field

from green_agent.scoping.base import COMPLETE_TASK_API, complete_task_first
from kernel.api_names import api_name

_LIST_MARKER = re.compile(r"^(?:[-*\u2022]|\d{1,3}[.)])\s+")


class ParsedApis(BaseModel):
    """The outcome of parsing one model answer."""

    apis: list[str] = Field(description="Valid `app.api` names, complete_task first, capped.")
    matched: int = Field(description="Lines that named a known API (before dedup and cap), complete_task excluded.")
    rejected: list[str] = Field(default_factory=list, description="Non-empty lines that named no known API.")


def normalise_line(line: str) -> str:
    """One answer line in canonical form: stripped, lowercased, marker/backticks removed, `__` -> `.`."""
    text = _LIST_MARKER.sub("", line.strip()).strip().strip("`").strip().lower()
    return text if "." in text else api_name(text)


def parse_api_lines(text: str, known: Collection[str], cap: int) -> ParsedApis:
    """Parse a newline-separated API list against the `known` `app.api` names."""
    known_set = known if isinstance(known, (set, frozenset)) else set(known)
    found: list[str] = []
    rejected: list[str] = []
    matched = 0
    for raw in (text or "").splitlines():
        if not raw.strip():
            continue
        name = normalise_line(raw)
        if name in known_set:
            found.append(name)
            matched += name != COMPLETE_TASK_API
        else:
            rejected.append(raw.strip()[:200])
    return ParsedApis(apis=complete_task_first(found, cap), matched=matched, rejected=rejected)
