"""The fault plan: which of a battle's calls the gateway answers with a fault, and with which kind.

`draw(spec, task_id, trial, position, kinds)` is the plan itself, a pure function: HMAC-SHA256 keyed by the run's
secret (`spec.salt`, `kernel.fault_spec`) over `seed:task_id:trial:position` gives two numbers in [0, 1); the call
is faulted when the first is below `spec.rate`, with the kind the second picks (uniformly) among `kinds`, the
spec's kinds this call admits. So the same run twice faults the same calls in the same way, `--resume` keeps the
plan (it keeps the secret), nothing is drawn from a global random state, and no agent can predict the plan from
the published seed: the secret is published only once the run is over, and then anyone reproduces the plan. The
gateway never plans without a secret (`mcp_gateway.models`); an empty key here is for unit tests alone.

`FaultPlan` walks one battle through it: `next(tool)` counts the battle's faultable calls (`position`,
from 1: every call about to be forwarded, except the benchmark's scaffolding, `supervisor` and `api_docs`,
which are never faulted and not counted) and applies the one rule that depends on the agent: the same API
is never faulted more than `max_consecutive` times in a row (an unfaulted call of it resets its count), so
an agent that retries always gets through and every task stays solvable. A kind a call does not admit is
never drawn for it: `empty` only for a GET whose docs answer a list (an empty page), `lost_response` only for a
call that changes state (not a GET, not a login).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import NamedTuple

from kernel.fault_spec import FaultKind, FaultSpec
from mcp_gateway.tools import ToolSpec

NEVER_FAULTED_APPS = ("supervisor", "api_docs")
"""The benchmark's scaffolding: credentials, `complete_task`, the API docs."""


class PlannedFault(NamedTuple):
    """A call the plan faults: its position among the battle's faultable calls and the kind."""

    position: int
    kind: FaultKind


def draw(spec: FaultSpec, task_id: str, trial: int, position: int,
         kinds: Sequence[FaultKind] | None = None) -> FaultKind | None:
    """The kind of fault for the `position`-th faultable call of (`task_id`, `trial`), or None (forward it).

    `kinds`: the kinds this call admits (default: the spec's); none admitted means no fault."""
    key = bytes.fromhex(spec.salt) if spec.salt else b""
    digest = hmac.new(key, f"{spec.seed}:{task_id}:{trial}:{position}".encode(), hashlib.sha256).digest()
    if int.from_bytes(digest[:8], "big") / 2**64 >= spec.rate:
        return None
    admitted = list(spec.kinds if kinds is None else kinds)
    if not admitted:
        return None
    return admitted[int.from_bytes(digest[8:16], "big") % len(admitted)]


def is_faultable(tool: ToolSpec) -> bool:
    """False for the benchmark's scaffolding (never faulted, not counted)."""
    return tool.app_name not in NEVER_FAULTED_APPS


def admitted_kinds(spec: FaultSpec, tool: ToolSpec) -> list[FaultKind]:
    """The spec's kinds that `tool` admits: `empty` only for a GET whose docs answer a list, `lost_response` only
    for a call that changes state."""
    return [kind for kind in spec.kinds if _admits(tool, kind)]


def _admits(tool: ToolSpec, kind: FaultKind) -> bool:
    if kind == "empty":
        return tool.method == "GET" and tool.answers_list
    if kind == "lost_response":
        return tool.method != "GET" and not tool.is_login
    return True


class FaultPlan:
    """One battle's walk through the plan (module docstring). Not thread-safe: the gateway calls it from its loop."""

    def __init__(self, spec: FaultSpec, task_id: str, trial: int) -> None:
        self.spec, self.task_id, self.trial = spec, task_id, trial
        self.position = 0
        self._streak: dict[str, int] = {}

    def next(self, tool: ToolSpec) -> PlannedFault | None:
        """The fault for this call of `tool` (about to be forwarded), or None."""
        if not is_faultable(tool):
            return None
        self.position += 1
        kind = draw(self.spec, self.task_id, self.trial, self.position, admitted_kinds(self.spec, tool))
        if kind is None or self._streak.get(tool.name, 0) >= self.spec.max_consecutive:
            self._streak[tool.name] = 0
            return None
        self._streak[tool.name] = self._streak.get(tool.name, 0) + 1
        return PlannedFault(self.position, kind)
