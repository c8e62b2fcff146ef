"""One-pass state over the selected call records.

The state is O(#tools + #distinct APIs + #pagination series) plus one float per selected call for
the latency percentiles (bounded by the battle's calls, never by the log's size). Definitions of
every figure are in `green_agent.trajectory.metrics`.
"""

from __future__ import annotations

import json
from array import array
from collections import Counter
from collections.abc import Collection
from datetime import datetime
from typing import Any

from green_agent.models.scope import COMPLETE_TASK_API
from kernel.api_names import api_name
from kernel.call_record import CallRecord
from green_agent.trajectory import metrics
from green_agent.trajectory.faults import FaultTracker, call_identity
from green_agent.trajectory.pagination import PaginationTracker


class TrajectoryAccumulator:
    """Feed records with `add`, then read the figures with `summary`.

    Args:
        paginated_apis: `app.api` names with a `page_index` parameter; None infers them.
    """

    def __init__(self, paginated_apis: Collection[str] | None = None) -> None:
        self.total = 0
        self.failed = 0
        self.out_of_scope = 0
        self.upstream_faults = 0
        self.first_upstream_fault: str | None = None
        self.out_of_scope_tools: set[str] = set()
        self.duration_sum = 0.0
        self.durations = array("d")
        self.first: datetime | None = None
        self.last: datetime | None = None
        self.per_tool: Counter[str] = Counter()
        self.failed_per_tool: Counter[str] = Counter()
        self.retries = 0
        self.retries_after_fault = 0
        self._last_failed: dict[str, bool] = {}
        """call identity -> whether its last attempt, a failure, was an injected fault"""
        self.seed_sequences = 0
        self.called_ok: set[str] = set()
        self.pagination = PaginationTracker(paginated_apis)
        self._run_tool: str | None = None
        self._run_length = 0
        self.submitted_answer: str | None = None
        self.faults = FaultTracker()
        self.faulted = 0

    def add(self, record: CallRecord) -> None:
        """Account for the next selected record (file order)."""
        self.total += 1
        tool = record.tool_name
        self.per_tool[tool] += 1
        self.faults.add(record, self.total)
        if record.fault is not None:  # injected on purpose: not one of the agent's errors
            self.faulted += 1
        elif not record.success:
            self.failed += 1
            self.failed_per_tool[tool] += 1
        if not record.in_scope:
            self.out_of_scope += 1
            self.out_of_scope_tools.add(tool)
        if record.upstream_fault:
            self.upstream_faults += 1
            if self.first_upstream_fault is None:
                self.first_upstream_fault = f"{tool} at {record.timestamp.isoformat()}: {record.upstream_fault}"
        self.duration_sum += record.duration_ms
        self.durations.append(record.duration_ms)
        self._times(record.timestamp)
        self._sequence(record)
        api = api_name(tool)
        if record.success:
            self.called_ok.add(api)
            if api == COMPLETE_TASK_API:
                self.submitted_answer = answer_text(record.arguments.get("answer"))
        self.pagination.add(api, record.arguments, record.success, record.result_items)

    def _times(self, at: datetime) -> None:
        if self.first is None or at < self.first:
            self.first = at
        if self.last is None or at > self.last:
            self.last = at

    def _sequence(self, record: CallRecord) -> None:
        """Retries (a repeat of a call whose last attempt failed) and the seed's pagination runs."""
        key = call_identity(record)
        if key in self._last_failed:
            self.retries += 1
            self.retries_after_fault += self._last_failed[key]
        if record.success:
            self._last_failed.pop(key, None)
        else:
            self._last_failed[key] = record.fault is not None
        if metrics.is_seed_pagination_tool(record.tool_name) and record.tool_name == self._run_tool:
            self._run_length += 1
            if self._run_length == 2:
                self.seed_sequences += 1
        else:
            self._run_tool = record.tool_name if metrics.is_seed_pagination_tool(record.tool_name) else None
            self._run_length = 1

    def summary(self) -> dict[str, Any]:
        """The call-derived fields of `TrajectoryMetrics` (API selection and pagination excluded)."""
        ordered = sorted(self.durations)
        return {
            "total_calls": self.total,
            "successful_calls": self.total - self.failed - self.faulted,
            "failed_calls": self.failed,
            "error_rate": metrics.ratio(self.failed, self.total),
            "avg_duration_ms": metrics.mean(self.duration_sum, self.total),
            "p50_duration_ms": metrics.nearest_rank(ordered, 50),
            "p95_duration_ms": metrics.nearest_rank(ordered, 95),
            "calls_per_minute": metrics.calls_per_minute(self.total, self.first, self.last),
            "first_call_at": self.first,
            "last_call_at": self.last,
            "unique_tools": len(self.per_tool),
            "calls_per_tool": dict(sorted(self.per_tool.items())),
            "failed_calls_per_tool": dict(sorted(self.failed_per_tool.items())),
            "retry_count": self.retries,
            "retries_after_fault": self.retries_after_fault,
            "out_of_scope_calls": self.out_of_scope,
            "upstream_faults": self.upstream_faults,
            "first_upstream_fault": self.first_upstream_fault,
            "out_of_scope_tools": sorted(self.out_of_scope_tools),
            "pagination_sequences": self.seed_sequences,
            "submitted_answer": self.submitted_answer,
            **self.faults.summary(),
        }


def answer_text(answer: Any) -> str | None:
    """A complete_task `answer` argument as text: a string as is, any other value as JSON, None as None."""
    if answer is None:
        return None
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False, default=str)
