"""Step 5: hand the task to Blue over A2A, without waiting for Blue's reply.

First the agent card is fetched with a short timeout (`/.well-known/agent.json`, then the a2a 0.3
name `/.well-known/agent-card.json`): an unreachable Blue is a `BlueUnreachableError` (infrastructure,
Blue not charged). Then one JSON-RPC `message/send` is posted to the URL we were given, from a daemon
thread; `dispatch()` returns at once with a `DispatchHandle`. The wait step watches the handle: an A2A
error reply (JSON-RPC `error`, HTTP error, broken connection, a task that ended `failed`) is noticed and
recorded as soon as it arrives.

Who failed (the reply's `delivered` flag): the task was *delivered* once the Blue's server accepted the
connection that carries it. A refused or timed-out connection means the Blue could not be reached before
it was given the task (infrastructure, never its loss); anything after that (an error reply, an HTTP
error, a dropped connection, a crash, a failed A2A task, garbage) is the Blue's own fault (`fault`).

The Blue's bytes are read with a limit before they are parsed: its card at most `MAX_CARD_BYTES`, its reply
at most `MAX_REPLY_BYTES` (a larger reply is a `malformed_reply`, read no further), JSON within
`kernel.bounded_json`'s depth limit.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import Any, Literal

import requests
from pydantic import BaseModel, Field
from urllib3.exceptions import NewConnectionError

from green_agent.models.result import BlueFaultKind
from kernel.trace_context import TRACEPARENT_HEADER
from kernel.bounded_json import loads_bounded
from kernel.errors import BlueUnreachableError
from green_agent.http_sessions import session_for
from green_agent.models.bridge import REPORT_KEY, SECRETS_KEY, BridgeReport
from kernel.scrubber import battle_secrets

log = logging.getLogger(__name__)

CARD_PATHS = ("/.well-known/agent.json", "/.well-known/agent-card.json")
CARD_TIMEOUT_S = 5.0
REPLY_TIMEOUT_S = 24 * 3600.0
MAX_CARD_BYTES = 64 * 1024
MAX_REPLY_BYTES = 1024 * 1024
_READ_CHUNK = 64 * 1024
"""Blue may hold the message/send request for as long as it works; the wait step has its own deadline."""


class AgentCardInfo(BaseModel):
    """The parts of Blue's agent card we record."""

    name: str = Field(default="", description="Agent name from its card.")
    url: str = Field(default="", description="URL the card advertises.")
    version: str | None = Field(default=None, description="Agent version from its card.")


FAILED_TASK_STATES = frozenset({"failed", "rejected", "canceled"})
"""A2A task states a Blue's reply may end in that say it gave up (crashed, refused, cancelled)."""
MAX_ERROR_TEXT = 300
MAX_REPLY_TEXT = 20_000
"""Blue-derived error text kept per reply (data, bounded)."""


class BlueReply(BaseModel):
    """What came back from message/send (if anything yet)."""

    state: Literal["pending", "replied", "error"] = Field(description="pending until Blue answers.")
    at: float | None = Field(default=None, description="monotonic time of the answer.")
    kind: str | None = Field(default=None, description="A2A result kind (message | task) when replied.")
    task_state: str | None = Field(default=None, description="A2A task state when the result is a task.")
    error: str | None = Field(default=None, description="A2A/JSON-RPC or transport error, when state is error.")
    delivered: bool = Field(default=True, description="The Blue's server accepted the task message's connection; "
                            "False only for an error that kept the task from reaching it (infrastructure).")
    fault: BlueFaultKind | None = Field(default=None, description="The Blue's own fault, for an error after delivery.")
    bridge_report: BridgeReport | None = Field(default=None, description=(
        "The built-in bridge's report of its conversation (read only when the dispatch was told the Blue is "
        "the bridge; any other Blue's DataParts are never read)."))
    text: str | None = Field(default=None, description=(
        "The text parts of the Blue's reply (its message, or its task's artifacts and status), at most "
        "MAX_REPLY_TEXT characters: data for the battle's trace, never parsed."))


