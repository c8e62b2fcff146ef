"""Where a purple's reply carries its reported usage: the reply's A2A metadata (`kernel.a2a_usage`).

`reply_metadata(event)` picks it from the last event of a turn: a Message's `metadata`; for a task,
its status message's `metadata`, else the task's own. Only the metadata object is returned: the
values are validated by `kernel.a2a_usage.UsageTally`, and never reach a verdict.
"""

from __future__ import annotations

from typing import Any

from a2a.types import Message, Task


def reply_metadata(event: Any) -> Any:
    if isinstance(event, Message):
        return event.metadata
    task = event[0] if isinstance(event, tuple) else event
    if not isinstance(task, Task):
        return None
    if task.status.message is not None and task.status.message.metadata:
        return task.status.message.metadata
    return task.metadata
