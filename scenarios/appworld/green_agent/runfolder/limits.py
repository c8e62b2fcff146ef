"""The limits a run folder is read within: sizes per file kind, JSON depth, counts (docs/eval.md lists them).

Each size is checked before a byte is parsed, and each is far above what a real run writes: measured on the
offline world's whole dev split (21 battles, the reference Blue, tools mode; code mode writes no more), run.json
was 2.5 KiB, results.json 28 KiB (1.3 KiB a row), a battle's result.json at most 7.4 KiB, its task.json 0.7 KiB,
its trace.jsonl 38 KiB, its mcp_calls.jsonl 8 KiB, events.jsonl 8.7 KiB.
"""

from __future__ import annotations

from typing import NamedTuple

from kernel.bounded_json import MAX_JSON_DEPTH
from kernel.trace_log import MAX_RECORD_BYTES, MAX_TRACE_BYTES

MAX_TRIALS = 100
"""Trials per task a run may have (`eval --trials`, an assessment's `trials`); run.json saying more is refused."""
MAX_TASKS = 1000
"""Tasks a run may have: more than every split of AppWorld's own dataset together (train, dev, test_normal and
test_challenge hold about 730 tasks); a run.json or results.json naming more is refused."""
MAX_DEPTH = MAX_JSON_DEPTH
"""Nesting levels a JSON file of a run folder may have (ours nest at most 5)."""
MAX_LINE_BYTES = 1 << 20
"""Longest line of a JSONL file read (a longer one is skipped unparsed)."""


class FileKind(NamedTuple):
    """A kind of file a run folder holds, and the most bytes of it that are read."""

    name: str
    limit: int


MANIFEST = FileKind("run.json", 1 << 20)
RESULTS = FileKind("results.json", 64 << 20)
"""About 48,000 rows at today's size: the whole of AppWorld's largest split a hundred times over."""
RESULT = FileKind("result.json", 8 << 20)
TASK_INFO = FileKind("task.json", 1 << 20)
EVENTS = FileKind("events.jsonl", 64 << 20)
TRACE = FileKind("trace.jsonl", 2 * MAX_TRACE_BYTES + 8 * MAX_RECORD_BYTES)
"""The trace's writer keeps it within `MAX_TRACE_BYTES` plus its closing records."""
OTLP_EXPORT = FileKind("otlp_export.json", 64 << 10)
"""A battle's live-export record (`green_agent.models.otlp_export`): a few hundred bytes."""
CALL_LOG = FileKind("call log", 64 << 20)
"""A battle's `mcp_calls.jsonl` (or AppWorld's own `api_calls.jsonl`)."""
ASSESSMENT = FileKind("assessment results file", 8 << 20)
"""`assess --out FILE`: the results an assessment returned, naming its run folder."""
