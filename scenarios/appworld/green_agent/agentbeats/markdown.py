"""Markdown building blocks for the web battle UI (`markdown_content`): lines that read as a list without CSS.

The upstream web UI renders `markdown_content` with its Tailwind reset in force: a Markdown list shows no
bullets and a table no padding (cells run together). So lists are `bullets`: each line carries its own
`•` and all but the last end in a hard break (two spaces), one paragraph of separate lines. Values are
escaped by the caller (`kernel.untrusted`); the result's page text is `result_post`, the Blue's calls
`blue_feed`.
"""

from __future__ import annotations

BULLET = "•"


def bullets(items: list[str]) -> list[str]:
    """`items` as lines that show as a list without CSS (see the module docstring)."""
    return [f"{BULLET} {item}" + ("  " if k < len(items) - 1 else "") for k, item in enumerate(items)]