class DispatchResult(BaseModel):
    """Step 5 output (the record; the live handle travels beside it)."""

    blue_url: str = Field(description="Where the message was sent.")
    agent: AgentCardInfo = Field(description="Blue's card.")
    message_id: str = Field(description="A2A messageId of the task message.")


class DispatchHandle:
    """The in-flight message/send: poll `reply()` without blocking, or `wait_reply` for it to settle."""

    def __init__(self, result: DispatchResult) -> None:
        self.result = result
        self._reply = BlueReply(state="pending")
        self._lock = threading.Lock()
        self._settled = threading.Event()
        self.thread: threading.Thread | None = None
        self.sent_at = time.monotonic()

    def reply(self) -> BlueReply:
        with self._lock:
            return self._reply.model_copy()

    def wait_reply(self, timeout_s: float) -> BlueReply:
        """The reply once it is no longer pending, or as it stands after `timeout_s` seconds."""
        self._settled.wait(max(0.0, timeout_s))
        return self.reply()

    def _set(self, reply: BlueReply) -> None:
        with self._lock:
            self._reply = reply
            if reply.state != "pending":
                self._settled.set()


def fetch_agent_card(blue_url: str, session: requests.Session | None = None,
                     timeout_s: float = CARD_TIMEOUT_S) -> AgentCardInfo:
    """GET Blue's agent card; raise BlueUnreachableError if neither well-known path answers."""
    session = session or session_for(blue_url)
    base = blue_url.rstrip("/")
    problems = []
    for path in CARD_PATHS:
        try:
            with session.get(base + path, timeout=timeout_s, stream=True) as streamed:
                response = read_within(streamed, MAX_CARD_BYTES)
        except requests.RequestException as exc:
            raise BlueUnreachableError(f"Blue agent at {blue_url} is unreachable ({type(exc).__name__}): "
                                       "is it running, and is the URL right?") from exc
        if response is None:
            raise BlueUnreachableError(f"Blue agent at {base + path} served an agent card larger than "
                                       f"{MAX_CARD_BYTES} bytes")
        if response.status_code == 200:
            try:
                return AgentCardInfo.model_validate(response.json())
            except ValueError as exc:
                raise BlueUnreachableError(f"Blue agent at {base + path} served an invalid agent card") from exc
        problems.append(f"{path}: HTTP {response.status_code}")
    raise BlueUnreachableError(f"Blue agent at {blue_url} serves no agent card ({'; '.join(problems)})")


def build_send_request(text: str, message_id: str, context_id: str | None = None,
                       secrets: list[str] | None = None, traceparent: str | None = None) -> dict[str, Any]:
    """A2A 0.3 JSON-RPC `message/send` with one text part (and, for our bridge only, the battle's `secrets`);
    `traceparent`: the battle's W3C trace context, in the message's metadata (and the request's header)."""
    message: dict[str, Any] = {"kind": "message", "role": "user", "messageId": message_id,
                               "parts": [{"kind": "text", "text": text}]}
    if traceparent:
        message["metadata"] = {TRACEPARENT_HEADER: traceparent}
    if secrets:
        message["parts"].append({"kind": "data", "data": {SECRETS_KEY: secrets}})
    if context_id:
        message["contextId"] = context_id
    return {"jsonrpc": "2.0", "id": message_id, "method": "message/send", "params": {"message": message}}


