"""The Green's HTTP to a purple: we choose where we connect, and its bytes are read with a limit before parsing.

- `BoundedTransport` (an httpx transport) reads every response body of a purple whole but at most
  `MAX_CARD_BYTES` (GET: its agent card) or `MAX_REPLY_BYTES` (anything else: its A2A replies), decodes a
  compressed body within the same limit, and checks the JSON's nesting (`kernel.bounded_json`) before
  a2a-sdk or pydantic sees a byte. A body over a limit raises `PurpleBytesRefused`; so does one nested too
  deep. `answered` counts the responses whose headers arrived: a failure after that is caused by the
  purple's bytes (its fault once it had the task), a failure before it is the connection's.
- `fetch_card` reads the card through that transport and sets its `url` to the participant URL the
  request gave (as the platform's gateway rewrites cards): a purple's card never chooses where the
  Green connects.
- `split_credentials` takes user info (`http://user:pass@host/`) out of a participant URL: the clean URL
  is the one stored, logged and reported; the credentials travel only as HTTP Basic auth.
"""

from __future__ import annotations

import json
import zlib
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx
from a2a.types import AgentCard, TransportProtocol
from pydantic import ValidationError

from green_agent.a2a.card import CARD_PATHS
from kernel.bounded_json import JsonTooDeep, check_depth

MAX_REPLY_BYTES = 1024 * 1024
"""One A2A reply's HTTP body: the protocol reads at most 100,000 characters of text, JSON-escaped (<= 6 bytes each)
plus the envelope fit well within it."""
MAX_CARD_BYTES = 64 * 1024
AUTH_ENV = "APPWORLD_PURPLE_AUTH"
"""The bridge process's environment variable holding `user:password` of a participant URL (never argv)."""


class PurpleBytesRefused(Exception):
    """A purple's response was received but refused unparsed (too large, nested too deep)."""


class Credentials(NamedTuple):
    url: str
    """The participant URL without user info."""
    auth: tuple[str, str] | None
    """(user, password) from the URL's user info, if it had any."""


def split_credentials(url: str) -> Credentials:
    """`http://u:p@host:1/x` -> (`http://host:1/x`, ("u", "p")); a URL without user info is returned as it is."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return Credentials(url, None)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return Credentials(clean, (unquote(parts.username or ""), unquote(parts.password or "")))


def auth_from_env(value: str | None) -> tuple[str, str] | None:
    """`user:password` (AUTH_ENV) -> the pair; None when unset."""
    if not value:
        return None
    user, _, password = value.partition(":")
    return user, password


class BoundedTransport(httpx.AsyncBaseTransport):
    """Every response body read whole within a byte limit and depth-checked (see the module docstring)."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None, reply_limit: int = MAX_REPLY_BYTES,
                 card_limit: int = MAX_CARD_BYTES) -> None:
        self._inner = inner or httpx.AsyncHTTPTransport()
        self.reply_limit, self.card_limit = reply_limit, card_limit
        self.answered = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["Accept-Encoding"] = "identity"
        response = await self._inner.handle_async_request(request)
        self.answered += 1
        what, limit = ("agent card", self.card_limit) if request.method == "GET" else ("reply", self.reply_limit)
        try:
            body = await _read_within(response.stream, limit, what)
        finally:
            await response.aclose()
        body = _decoded(body, response.headers.get("content-encoding", ""), limit, what)
        try:
            check_depth(body)
        except JsonTooDeep as exc:
            raise PurpleBytesRefused(f"the purple's {what} was refused unread: {exc}") from None
        headers = [(k, v) for k, v in response.headers.multi_items()
                   if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
        return httpx.Response(response.status_code, headers=headers, content=body, extensions=response.extensions)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def _read_within(stream: Any, limit: int, what: str) -> bytes:
    body = bytearray()
    async for chunk in stream:
        body += chunk
        if len(body) > limit:
            raise PurpleBytesRefused(f"the purple's {what} is larger than {limit} bytes; it was not read further")
    return bytes(body)


def _decoded(body: bytes, encoding: str, limit: int, what: str) -> bytes:
    """A gzip/deflate body inflated within `limit`; any other (or a stale) Content-Encoding leaves it as it is."""
    if encoding.strip().lower() not in ("gzip", "deflate"):
        return body
    try:
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 32)
        data = inflater.decompress(body, limit + 1)
    except zlib.error:
        return body  # a proxy rewrote the body and left the header: read it as sent
    if len(data) > limit or inflater.unconsumed_tail:
        raise PurpleBytesRefused(f"the purple's {what} inflates to more than {limit} bytes; it was not read further")
    return data


def bounded_client(timeout: httpx.Timeout, auth: tuple[str, str] | None = None) -> tuple[httpx.AsyncClient,
                                                                                         BoundedTransport]:
    """An httpx client whose every response from the purple goes through a `BoundedTransport`."""
    transport = BoundedTransport()
    return httpx.AsyncClient(transport=transport, timeout=timeout, auth=auth), transport


async def fetch_card(http: httpx.AsyncClient, participant_url: str) -> AgentCard:
    """The purple's agent card (read bounded), its `url` set to `participant_url`; raises ValueError if it serves
    none that validates, PurpleBytesRefused if it is too large, httpx.HTTPError if it cannot be reached."""
    base = participant_url.rstrip("/")
    for path in CARD_PATHS:
        response = await http.get(base + path)
        if response.status_code != 200:
            continue
        try:
            card = AgentCard.model_validate(json.loads(response.content))
        except (ValueError, ValidationError):
            raise ValueError(f"the agent card at {base}{path} is not a valid A2A agent card") from None
        # only our choice of endpoint is left for a2a-sdk's client factory to pick from
        return card.model_copy(update={"url": base + "/", "preferred_transport": TransportProtocol.jsonrpc,
                                       "additional_interfaces": None, "supports_authenticated_extended_card": False})
    raise ValueError(f"{base} serves no agent card")
