"""The bridge's one boundary to a purple: A2A messages in one context, each turn bounded, faults classified.

`PurpleConversation.send(text)` posts one A2A message (a2a-sdk 0.3 client, non-streaming) in the
conversation's context and returns the purple's reply as `PurpleReply` (its TextParts joined, its
DataParts' payloads). Where it connects is ours to choose: the participant URL the request gave, never
the `url` its card names (`green_agent.a2a.purple_http.fetch_card`). Every byte it sends back is read
within a limit and depth-checked before a2a-sdk parses it (`BoundedTransport`).

Every failure becomes a `PurpleFault` saying whether the message was delivered, decided by where it
happened:
- no connection could be opened (or no card answered) before the first message: not delivered (ours to
  retry, `purple_unreachable`);
- its response arrived and anything about it failed (too large, nested too deep, not JSON, a JSON-RPC
  shape or an A2A object that a2a-sdk refuses, a failed A2A task): the purple's (`purple_malformed`, or
  `purple_error` for an error it chose to send), judged and charged, never retried;
- the card was served but was too large or invalid: the purple's too (its bytes), though the task was
  not yet sent: the world is judged as it stands;
- a connection dropped after delivery, or a turn over `turn_timeout_s`: the purple's.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Any

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.errors import (A2AClientError, A2AClientHTTPError, A2AClientJSONError, A2AClientJSONRPCError,
                               A2AClientTimeoutError)
from a2a.types import DataPart, Message, Part, Role, Task, TaskState, TextPart
from pydantic import BaseModel, Field

from green_agent.a2a.purple_http import BoundedTransport, PurpleBytesRefused, bounded_client, fetch_card
from green_agent.a2a.bridge.usage import reply_metadata
from green_agent.models.bridge import EndedBy
from kernel.a2a_tools import MAX_REPLY_CHARS
from kernel.trace_context import TRACEPARENT_HEADER

CARD_TIMEOUT_S = 10.0
MAX_PARTS = 32
SAFE_CONTEXT_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
"""A context id the bridge takes from a purple: a plain id (uuid-like), nothing that can forge a log line."""
FAILED_STATES = (TaskState.failed, TaskState.rejected, TaskState.canceled, TaskState.auth_required)


class PurpleReply(BaseModel):
    """What the purple answered to one message."""

    text: str = Field(description="Its TextParts, joined by newlines (bounded).")
    data: list[Any] = Field(default_factory=list, description="Its DataParts' payloads.")
    metadata: Any = Field(default=None, description="The reply's A2A metadata (its reported usage, if any).")


class PurpleFault(Exception):
    """The purple did not answer a turn; `ended_by` says how, `delivered` whether it had the message."""

    def __init__(self, ended_by: EndedBy, message: str, delivered: bool) -> None:
        super().__init__(message)
        self.ended_by, self.delivered = ended_by, delivered


class PurpleConversation:
    """One A2A conversation (one context id) with the purple at `url`; use as an async context manager."""

    def __init__(self, url: str, turn_timeout_s: float, auth: tuple[str, str] | None = None,
                 traceparent: str | None = None) -> None:
        self.url, self.turn_timeout_s, self.auth, self.traceparent = url, turn_timeout_s, auth, traceparent
        self.context_id = uuid.uuid4().hex
        self._task_id: str | None = None
        self._http: httpx.AsyncClient | None = None
        self._transport: BoundedTransport | None = None
        self._client: Any = None
        self.sent = 0

    async def __aenter__(self) -> "PurpleConversation":
        self._http, self._transport = bounded_client(httpx.Timeout(self.turn_timeout_s, connect=CARD_TIMEOUT_S),
                                                     self.auth)
        if self.traceparent:  # the battle's trace context on every request (a purple's own is never read)
            self._http.headers[TRACEPARENT_HEADER] = self.traceparent
        try:
            card = await asyncio.wait_for(fetch_card(self._http, self.url), CARD_TIMEOUT_S)
        except (PurpleBytesRefused, ValueError) as exc:  # it answered, with bytes we refuse: its own doing
            await self._http.aclose()
            raise PurpleFault("purple_malformed", _short(str(exc)), delivered=True) from None
        except Exception as exc:  # noqa: BLE001 - no card came back: the task was never delivered
            await self._http.aclose()
            raise PurpleFault("purple_unreachable", f"the purple's agent card at {self.url} could not be fetched "
                              f"({type(exc).__name__})", delivered=False) from None
        self._client = ClientFactory(ClientConfig(streaming=False, httpx_client=self._http)).create(card)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._http is not None:
            await self._http.aclose()

    async def send(self, text: str) -> PurpleReply:
        """One turn: send `text`, return the reply; raise PurpleFault (see the module docstring)."""
        message = Message(role=Role.user, parts=[Part(root=TextPart(text=text))], message_id=uuid.uuid4().hex,
                          context_id=self.context_id, task_id=self._task_id,
                          metadata={TRACEPARENT_HEADER: self.traceparent} if self.traceparent else None)
        first = self.sent == 0
        self.sent += 1
        assert self._transport is not None
        answered = self._transport.answered
        try:
            last = await asyncio.wait_for(self._last_event(message), self.turn_timeout_s)
            return self._reply_of(last).model_copy(update={"metadata": reply_metadata(last)})
        except PurpleFault:
            raise
        except (asyncio.TimeoutError, A2AClientTimeoutError):
            raise PurpleFault("turn_timeout", f"the purple did not answer within {self.turn_timeout_s:g} s",
                              delivered=True) from None
        except PurpleBytesRefused as exc:
            raise PurpleFault("purple_malformed", _short(str(exc)), delivered=True) from None
        except A2AClientError as exc:
            if isinstance(exc, A2AClientJSONError) or (self._transport.answered > answered and not isinstance(
                    exc, (A2AClientHTTPError, A2AClientJSONRPCError))):  # a JSON-RPC error is one it chose to send
                raise PurpleFault("purple_malformed", f"the purple's reply could not be read as A2A: "
                                  f"{type(exc).__name__}", delivered=True) from None
            delivered = not (first and _not_connected(exc))
            kind: EndedBy = "purple_error" if delivered else "purple_unreachable"
            if isinstance(exc, A2AClientHTTPError) and _dropped(exc):
                kind = "purple_dropped"
            raise PurpleFault(kind, f"the purple's A2A endpoint failed: {type(exc).__name__} "
                              f"{_short(str(exc))}", delivered=delivered) from None
        except httpx.HTTPError as exc:
            delivered = not (first and isinstance(exc, httpx.ConnectError))
            raise PurpleFault("purple_dropped" if delivered else "purple_unreachable",
                              f"the connection to the purple failed: {type(exc).__name__}", delivered=delivered) from None
        except Exception as exc:  # noqa: BLE001 - see below
            if self._transport.answered > answered:  # it arose reading the purple's reply: a2a-sdk refused its shape
                raise PurpleFault("purple_malformed", f"the purple's reply is not a valid A2A response "
                                  f"({type(exc).__name__})", delivered=True) from None
            raise

    def _adopt_context(self, context_id: str | None) -> None:
        """Reuse the purple's context id (the platform's convention), only if it is a plain id: it is purple text,
        and it reaches our logs and result.json."""
        if context_id and SAFE_CONTEXT_ID.fullmatch(context_id):
            self.context_id = context_id

    async def _last_event(self, message: Message) -> Any:
        last = None
        async for event in self._client.send_message(message):
            last = event
        if last is None:
            raise PurpleFault("purple_error", "the purple answered with no message or task", delivered=True)
        return last

    def _reply_of(self, event: Any) -> PurpleReply:
        if isinstance(event, Message):
            self._adopt_context(event.context_id)
            return _parts_reply(event.parts)
        task: Task = event[0] if isinstance(event, tuple) else event
        self._adopt_context(task.context_id)
        state = task.status.state
        if state in FAILED_STATES:
            raise PurpleFault("purple_error", f"the purple's A2A task ended {state.value}", delivered=True)
        self._task_id = task.id if state == TaskState.input_required else None
        parts = [p for artifact in task.artifacts or [] for p in artifact.parts]
        if task.status.message is not None:
            parts += list(task.status.message.parts)
        return _parts_reply(parts)


def _parts_reply(parts: list[Part]) -> PurpleReply:
    texts, data, size = [], [], 0
    for part in parts[:MAX_PARTS]:
        root = part.root
        if isinstance(root, TextPart) and size <= MAX_REPLY_CHARS:
            texts.append(root.text[: MAX_REPLY_CHARS + 1])
            size += len(root.text)
        elif isinstance(root, DataPart):
            data.append(root.data)
    return PurpleReply(text="\n".join(texts), data=data)


def _not_connected(exc: BaseException) -> bool:
    cause = exc.__cause__
    return isinstance(cause, (httpx.ConnectError, httpx.ConnectTimeout))


def _dropped(exc: A2AClientHTTPError) -> bool:
    return isinstance(exc.__cause__, (httpx.RemoteProtocolError, httpx.ReadError))


def _short(text: str) -> str:
    """At most 160 characters of an error text (it may quote the purple), with control characters dropped."""
    return "".join(ch if ch.isprintable() else " " for ch in text)[:160]
