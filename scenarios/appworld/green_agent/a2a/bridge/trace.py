"""The in-band bridge's part of the battle trace: each message the purple sent, each message we sent back.

`BridgeTrace(path, battle_id)` appends to the bridge's trace log (`kernel.trace_log.BRIDGE_TRACE_FILE` in the
assessment's logs folder, shared by its battles; the Green gathers a battle's records at archive time,
`green_agent.trace.hooks.gather_battle`). The battle id is the A2A context id the engine sends the task in.
- `sent(text)`: one `green_message` per message the purple was sent (the first: the task; then a tool
  result, a REPL output or a corrective message), its `note` saying which;
- `received(reply, call)`: one `agent_message` per reply read (a step): its text parts as sent, its data
  parts, the tool call or code it held (`tool`, `arguments`), the usage it reported;
- `ended(report)`: one `green_message` noting how the conversation ended (the purple is sent nothing then);
- `learn(response)`: the secret values a tool result holds under a credential key (a login's access token, the
  supervisor's passwords) are scrubbed from this battle's records from then on (`kernel.scrubber`).
Every record goes through `kernel.trace_log` (bounded: each text cut at 20,000 characters; redacted: the
purple's credentials are registered secrets; the MCP endpoint and its token are never in a message to the
purple). Never raises: a trace never stops a conversation; with no path (a bridge started without
`--trace-log`) nothing is written.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

from green_agent.models.bridge import BridgeReport
from kernel.a2a_tools import ToolCall
from kernel.redaction import secret_values
from kernel.scrubber import register_battle_secrets
from kernel.trace_log import now, writer_for
from kernel.trace_record import TraceRecord

log = logging.getLogger(__name__)


class BridgeTrace:
    """One conversation's records (see the module docstring)."""

    def __init__(self, path: Path | None, battle_id: str | None, code: bool = False) -> None:
        self.writer = writer_for(Path(path)) if path is not None and battle_id else None
        self.battle_id = battle_id or ""
        self.code = code
        self._sent = 0
        self._held: str | ToolCall | None = None

    def sent(self, text: str) -> None:
        """A message about to be sent to the purple."""
        if self._sent == 0:
            note = "the task"
        elif isinstance(self._held, ToolCall):
            note = "REPL output" if self.code else f"tool result ({self._held.name})"
        else:
            note = "corrective message"
        self._sent += 1
        self._write("green_message", text=text, note=note)

    def received(self, reply: Any, call: str | ToolCall | None) -> None:
        """One reply read from the purple, and what it held (a tool call, a problem in words, or None: unreadable)."""
        self._held = call
        fields: dict[str, Any] = {"text": reply.text}
        arguments: dict[str, Any] = {}
        if reply.data:
            arguments["data_parts"] = reply.data
        if isinstance(call, ToolCall):
            fields["tool"] = call.name
            arguments["call"] = call.arguments
        elif isinstance(call, str):
            fields["note"] = f"no tool call: {call}"
        else:
            fields["note"] = "the reply could not be read as a tool call"
        if arguments:
            fields["arguments"] = arguments
        usage = _usage(reply.metadata)
        if usage:
            fields["usage"] = usage
        self._write("agent_message", **fields)

    def ended(self, report: BridgeReport) -> None:
        """How the conversation ended (nothing more is sent to the purple)."""
        self._write("green_message", note=f"the end ({report.ended_by}): {report.message}")

    def learn(self, response: Any) -> None:
        """Scrub the values `response` (a tool's answer, AppWorld's) holds under credential keys from now on."""
        if self.battle_id:
            register_battle_secrets(self.battle_id, secret_values(response))

    def _write(self, kind: str, **fields: Any) -> None:
        if self.writer is None:
            return
        try:
            self.writer.append(TraceRecord(at=now(), battle_id=self.battle_id, kind=kind,  # type: ignore[arg-type]
                                           source="bridge", **fields))
        except Exception as exc:  # noqa: BLE001 - a trace never stops a conversation
            log.error("bridge trace record not written: %s", type(exc).__name__)


def _usage(metadata: Any) -> dict[str, float] | None:
    """The token counts a reply's metadata reported (numbers only), if any."""
    usage = metadata.get("usage") if isinstance(metadata, dict) else None
    if not isinstance(usage, dict):
        return None
    found = {str(k)[:64]: float(v) for k, v in list(usage.items())[:32]
             if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}
    return found or None
