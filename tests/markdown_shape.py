"""The shape the battle page's markdown must keep to read without CSS (shared by the page and e2e tests).

The upstream web UI renders `markdown_content` without typography styles: headings are body size,
tables have no borders or padding. So: no heading used for emphasis, no empty table header row,
no table wider than 3 columns, and no raw AppWorld label without its plain wording beside it.
"""

from __future__ import annotations

import re

from green_agent.models.explanation import ANSWER_KIND, KIND_WORDS, OTHER_KIND

_EMPTY_HEADER = re.compile(r"^\|(\s*\|)+\s*$")


def assert_reads_without_css(markdown: str) -> None:
    lines = markdown.splitlines()
    assert not [line for line in lines if line.startswith("#")], markdown
    assert not [line for line in lines if _EMPTY_HEADER.match(line)], markdown
    widths = [line.strip().strip("|").count("|") + 1 for line in lines if line.startswith("|")]
    assert all(width <= 3 for width in widths), markdown
    plain = (*KIND_WORDS.values(), ANSWER_KIND, OTHER_KIND)
    for label in KIND_WORDS:
        raw = [line for line in lines if label.replace("_", "\\_") in line or label in line]
        assert all(any(words in line for words in plain) for line in raw), raw
