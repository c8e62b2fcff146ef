"""Step 6: wait until Blue completes the task, or the deadline passes.

`POST /task_completed` on the env server is the authority. Detection is fast because the gateway
pushes: the loop long-polls `GET /control/completion` in slices of `authority_every_s` (2 s), which
answers the moment Blue calls `supervisor__complete_task` through the gateway; the completion is then
confirmed with `/task_completed`. Between slices `/task_completed` is asked anyway, so a Blue that
completed without the gateway (straight to the APIs or env server) is seen within 2 s. Without a
gateway the loop polls `/task_completed` every `fallback_poll_s` (0.25 s).

The loop also watches Blue's A2A reply (who failed: `green_agent.steps.dispatch`):
- an error that kept the task message from reaching the Blue (connection refused) is a
  `BlueUnreachableError`: infrastructure, retried, the Blue not charged;
- the Blue's own fault after it was given the task (an error reply, an HTTP error, a dropped
  connection, a failed A2A task) ends the wait at once with `ended_by: blue_error` and the fault named;
  the world is judged as it stands and the battle counts (else a Blue could dodge every task it cannot
  solve by answering it with an error);
- a normal reply without completion ends the wait after `reply_grace_s` (Blue says it is done but
  never called `complete_task`; judged like a timeout);
- the in-band bridge's report (read only for the built-in bridge, `dispatch(bridge=True)`) decides for
  its battles: `fault_owner: green` is a `BridgeFaultError` (infrastructure, retried), `blue` is the
  purple's own fault (`ended_by: blue_error`, named as above); its report is kept in the result.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, Field

from green_agent.appworld_client import AppWorldClient
from green_agent.models.result import BlueFaultRecord
from green_agent.steps.dispatch import DispatchHandle
from green_agent.models.bridge import BridgeReport
from green_agent.models.result import BlueFaultKind
from kernel.errors import BlueUnreachableError, BridgeFaultError
from green_agent.gateway_client import GatewayClient

log = logging.getLogger(__name__)

BRIDGE_FAULT_KINDS: dict[str, BlueFaultKind] = {"purple_error": "error_reply", "purple_dropped": "connection_dropped",
                                                "turn_timeout": "turn_timeout", "max_steps": "max_steps",
                                                "purple_malformed": "malformed_reply"}
"""How the bridge's purple faults (`models.bridge.BLUE_FAULTS`) are named in the result's blue_fault."""
AUTHORITY_EVERY_S = 2.0
FALLBACK_POLL_S = 0.25
REPLY_GRACE_S = 30.0


class CompletionResult(BaseModel):
    """Step 6 output."""

    completed: bool = Field(description="True iff /task_completed said so before the deadline.")
    ended_by: Literal["completed", "deadline", "blue_replied", "blue_error"] = Field(description="Why the wait ended.")
    detected_via: Literal["gateway", "task_completed"] | None = Field(default=None, description="Which signal saw it first.")
    waited_s: float = Field(description="Seconds spent waiting.")
    gateway_status: str | None = Field(default=None, description="complete_task status seen by the gateway.")
    blue_reply: str | None = Field(default=None, description="pending | replied | error, at the end of the wait.")
    detection_latency_s: float | None = Field(
        default=None, description="Gateway's complete_task time to our confirmed detection (gateway path only).")
    blue_fault: BlueFaultRecord | None = Field(default=None, description="The Blue's own fault (ended_by blue_error).")
    bridge_report: BridgeReport | None = Field(default=None, description="The in-band bridge's report (bridge only).")


def wait_for_completion(client: AppWorldClient, task_id: str, battle_id: str, deadline_s: float,
                        gateway: GatewayClient | None = None, handle: DispatchHandle | None = None, *,
                        authority_every_s: float = AUTHORITY_EVERY_S, fallback_poll_s: float = FALLBACK_POLL_S,
                        reply_grace_s: float = REPLY_GRACE_S) -> CompletionResult:
    """Step 6: block until Blue completes, the deadline passes, or Blue replied without completing."""
    start = time.monotonic()
    end = start + deadline_s
    use_gateway = gateway is not None
    gateway_status: str | None = None

    def done(completed: bool, ended_by: str, via: str | None = None,
             fault: BlueFaultRecord | None = None) -> CompletionResult:
        reply = handle.reply().state if handle else None
        return CompletionResult(completed=completed, ended_by=ended_by, detected_via=via,  # type: ignore[arg-type]
                                waited_s=round(time.monotonic() - start, 3), gateway_status=gateway_status,
                                blue_reply=reply, blue_fault=fault,
                                bridge_report=handle.reply().bridge_report if handle else None)

    while True:
        if client.task_completed(task_id):
            return done(True, "completed", "task_completed")
        remaining = end - time.monotonic()
        if remaining <= 0:
            return done(False, "deadline")
        fault = _blue_fault(handle, client, task_id)
        if fault is not None:
            return done(False, "blue_error", fault=fault)
        if handle is not None and _grace_over(handle, reply_grace_s):
            return done(False, "blue_replied")
        if use_gateway:
            assert gateway is not None
            signal = gateway.completion(battle_id, min(authority_every_s, remaining))
            if signal.completed:
                gateway_status = signal.status
                if _confirm(client, task_id):
                    result = done(True, "completed", "gateway")
                    result.detection_latency_s = _latency(signal.at)
                    return result
                log.warning("gateway saw complete_task but /task_completed disagrees; polling the env server only")
                use_gateway = False
        else:
            time.sleep(min(fallback_poll_s, max(remaining, 0.0)))


def await_bridge_report(handle: DispatchHandle | None, completion: CompletionResult, grace_s: float) -> CompletionResult:
    """The bridge answers just after the purple's complete_task, which the wait may see first: give its report
    up to `grace_s` to arrive, so the result always says how the conversation ended."""
    reply = handle.wait_reply(grace_s) if handle else None  # woken by the reply itself, not a 50 ms poll
    return completion.model_copy(update={"bridge_report": reply.bridge_report if reply else None,
                                         "blue_reply": reply.state if reply else completion.blue_reply})


def _latency(at: object) -> float | None:
    """Seconds from the gateway's completion timestamp (ISO 8601 UTC, same host clock) to now."""
    try:
        seen = datetime.fromisoformat(str(at).replace("Z", "+00:00"))
    except ValueError:
        return None
    if seen.tzinfo is None:
        seen = seen.replace(tzinfo=timezone.utc)
    return round(max(0.0, (datetime.now(timezone.utc) - seen).total_seconds()), 4)


