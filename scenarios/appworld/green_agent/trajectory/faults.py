"""The injected faults of one battle (a reliability run), from its call records: which the agent met, which it
got past.

A record with `fault` is a call the gateway answered with a planned fault instead of forwarding it
(`mcp_gateway.faults`). Definitions:
- a fault is *injected* (counted) only when its record shows what the agent received (`fault.delivered`); one
  whose battle ended while it waited never reached the agent: `faults_undelivered`, not counted;
- an injected fault is *recovered* when a later record of the same API (same tool) answered without a fault
  and succeeded: the agent got what the fault withheld;
- `faulted_calls` lists each injected fault in call order: its position among the battle's faultable calls,
  the API (`app.api`), the kind, recovered or not.
State is one entry per injected fault plus the APIs with a fault still unrecovered: bounded by the battle's calls.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from green_agent.models.trajectory import FaultedCall
from kernel.api_names import api_name
from kernel.call_record import CallRecord


class FaultTracker:
    """Feed every selected record with `add` (file order), then read `summary()`."""

    def __init__(self) -> None:
        self.calls: list[FaultedCall] = []
        self.undelivered = 0
        self._open: dict[str, list[int]] = {}

    def add(self, record: CallRecord) -> None:
        tool = record.tool_name
        if record.fault is not None:
            if record.fault.delivered is None:
                self.undelivered += 1
                return
            self._open.setdefault(tool, []).append(len(self.calls))
            self.calls.append(FaultedCall(position=record.fault.position, api=api_name(tool), kind=record.fault.kind,
                                          recovered=False))
        elif record.success and tool in self._open:
            for index in self._open.pop(tool):
                self.calls[index].recovered = True

    def summary(self) -> dict[str, Any]:
        """The fault fields of `TrajectoryMetrics`."""
        injected = Counter(call.kind for call in self.calls)
        recovered = Counter(call.kind for call in self.calls if call.recovered)
        return {"faults_injected": dict(sorted(injected.items())),
                "faults_recovered": {kind: recovered.get(kind, 0) for kind in sorted(injected)},
                "faults_undelivered": self.undelivered, "faulted_calls": list(self.calls)}