def dispatch(blue_url: str, text: str, session: requests.Session | None = None, context_id: str | None = None,
             card_timeout_s: float = CARD_TIMEOUT_S, bridge: bool = False,
             traceparent: str | None = None) -> DispatchHandle:
    """Step 5: fetch Blue's card, then send the task message in the background and return at once.

    `bridge`: the Blue is the Green's built-in in-band bridge, whose `BridgeReport` DataPart is read; it is sent
    the battle's known secret values (`kernel.scrubber.battle_secrets`) to scrub from its records. No other Blue is.
    `traceparent`: the battle's W3C trace context (`kernel.trace_context`), sent in the message's metadata and
    as the request's `traceparent` header, so an agent instrumented with OpenTelemetry continues the battle's trace."""
    session = session or session_for(blue_url)
    card = fetch_agent_card(blue_url, session, card_timeout_s)
    message_id = uuid.uuid4().hex
    handle = DispatchHandle(DispatchResult(blue_url=blue_url, agent=card, message_id=message_id))
    secrets = battle_secrets(context_id) if bridge and context_id else None
    payload = build_send_request(text, message_id, context_id, secrets, traceparent)
    headers = {TRACEPARENT_HEADER: traceparent} if traceparent else {}
    handle.thread = threading.Thread(target=_send, args=(session, blue_url, payload, handle, bridge, headers),
                                     name=f"a2a-send-{message_id[:8]}", daemon=True)
    handle.thread.start()
    return handle


def _send(session: requests.Session, url: str, payload: dict[str, Any], handle: DispatchHandle,
          bridge: bool = False, headers: dict[str, str] | None = None) -> None:
    try:
        with session.post(url, json=payload, timeout=(CARD_TIMEOUT_S, REPLY_TIMEOUT_S), stream=True,
                          headers=headers or None) as streamed:
            response = read_within(streamed, MAX_REPLY_BYTES)
    except requests.RequestException as exc:
        handle._set(bridge_failed(f"{type(exc).__name__}") if bridge else transport_error_reply(exc))
        return
    if response is None:
        handle._set(bridge_failed("reply too large") if bridge else _fault(
            time.monotonic(), "malformed_reply", f"the reply is larger than {MAX_REPLY_BYTES} bytes (not read further)"))
        return
    handle._set(parse_reply(response, bridge))


class ReadReply:
    """A Blue's HTTP answer, read whole within a limit: what `parse_reply` needs of a `requests.Response`."""

    def __init__(self, status_code: int, content: bytes, encoding: str | None = None) -> None:
        self.status_code, self.content, self.encoding = status_code, content, encoding or "utf-8"

    @property
    def text(self) -> str:
        return self.content.decode(self.encoding, errors="replace")

    def json(self) -> Any:
        """The body as JSON, parsed only within the depth limit (ValueError otherwise)."""
        return loads_bounded(self.content)


def read_within(response: requests.Response, limit: int) -> ReadReply | None:
    """`response`'s body (opened with stream=True), or None if it is larger than `limit` bytes (read no further)."""
    body = bytearray()
    for chunk in response.iter_content(_READ_CHUNK):
        body += chunk
        if len(body) > limit:
            return None
    return ReadReply(response.status_code, bytes(body), response.encoding)


def transport_error_reply(exc: requests.RequestException) -> BlueReply:
    """A send that raised: undelivered if no connection was made, else the Blue dropped it (its fault)."""
    text = f"{type(exc).__name__}: {str(exc)[:200]}"
    if never_connected(exc):
        return BlueReply(state="error", at=time.monotonic(), error=text, delivered=False)
    return BlueReply(state="error", at=time.monotonic(), error=text, fault="connection_dropped")


def never_connected(exc: requests.RequestException) -> bool:
    """True when the request never reached the Blue's server (refused, unresolvable, connect timeout)."""
    if isinstance(exc, requests.ConnectTimeout):
        return True
    if not isinstance(exc, requests.ConnectionError):
        return False
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, NewConnectionError) or isinstance(exc.args[0] if exc.args else None, NewConnectionError)


