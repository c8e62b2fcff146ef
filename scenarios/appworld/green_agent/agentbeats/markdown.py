"""Markdown building blocks for the web battle UI (`markdown_content`): cells and two-column tables.

Every cell is untrusted-safe (`kernel.untrusted.markdown_line`): single-line, Markdown and HTML
escaped, long values cut; the result's page text is `result_post`.
"""

from __future__ import annotations

from typing import Any

from kernel.untrusted import markdown_line

MAX_CELL = 160


def cell(value: Any) -> str:
    """One table cell: one line, escaped for Markdown and HTML (pipes included), cut to `MAX_CELL`."""
    if value is None:
        return "–"
    if isinstance(value, float):
        value = f"{value:.3g}"
    return markdown_line(value, MAX_CELL)


def table(rows: list[tuple[str, Any]], header: tuple[str, str] = ("", "")) -> list[str]:
    lines = [f"| {cell(header[0])} | {cell(header[1])} |", "|---|---|"]
    lines += [f"| {cell(k)} | {cell(v)} |" for k, v in rows]
    return lines
