"""Markdown building blocks for the web battle UI (`markdown_content`): cells and two-column tables.

Cells are single-line, pipes escaped, long values cut; the result's page text is `result_post`.
"""

from __future__ import annotations

from typing import Any

MAX_CELL = 160


def cell(value: Any) -> str:
    """One table cell: text with pipes escaped, newlines flattened, long values cut."""
    if value is None:
        return "–"
    if isinstance(value, float):
        value = f"{value:.3g}"
    text = " ".join(str(value).split()).replace("|", "\\|")
    return text if len(text) <= MAX_CELL else text[:MAX_CELL - 1] + "…"


def table(rows: list[tuple[str, Any]], header: tuple[str, str] = ("", "")) -> list[str]:
    lines = [f"| {header[0]} | {header[1]} |", "|---|---|"]
    lines += [f"| {cell(k)} | {cell(v)} |" for k, v in rows]
    return lines
