"""The one escaping rule for untrusted text: whatever came from a Blue is data, never markup.

A Blue controls much of what the Green shows: its A2A error texts and replies, its answer, the tool
names it calls, its agent card's name, error messages the gateway echoes. Every renderer that puts
such text into Markdown (the AgentBeats battle page, which renders our markdown as HTML and must be
assumed to render raw HTML too), into HTML (report.html) or onto a terminal line uses these functions:

- `bound(text, limit)`: at most `limit` characters, a cut marked with `…`;
- `terminal_text(text)`: control characters (carriage return included: it lets a line overwrite what was
  printed before it) and the bidirectional-override characters dropped, newlines and tabs kept: the last step
  before text reaches a terminal (`appworld-green trace` applies it to everything it prints);
- `one_line(text, limit)`: newlines, tabs and runs of whitespace become one space; other control
  characters (C0, C1, DEL) and the bidirectional-override characters are dropped; bounded. For terminal
  lines, log lines and the page's plain `message` field;
- `markdown_text(text, limit)`: the characters Markdown reads as inline syntax (`` \ ` * _ [ ] | ~ ! # ``)
  are backslash-escaped, `& < >` become HTML entities, and what would open a block at a line's start
  (a list marker `-`/`+`/`1.`/`1)` before a space, a line of `-` or `=`) is escaped there, so the text renders as exactly itself, with no emphasis,
  code, link, image, heading, list, table-cell break, entity or raw HTML; newlines are kept as line
  breaks inside one paragraph (bare URLs may still be shown as links by a GFM renderer: the link
  is the text itself);
- `markdown_line(text, limit)`: `one_line` then the escaping of `markdown_text` (pipes included: safe
  in a table cell, a heading, a list item);
- `code_span(text, limit, cell)`: the single-line text in a code span fenced with one more backtick
  than its longest backtick run (padded when it starts or ends with one), so it cannot close early;
  `cell=True` escapes pipes as GFM tables require inside a code span in a cell;
- `html_text(text, limit)`: control characters dropped, bounded, then `html.escape` (quotes too), for
  HTML element content and attribute values.

Contract: the output of every function is inert in its context for any input string (None gives "");
bounding happens before escaping, so an escape sequence is never cut in half. Secrets and local paths
are scrubbed by the caller *before* escaping (the escapes would hide a secret from a later scrub).
"""

from __future__ import annotations

import html
import re
import string

ELLIPSIS = "…"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
"""Control characters (newline, carriage return and tab excepted), zero-width and bidi-override marks."""
_WHITESPACE = re.compile(r"\s+")
_BACKTICKS = re.compile(r"`+")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
"""Quotes need no entity in Markdown: with `<` and `[` escaped no attribute or link title can open."""
_INLINE_SYNTAX = "\\`*_[]|~!#"
"""Characters Markdown reads as syntax anywhere in a line (emphasis, code, links, images, cells, headings)."""
_MARKDOWN = str.maketrans({c: "\\" + c for c in _INLINE_SYNTAX} | _ENTITIES)
_LINE_START = re.compile(r"^(?:[-+]|\d{1,9}[.)])(?=\s|$)|^[-=](?=[-=\s]*$)")
"""What opens a block when it starts a line: a list item, a setext underline or thematic break, a numbered item."""


def _text(value: object) -> str:
    return "" if value is None else str(value)


def bound(text: object, limit: int | None) -> str:
    """`text` cut to at most `limit` characters (the last one `…` when cut); None: no bound."""
    value = _text(text)
    if limit is None or len(value) <= limit:
        return value
    return value[:max(limit - 1, 0)] + ELLIPSIS if limit > 0 else ""


def strip_controls(text: object) -> str:
    """`text` without control, zero-width and bidi-override characters; newlines, CR and tabs kept."""
    return _CONTROL.sub("", _text(text))


def terminal_text(text: object) -> str:
    """`text` without control, zero-width and bidi-override characters nor carriage returns; newlines, tabs kept."""
    return strip_controls(text).replace("\r", "")


def one_line(text: object, limit: int | None = None) -> str:
    """One line of plain text: whitespace runs (newlines included) as one space, controls dropped, bounded."""
    return bound(_WHITESPACE.sub(" ", strip_controls(text)).strip(), limit)


def _escape_line(line: str) -> str:
    escaped = line.strip().translate(_MARKDOWN)
    return _LINE_START.sub(lambda m: m.group(0)[:-1] + "\\" + m.group(0)[-1], escaped, count=1)


def markdown_text(text: object, limit: int | None = None) -> str:
    """Markdown that renders as exactly `text` (newlines kept as line breaks), HTML-safe, bounded first."""
    lines = bound(strip_controls(text).replace("\r\n", "\n").replace("\r", "\n"), limit).split("\n")
    return "  \n".join(_escape_line(line.replace("\t", " ")) for line in lines)


def markdown_line(text: object, limit: int | None = None) -> str:
    """`one_line(text, limit)` escaped for Markdown and HTML (pipes escaped too: safe in a table cell)."""
    return _escape_line(one_line(text, limit))


def code_span(text: object, limit: int | None = None, cell: bool = False) -> str:
    """`one_line(text, limit)` as a Markdown code span that no backtick inside can close (empty: ``` `` ```)."""
    value = one_line(text, limit)
    if cell:
        value = value.replace("|", "\\|")
    longest = max((len(run) for run in _BACKTICKS.findall(value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value.strip() else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def html_text(text: object, limit: int | None = None, quote: bool = True) -> str:
    """`text` (controls dropped, bounded) escaped for HTML element content and quoted attribute values."""
    return html.escape(bound(strip_controls(text), limit), quote=quote)
