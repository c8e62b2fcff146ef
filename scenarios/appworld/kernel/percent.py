"""Percent-escapes decoded, with the way back: where a value found in the decoded text stands in the original.

`unquoted(text)`: `text` with its `%XX` escapes decoded (`urllib.parse.unquote`, UTF-8, a byte that is not one: a
lone surrogate), or None when it holds none. `PercentDecoded.of(text)`: the same decoded text and, for a span of
it, `original(start, end)`, the span of `text` it came from (a character written as `%XX` escapes maps to all of
them). The scrubber (`kernel.scrubber`) searches both, so a secret written with any of its characters as `%XX`
(upper or lower case hex) is found where it stands.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import NamedTuple
from urllib.parse import unquote

_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def unquoted(text: str) -> str | None:
    """`text` with its `%XX` escapes decoded (UTF-8, a byte that is not: a lone surrogate), or None if it has none."""
    if "%" not in text:
        return None
    plain = unquote(text, errors="surrogateescape")
    return plain if plain != text else None


class PercentDecoded(NamedTuple):
    """A text with each run of `%XX` escapes decoded as UTF-8 (a byte that is not: a lone surrogate, matching no
    value), and where each decoded character came from, so that a value found in it is replaced in the text itself.
    One pass over the text (a regex, `bytes.fromhex`, a decode), a Python step per run of escapes, and one per
    character only in a run that decodes to more than ASCII. Worth building where `unquoted` (faster, keeping no
    positions) found what is looked for."""

    text: str
    starts: list[int]
    """Where each piece starts in `text`."""
    pieces: list[tuple[int, int | tuple[int, ...]]]
    """Each piece's start in the original text and how its characters map: 1 (a piece of the original as it is),
    3 (a run of escapes of ASCII characters, `%XX` each), or each character's offset in the run (and its length)."""

    @classmethod
    def of(cls, text: str) -> "PercentDecoded | None":
        """`text` decoded, or None when it holds no `%XX`."""
        if "%" not in text:
            return None
        parts: list[str] = []
        starts: list[int] = []
        pieces: list[tuple[int, int | tuple[int, ...]]] = []

        def add(part: str, origin: int, mapping: int | tuple[int, ...]) -> None:
            starts.append(starts[-1] + len(parts[-1]) if parts else 0)
            pieces.append((origin, mapping))
            parts.append(part)

        done = 0
        for run in _PERCENT_RUN.finditer(text):
            if run.start() > done:
                add(text[done:run.start()], done, 1)
            chars = bytes.fromhex(run.group().replace("%", "")).decode("utf-8", "surrogateescape")
            add(chars, run.start(), 3 if chars.isascii() else _offsets(chars))
            done = run.end()
        if not parts:
            return None
        if done < len(text):
            add(text[done:], done, 1)
        return cls("".join(parts), starts, pieces)

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that the decoded `text[start:end]` came from."""
        return self._at(start, after=False), self._at(end - 1, after=True)

    def _at(self, index: int, after: bool) -> int:
        piece = bisect_right(self.starts, index) - 1
        origin, mapping = self.pieces[piece]
        within = index - self.starts[piece] + after
        return origin + (within * mapping if isinstance(mapping, int) else mapping[within])


def _offsets(chars: str) -> tuple[int, ...]:
    """Each character's offset in its run of escapes (`%XX` per UTF-8 byte; a surrogate stands for one byte)."""
    offsets = [0]
    for char in chars:
        offsets.append(offsets[-1] + 3 * (1 if "\udc80" <= char <= "\udcff" else len(char.encode())))
    return tuple(offsets)
