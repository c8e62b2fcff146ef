"""What a faulted call answers, in each mode, and the exact text the agent receives (the evidence of delivery).

Every loud kind is an HTTP failure with a JSON body `{"message": ...}`, as AppWorld's APIs answer failures:
- `error`: 503, the service is temporarily unavailable;
- `rate_limit`: 429, the body says when to retry (`RETRY_AFTER_S`; AppWorld's client shows an agent the body,
  never the headers);
- `timeout`: 504 after `timeout_s` (a gateway that gave up waiting; AppWorld's requester sets no timeout of its
  own, so this is how a hung call ends inside the execution's time limit).
Silent and corrupt kinds answer 200: `empty` with `[]`, `malformed` with text cut short that is not JSON.
`lost_response` answers exactly as `timeout` does (the agent cannot tell them apart: it must check whether its
write happened), though its call was forwarded (`Gateway._lost`).

Tools mode shows the loud kinds as an API error (`{"response": {"message", "is_error": true}}`, as the gateway
shows any API failure) and `malformed` as the cut text itself; code mode raises what AppWorld's requester
raises: `Exception("Response status code is <code>:\\n<body>")` (`code_message`, the child's own format), and
for `malformed` a JSON decode error. `delivered` is the text the agent gets, kept in the call's record.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from kernel.fault_spec import FaultKind
from mcp_gateway.tools import ToolSpec

RETRY_AFTER_S = 1
STATUS: dict[FaultKind, int] = {"error": 503, "rate_limit": 429, "timeout": 504, "empty": 200, "malformed": 200,
                                "lost_response": 504}


class FaultAnswer(NamedTuple):
    """A faulted call's answer: the status, the JSON body, or `text` that is not JSON (malformed)."""

    kind: FaultKind
    status_code: int
    body: Any = None
    text: str | None = None

    @property
    def message(self) -> str | None:
        """The failure message of a loud kind (None for a 200)."""
        return self.body["message"] if self.status_code != 200 else None

    def tool_payload(self) -> dict[str, Any]:
        """The gateway's tools-mode payload (an API error's, or the answer's)."""
        if self.status_code != 200:
            return {"response": {"message": self.message, "is_error": True}}
        return {"response": self.body}

    def tool_text(self) -> str:
        """The text content an MCP client receives in tools mode (as `Gateway._result` renders an API's answer)."""
        if self.text is not None:
            return '{"response": ' + self.text
        return json.dumps(self.tool_payload(), ensure_ascii=False)

    def code_message(self) -> str:
        """What the agent's code receives: the exception's message (a failure), or the text it got (a 200)."""
        if self.text is not None:
            return self.text
        compact = json.dumps(self.body, ensure_ascii=False, separators=(",", ":"))
        return compact if self.status_code == 200 else f"Response status code is {self.status_code}:\n{compact}"


def fault_answer(kind: FaultKind, tool: ToolSpec, timeout_s: float) -> FaultAnswer:
    """The answer of `kind` for a call of `tool`."""
    app = tool.app_name
    if kind == "error":
        return FaultAnswer(kind, 503, {"message": f"Service temporarily unavailable (HTTP 503): the {app} service "
                                                  "could not handle the request right now. Try again."})
    if kind == "rate_limit":
        return FaultAnswer(kind, 429, {"message": f"Too many requests (HTTP 429): the {app} service's rate limit "
                                                  f"was exceeded. Retry after {RETRY_AFTER_S} second(s)."})
    if kind in ("timeout", "lost_response"):
        return FaultAnswer(kind, 504, {"message": f"Gateway timeout (HTTP 504): the {app} service did not answer "
                                                  f"within {timeout_s:g} seconds. Try again."})
    if kind == "empty":
        return FaultAnswer(kind, 200, [])
    return FaultAnswer(kind, 200, text=cut_short(tool))


def is_silent(kind: FaultKind, code: bool) -> bool:
    """The agent is not told: an `empty` page, and a `malformed` answer in tools mode (a 200 with no error flag; in
    code mode decoding it raises, loud)."""
    return kind == "empty" or (kind == "malformed" and not code)


def cut_short(tool: ToolSpec) -> str:
    """An API's answer cut off mid-way: the start of its JSON whose end never came (never valid JSON)."""
    return '[{"' if tool.answers_list else '{"'