def parse_reply(response: ReadReply | requests.Response, bridge: bool = False) -> BlueReply:
    """Classify Blue's answer to message/send (with `bridge`, the built-in bridge's report decides)."""
    if bridge:
        return bridge_reply(response)
    now = time.monotonic()
    if response.status_code != 200:
        return _fault(now, "http_error", f"HTTP {response.status_code}: {response.text[:200]}")
    try:
        body = response.json()
    except ValueError:
        return _fault(now, "malformed_reply", f"malformed JSON-RPC reply: {response.text[:120]!r}")
    if not isinstance(body, dict):
        return _fault(now, "malformed_reply", "JSON-RPC reply is not an object")
    if body.get("error"):
        error = body["error"]
        detail = f"{error.get('code')}: {error.get('message')}" if isinstance(error, dict) else str(error)
        return _fault(now, "error_reply", f"A2A error {detail}")
    result = body.get("result") if isinstance(body.get("result"), dict) else {}
    status = result.get("status") if isinstance(result.get("status"), dict) else {}
    task_state = status.get("state") if isinstance(status.get("state"), str) else None
    if result.get("kind") == "task" and task_state in FAILED_TASK_STATES:
        return _fault(now, "task_failed", f"A2A task ended {task_state}: {_status_text(status)}")
    return BlueReply(state="replied", at=now, kind=result.get("kind"), task_state=task_state,
                     text=reply_text(result))


def bridge_reply(response: ReadReply | requests.Response) -> BlueReply:
    """The built-in bridge's answer: its report says how the conversation ended and whose fault it was.

    The bridge is our code: an answer without a valid report (it crashed, or answered garbage) is ours."""
    try:
        body = response.json() if response.status_code == 200 else None
    except ValueError:
        body = None
    result = body.get("result") if isinstance(body, dict) and isinstance(body.get("result"), dict) else None
    report = bridge_report_of(result) if result is not None else None
    if report is None:
        return bridge_failed(f"HTTP {response.status_code}, no bridge report")
    status = result.get("status") if isinstance(result.get("status"), dict) else {}
    return BlueReply(state="replied", at=time.monotonic(), kind=result.get("kind"), task_state=status.get("state"),
                     bridge_report=report)


def bridge_failed(detail: str) -> BlueReply:
    """The bridge itself failed (no report): infrastructure, never the purple's fault."""
    return BlueReply(state="replied", at=time.monotonic(), bridge_report=BridgeReport(
        ended_by="bridge_error", fault_owner="green", message=f"the in-band bridge failed ({detail[:100]})"))


def bridge_report_of(result: dict[str, Any]) -> BridgeReport | None:
    """The `BridgeReport` DataPart of the bridge's finished A2A task, if there is a valid one."""
    for artifact in result.get("artifacts") or []:
        for part in (artifact.get("parts") or []) if isinstance(artifact, dict) else []:
            data = part.get("data") if isinstance(part, dict) and part.get("kind") == "data" else None
            if isinstance(data, dict) and REPORT_KEY in data:
                try:
                    return BridgeReport.model_validate(data[REPORT_KEY])
                except ValueError:
                    return None
    return None


def reply_text(result: dict[str, Any]) -> str | None:
    """The text parts of a reply's message, or of its task's artifacts and status message, joined and bounded."""
    holders = [result] if result.get("kind") == "message" else [
        *[a for a in result.get("artifacts") or [] if isinstance(a, dict)],
        (result.get("status") or {}).get("message") if isinstance(result.get("status"), dict) else None]
    texts: list[str] = []
    for holder in holders:
        parts = holder.get("parts") if isinstance(holder, dict) and isinstance(holder.get("parts"), list) else []
        texts += [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    text = "\n".join(texts)
    if len(text) > MAX_REPLY_TEXT:
        return text[:MAX_REPLY_TEXT] + f"\n[... cut: {len(text):,} characters in all]"
    return text or None


def _fault(at: float, kind: BlueFaultKind, error: str) -> BlueReply:
    return BlueReply(state="error", at=at, error=error[:MAX_ERROR_TEXT], fault=kind)


def _status_text(status: dict[str, Any]) -> str:
    """The text parts of a task status message (a crashed Blue's error text), or 'no message'."""
    message = status.get("message") if isinstance(status.get("message"), dict) else {}
    parts = message.get("parts") if isinstance(message.get("parts"), list) else []
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return " ".join(texts)[:MAX_ERROR_TEXT] or "no message"
