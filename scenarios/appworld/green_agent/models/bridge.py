"""The bridge's report: how the in-band bridge (`green_agent.a2a.bridge`) ended a conversation, and whose fault.

The bridge is the Green's own built-in Blue facing an untrusted purple. It ends its A2A task with
one DataPart holding a `BridgeReport` (`data["bridge_report"]`). The engine reads it only from a
battle whose choices say the Blue is the built-in bridge (`BattleChoices.bridge`), never from any
other Blue: a purple cannot forge it (it never talks to the engine), and an external Blue's DataPart
is ignored.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from kernel.a2a_tools import PROTOCOL
from kernel.a2a_usage import PurpleUsage

REPORT_KEY = "bridge_report"
SECRETS_KEY = "battle_secrets"
"""The engine's message to the bridge carries, in a DataPart under this key, the secret values known for the battle
(the supervisor's passwords), so the bridge scrubs them from its records; the purple is never sent them."""
FaultOwner = Literal["blue", "green"]
EndedBy = Literal["complete_task", "max_steps", "deadline", "purple_error", "purple_dropped", "turn_timeout",
                  "purple_malformed", "purple_unreachable", "gateway_error", "bridge_error"]
BLUE_FAULTS: frozenset[str] = frozenset({"max_steps", "purple_error", "purple_dropped", "turn_timeout",
                                         "purple_malformed"})
"""How a conversation can end by the purple's doing (its bytes arrived, or it had the task): judged, counted.
`purple_malformed`: a reply (or card) that was received and refused: too large, nested too deep, not JSON, not a
valid A2A response, or an exception that arose while the bridge handled those bytes."""


class BridgeReport(BaseModel):
    """One conversation of the bridge with a purple (one battle)."""

    protocol: str = Field(default=PROTOCOL, description="The in-band tool protocol spoken.")
    ended_by: EndedBy = Field(description="Why the conversation ended.")
    fault_owner: FaultOwner | None = Field(default=None, description=(
        "blue: the purple's fault after it received the task (judged on the world as it stands); "
        "green: ours (the purple unreachable before delivery, the gateway, the bridge): infrastructure; "
        "None: no fault (complete_task, or the deadline)."))
    message: str = Field(default="", description="One line saying what happened (purple text never quoted raw).")
    steps: int = Field(default=0, description="Purple replies read.")
    tool_calls: int = Field(default=0, description="Tool calls run through the gateway.")
    corrections: int = Field(default=0, description="Corrective messages sent for replies that were not tool calls.")
    context_id: str | None = Field(default=None, description="The A2A context of the conversation.")
    purple_s: float = Field(default=0.0, description="Seconds spent waiting for the purple's replies.")
    green_s: float = Field(default=0.0, description="Seconds the bridge spent per the purple's replies: reading "
                           "them, running the tool calls through the gateway, writing the results.")
    gateway_s: float = Field(default=0.0, description="Of green_s, seconds inside the gateway's MCP calls (what an "
                             "MCP Blue would pay for the same calls).")
    usage: PurpleUsage | None = Field(default=None, description=(
        "What the purple reported it spent (`kernel.a2a_usage`): its word, shown beside the verdict, never in it."))
