"""The injected faults of one battle (a reliability run), from its call records: which the agent met, which it
got past.

A record with `fault` is a call the gateway answered with a fault on purpose (`mcp_gateway.faults`). Definitions
(docs/reliability.md):
- a fault is *injected* (counted) only when its record shows what the agent received (`fault.delivered`); one
  whose battle ended while it waited never reached the agent: `faults_undelivered`, not counted. A 429 answered
  again because the agent called within its retry-after (`fault.enforced`) is no new fault:
  `faults_retry_after_ignored` counts those;
- *the same call* is the same API with the same arguments, secrets compared by value (`call_key`,
  `mcp_gateway.call_keys`; a record without one, from an older log, compares its logged arguments);
- an injected fault is *recovered* when the agent later made the same call again and it succeeded: the agent
  redid what the fault withheld. Another page of the same API, or a payment to another person, is not a redo;
- a `lost_response` fault is the exception: its call reached the world (only the answer was lost), so redoing it
  writes twice. It is recovered when the agent did NOT make the same call again; `repeated` marks the blind
  repeat;
- `silent` follows what the agent received (`fault.silent`): an `empty` page, or a `malformed` answer in tools
  mode, arrived as a success;
- `faulted_calls` lists each injected fault in call order: its position among the battle's faultable calls,
  the API (`app.api`), the kind, silent or loud, recovered or not.
State is one entry per injected fault plus the calls with a fault still open: bounded by the battle's calls.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from green_agent.models.trajectory import FaultedCall
from kernel.api_names import api_name
from kernel.call_record import CallRecord


def call_identity(record: CallRecord) -> str:
    """What makes two records the same call (module docstring)."""
    if record.call_key is not None:
        return record.call_key
    return json.dumps([record.tool_name, record.arguments], sort_keys=True, default=repr)


class FaultTracker:
    """Feed every selected record with `add` (file order), then read `summary()`."""

    def __init__(self) -> None:
        self.calls: list[FaultedCall] = []
        self.undelivered = 0
        self.enforced = 0
        self._open: dict[str, list[int]] = {}
        self._lost: dict[str, list[int]] = {}

    def add(self, record: CallRecord, number: int) -> None:
        """The battle's `number`-th call (from 1)."""
        key = call_identity(record)
        for index in self._lost.pop(key, []):  # the same write again, after its answer was lost
            self.calls[index].recovered, self.calls[index].repeated = False, True
        fault = record.fault
        if fault is None:
            if record.success:
                for index in self._open.pop(key, []):
                    self.calls[index].recovered = True
            return
        if fault.delivered is None:
            self.undelivered += 1
        elif fault.enforced:
            self.enforced += 1
        else:
            lost = fault.kind == "lost_response"
            (self._lost if lost else self._open).setdefault(key, []).append(len(self.calls))
            self.calls.append(FaultedCall(position=fault.position, call=number, api=api_name(record.tool_name),
                                          kind=fault.kind, silent=fault.silent, recovered=lost))

    def summary(self) -> dict[str, Any]:
        """The fault fields of `TrajectoryMetrics`."""
        injected = Counter(call.kind for call in self.calls)
        recovered = Counter(call.kind for call in self.calls if call.recovered)
        return {"faults_injected": dict(sorted(injected.items())),
                "faults_recovered": {kind: recovered.get(kind, 0) for kind in sorted(injected)},
                "faults_undelivered": self.undelivered, "faults_retry_after_ignored": self.enforced,
                "faulted_calls": list(self.calls)}