def _confirm(client: AppWorldClient, task_id: str, tries: int = 3) -> bool:
    """Ask the authority; a short retry covers the APIs server committing just after the gateway saw the call."""
    for attempt in range(tries):
        if client.task_completed(task_id):
            return True
        time.sleep(0.05 * (attempt + 1))
    return False


def _blue_fault(handle: DispatchHandle | None, client: AppWorldClient, task_id: str) -> BlueFaultRecord | None:
    """The Blue's own fault, if its reply is an error and it has not completed; raises if it was never reached."""
    if handle is None:
        return None
    reply = handle.reply()
    bridge = reply.bridge_report
    if bridge is not None and bridge.fault_owner is not None and not client.task_completed(task_id):
        if bridge.fault_owner == "green":
            raise BridgeFaultError(f"the in-band bridge could not play the battle ({bridge.ended_by}): "
                                   f"{bridge.message}")
        return BlueFaultRecord(kind=BRIDGE_FAULT_KINDS.get(bridge.ended_by, "error_reply"), message=bridge.message,
                               after_s=round(max(0.0, (reply.at or time.monotonic()) - handle.sent_at), 3))
    if reply.state != "error" or client.task_completed(task_id):
        return None
    if not reply.delivered:
        raise BlueUnreachableError(f"Blue at {handle.result.blue_url} could not be reached with the task message "
                                   f"(it served its agent card, then refused the connection): {reply.error}")
    return BlueFaultRecord(kind=reply.fault or "error_reply", message=reply.error or "",
                           after_s=round(max(0.0, (reply.at or time.monotonic()) - handle.sent_at), 3))


def _grace_over(handle: DispatchHandle, grace_s: float) -> bool:
    reply = handle.reply()
    return reply.state == "replied" and reply.at is not None and time.monotonic() - reply.at > grace_s
