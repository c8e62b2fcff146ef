"""Code mode: the battle's `appworld/logs/environment_io.md`, in AppWorld's own layout, from its trace.

AppWorld's environment writes each `/execute`'s code and output to `logs/environment_io.md`
(`AppWorld._save_environment_io_log`); our sandbox runs the agent's code, not AppWorld's server, so that
file would hold nothing of the agent's. `write_environment_io(records, path)` writes the trace's
executions there in the same layout (a `### Environment Interaction N` heading, a rule, the code in a
python fence, the output in a plain fence), so tools written for AppWorld's outputs (its own
`AppWorld.parse_environment_io_log`) read our runs. The code and output are the trace's: bounded and
redacted (docs/trace.md), and scrubbed again here of the battle's known secret values (`kernel.scrubber`).
"""

from __future__ import annotations

from pathlib import Path

from kernel.atomic import atomic_write_text
from kernel.trace_log import scrubbed
from kernel.trace_record import TraceRecord

SINGLE_HORIZONTAL_RULE = "-" * 76
"""AppWorld's `appworld.common.constants.SINGLE_HORIZONTAL_RULE`."""


def render_environment_io(records: list[TraceRecord]) -> str:
    """The executions of `records`, as AppWorld writes them."""
    parts = []
    for index, record in enumerate((r for r in records if r.kind == "execution"), 1):
        parts.append("\n".join([f"\n### Environment Interaction {index}\n{SINGLE_HORIZONTAL_RULE}",
                                f"```python\n{(record.text or '').strip()}\n```\n",
                                f"```\n{record.result or ''}\n```\n\n"]))
    return "".join(parts)


def write_environment_io(records: list[TraceRecord], path: Path) -> bool:
    """Write the file when the battle had executions (code mode); True if written."""
    if not any(r.kind == "execution" for r in records):
        return False
    atomic_write_text(Path(path), render_environment_io([scrubbed(r) for r in records]))
    return True
