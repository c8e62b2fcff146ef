"""Forward one tool call to the AppWorld APIs server over HTTP, as AppWorld's own `Requester` does.

Contract:
- login (`POST /<app>/auth/token`): form-encoded `username`, `password`;
- an `access_token` argument becomes the header `Authorization: Bearer <token>`;
- path parameters are substituted into the path (URL-encoded; a value with `/` is refused);
- GET: the remaining arguments go in the query string; POST/PUT/PATCH/DELETE: a JSON body.
- success is any 2xx; the reply body is the API's JSON.

One pooled `requests.Session` per forwarder, explicit timeouts. Calls are forwarded ONE AT A TIME:
AppWorld 0.1.3's APIs server is not safe under concurrent requests (its SQLite handles fail with
"SQLite objects created in a thread can only be used in that same thread" / "Cannot operate on a
closed database", after which every later `/initialize` of the slot fails), so a Blue that fires
calls in parallel must not be able to break the world for the battles after it. `forward` never raises for
what happens on the wire: every outcome is an `ApiReply`; arguments that cannot be made into a request (a path
parameter with `/`, an access_token no header can carry, a NaN in a JSON body) raise `ArgumentError`.

Bounds: a request over `request_limits`' bounds (its request line, its head, its body) is never sent; it is
answered as AppWorld answers a bad argument (HTTP 422, `{"message": ...}` naming the limit).

Who failed at the forwarding step (`fault`: ours, the battle is not scored; otherwise an API error the call
caused, the agent's), by evidence:
1. no byte of the call left: the connection was refused or could not be made in time (urllib3's
   `NewConnectionError`, `ConnectTimeout`): ours;
2. the agent's bytes caused it: the call was sent and the server answered 5xx (e.g. an API that raised on the
   call's arguments, as SQLite's integer overflow does for an id over 2**63 - 1). That is the call's own API
   error, delivered as AppWorld delivers it, unless the server has stopped answering: ours only if the health
   probe gets no answer;
3. the call was sent and no answer came (a reset, `ChunkedEncodingError`, `ProtocolError`, a `ReadTimeout`,
   anything else the transport raised): ours only if the health probe then gets no answer; while the server
   answers, the call is what it refused or could not serve, the agent's (a `status_code` None reply, no `fault`).
The health probe (`GET /`, any status below 500 is an answer) always goes on a NEW connection (`Connection:
close`, a session of its own), never on a pooled one: uvicorn answers 500 for an app that raised and then closes
that keep-alive connection without saying so, and a probe riding it read the close as "no answer" (22 of 40 such
calls were charged to us: a free re-roll). It tries up to `HEALTH_PROBE_ATTEMPTS` times within
`HEALTH_PROBE_BUDGET_S`; a refused connection ends it at once (nothing listens). After any 5xx the session's pooled
connections are dropped too, so the agent's next call never rides the connection being closed.
Rule 3 also rests on the forwarder never reusing a connection the server may be closing: a pooled connection idle
longer than `KEEPALIVE_REUSE_S` (below uvicorn's 5 s keep-alive) is dropped before the next call,
so a reset after sending is never a keep-alive race of ours. The agent under test must not be able to turn a loss
into an unscored battle (a free re-roll) by provoking a failure that only looks like ours. The Green scores a
battle in which a `fault` reached the Blue as an infrastructure error (retried), never as the Blue's loss.

The APIs server is guarded: every request carries the slot's guard header (`guard_headers`).

Admission (`CallGate`): the gateway passes a gate with each call; under the one-at-a-time lock, just
before the request goes upstream, `admit()` may refuse it (its battle ended or its episode is over while
it was queued: `ApiReply.refused`), and `settled(reply)` runs before the lock is released (a successful
`complete_task` closes the episode there, so nothing queued behind it is forwarded).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Protocol
from urllib.parse import quote, urlsplit

import requests
from pydantic import BaseModel, Field
from requests.adapters import HTTPAdapter
from urllib3.exceptions import ConnectTimeoutError, MaxRetryError

from mcp_gateway.request_limits import TOO_LARGE_STATUS, too_large
from mcp_gateway.tools import ToolSpec

DEFAULT_CONNECT_TIMEOUT_S = 5.0
DEFAULT_READ_TIMEOUT_S = 15.0
"""Below the 20 s MCP client timeout of AgentBeats SDK agents, so they get our error, not theirs."""
HEALTH_PROBE_BUDGET_S = 3.0
"""The health probe's whole time (its attempts' timeouts come out of it): with the read timeout, below 20 s."""
HEALTH_PROBE_ATTEMPTS = 3
HEALTH_PROBE_PAUSE_S = 0.1
KEEPALIVE_REUSE_S = 4.0
"""A pooled connection idle longer than this is not reused: uvicorn closes idle connections after 5 s."""
POOL_SIZE = 32
UPSTREAM_NOT_FOUND_MESSAGE = "API not found or some of the passed parameters are invalid."
"""What AppWorld's requester (and upstream's MCP server) shows for 400/404/405 replies."""


class ArgumentError(ValueError):
    """The arguments cannot be forwarded (e.g. a path parameter containing `/`)."""


class CallGate(Protocol):
    """Decides, under the forwarder's lock, whether a queued call still goes upstream (module docstring)."""

    def admit(self) -> str | None:
        """None to send the call now; else the refusal reason."""

    def settled(self, reply: "ApiReply") -> None:
        """The call's reply, before the next queued call is admitted."""


class ApiReply(BaseModel):
    """What the APIs server answered (or why it could not be asked)."""

    status_code: int | None = Field(description=(
        "HTTP status (422 for a request over the bounds, answered unsent); None if no answer came (see `fault`)."))
    body: Any = Field(default=None, description="Parsed JSON body (text wrapped as {'message': ...}).")
    error: str | None = Field(default=None, description="Failure message for non-2xx or transport errors.")
    agent_message: str | None = Field(default=None, description="Failure message shown to the agent.")
    fault: str | None = Field(default=None, description="Infrastructure fault of the APIs server (module docstring).")
    refused: str | None = Field(default=None, description="Not sent: the gate refused it (its battle or episode ended).")

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class ApiForwarder:
    """Sends tool calls to one APIs server through a pooled HTTP session."""

    def __init__(self, apis_url: str, session: requests.Session | None = None,
                 connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
                 read_timeout_s: float = DEFAULT_READ_TIMEOUT_S, guard_headers: dict[str, str] | None = None) -> None:
        self.apis_url = apis_url.rstrip("/")
        self.timeout = (connect_timeout_s, read_timeout_s)
        self.session = session or _pooled_session()
        self.session.headers.update(guard_headers or {})
        self._one_at_a_time = threading.Lock()
        self._host = urlsplit(self.apis_url).netloc
        self._last_used = float("-inf")

    def close(self) -> None:
        self.session.close()

    def forward(self, spec: ToolSpec, arguments: dict[str, Any], gate: CallGate | None = None) -> ApiReply:
        """Call the API of `spec` with `arguments`, if `gate` admits it when its turn comes.

        Raises ArgumentError for unforwardable arguments; every other outcome is the reply (module docstring)."""
        prepared = self._prepare(spec, arguments)
        oversized = too_large(prepared, self._host)
        with self._one_at_a_time:
            refusal = gate.admit() if gate is not None else None
            if refusal is not None:
                return ApiReply(status_code=None, refused=refusal)
            if oversized is not None:  # never sent: answered as AppWorld answers a bad argument
                reply = ApiReply(status_code=TOO_LARGE_STATUS, body={"message": oversized}, error=oversized,
                                 agent_message=oversized)
            else:
                reply = self._request(prepared)
            if gate is not None:
                gate.settled(reply)
            return reply

    def _prepare(self, spec: ToolSpec, arguments: dict[str, Any]) -> requests.PreparedRequest:
        """The request AppWorld's requester would send for this call, encoded once (its size is checked on it)."""
        path, rest = substitute_path(spec.path, spec.path_params, arguments)
        headers: dict[str, str] = {}
        token = rest.pop("access_token", None)
        if token is not None:
            text = str(token)
            if not (text.isascii() and text.isprintable()):  # what http.client could not send, or sends split
                raise ArgumentError("access_token must be printable ASCII text (a token the app's login returned)")
            headers["Authorization"] = f"Bearer {text}"
        kwargs: dict[str, Any] = {}
        if spec.method == "GET":
            kwargs["params"] = {k: _query_value(v) for k, v in rest.items()}
        elif spec.is_login:
            kwargs["data"] = rest
        else:
            kwargs["json"] = rest
        try:
            return self.session.prepare_request(
                requests.Request(spec.method, self.apis_url + path, headers=headers, **kwargs))
        except requests.exceptions.InvalidJSONError:
            raise ArgumentError("Out of range float values are not JSON compliant") from None
        except (requests.RequestException, ValueError, TypeError) as exc:  # the arguments' values: never echoed
            raise ArgumentError(f"the arguments cannot be sent as an HTTP request ({type(exc).__name__})") from None

    def _request(self, prepared: requests.PreparedRequest) -> ApiReply:
        """One request upstream (the caller holds the lock); who failed is decided here (module docstring)."""
        if time.monotonic() - self._last_used > KEEPALIVE_REUSE_S:
            self.session.close()  # its pooled connections only: the server may be closing them (rule 3)
        try:
            response = self.session.send(prepared, timeout=self.timeout)
        except requests.ConnectTimeout:
            message = (f"The AppWorld APIs server at {self.apis_url} did not accept a connection within "
                       f"{self.timeout[0]:g} s.")
            return ApiReply(status_code=None, error=message, agent_message=message, fault="timeout (connecting)")
        except requests.ConnectionError as exc:
            if not _never_sent(exc):
                return self._after_sending(exc)
            message = f"The AppWorld APIs server at {self.apis_url} is unreachable ({type(exc).__name__})."
            return ApiReply(status_code=None, error=message, agent_message=message,
                            fault=f"unreachable ({type(exc).__name__})")
        except Exception as exc:  # noqa: BLE001 - sent, then no answer: the health probe decides (rule 3)
            return self._after_sending(exc)
        finally:
            self._last_used = time.monotonic()
        if response.status_code >= 500:
            self.session.close()  # the server may be closing the call's connection: never reuse it (rule 2)
            if not self._answers():
                message = (f"The AppWorld APIs server at {self.apis_url} failed (HTTP {response.status_code}) "
                           "and no longer answers.")
                return ApiReply(status_code=response.status_code, error=message, agent_message=message,
                                fault=f"HTTP {response.status_code}, then no answer to a health probe")
        return _reply(response)

    def _after_sending(self, exc: BaseException) -> ApiReply:
        """The call was sent and no answer came: ours if the server no longer answers, else the call's (rule 3)."""
        kind = type(exc).__name__
        timed_out = isinstance(exc, requests.Timeout)
        if not self._answers():
            if timed_out:
                message = f"The AppWorld APIs server at {self.apis_url} did not answer within {self.timeout[1]:g} s."
                return ApiReply(status_code=None, error=message, agent_message=message, fault="timeout")
            message = f"The AppWorld APIs server at {self.apis_url} failed ({kind}) and no longer answers."
            return ApiReply(status_code=None, error=message, agent_message=message,
                            fault=f"{kind}, then no answer to a health probe")
        if timed_out:
            message = (f"AppWorld's APIs server did not answer this call within {self.timeout[1]:g} s (it answers "
                       "other requests): the call was not served.")
        else:
            message = (f"AppWorld's APIs server dropped this call's request without an answer ({kind}) and answers "
                       "other requests: it refused the request as sent. Check the call's arguments.")
        return ApiReply(status_code=None, error=message, agent_message=message)

    def _answers(self) -> bool:
        """True if the APIs server answers a health probe on a new connection (module docstring, rule 2)."""
        deadline = time.monotonic() + HEALTH_PROBE_BUDGET_S
        with _probe_session(self.session.headers) as probe:
            for attempt in range(HEALTH_PROBE_ATTEMPTS):
                time.sleep(HEALTH_PROBE_PAUSE_S if attempt else 0)
                verdict = _probe_once(probe, self.apis_url + "/", deadline - time.monotonic())
                if verdict is not None:
                    return verdict
        return False


def substitute_path(path: str, path_params: list[str], arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Fill `{param}` placeholders; return the path and the arguments left over."""
    rest = dict(arguments)
    for name in path_params:
        if name not in rest:
            continue
        text = str(rest.pop(name))
        if "/" in text or text in ("", ".", ".."):
            raise ArgumentError(f"path parameter {name!r} must be a single path segment, got {text!r}")
        path = path.replace("{" + name + "}", quote(text, safe=""))
    missing = [n for n in path_params if "{" + n + "}" in path]
    if missing:
        raise ArgumentError(f"missing path parameter(s): {', '.join(missing)}")
    return path, rest


def _never_sent(exc: requests.ConnectionError) -> bool:
    """The connection failed before any byte of the request left (urllib3 wraps it as the retry's reason;
    `NewConnectionError` is a `ConnectTimeoutError`)."""
    cause = exc.args[0] if exc.args else None
    return isinstance(cause, MaxRetryError) and isinstance(cause.reason, ConnectTimeoutError)


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return json.dumps(value)
    return value


def _reply(response: requests.Response) -> ApiReply:
    try:
        body: Any = response.json()
    except ValueError:
        body = {"message": response.text}
    if 200 <= response.status_code < 300:
        return ApiReply(status_code=response.status_code, body=body)
    message = error_message(body)
    shown = UPSTREAM_NOT_FOUND_MESSAGE if response.status_code in (400, 404, 405) else message
    return ApiReply(status_code=response.status_code, body=body, error=message, agent_message=shown)


def error_message(body: Any) -> str:
    """The message of an AppWorld error body (`{"message"}`, or FastAPI's `{"detail"}`)."""
    if isinstance(body, dict):
        if isinstance(body.get("message"), str):
            return body["message"]
        detail = body.get("detail")
        if isinstance(detail, dict) and isinstance(detail.get("message"), str):
            return detail["message"]
        if detail is not None:
            return detail if isinstance(detail, str) else json.dumps(detail)[:2000]
    return json.dumps(body)[:2000]


def _probe_session(headers: Any) -> requests.Session:
    """A session of the health probe's own: a new connection each request (`Connection: close`), never a pooled one."""
    session = requests.Session()
    session.trust_env = False
    session.headers.update(headers)  # the slot's guard headers, as every request carries them
    session.headers["Connection"] = "close"
    return session


def _probe_once(probe: requests.Session, url: str, left_s: float) -> bool | None:
    """One probe attempt: True (an answer below 500), False (no time left, or refused: nothing listens), None
    (no answer this time: try again)."""
    if left_s <= 0:
        return False
    try:
        return True if probe.get(url, timeout=(left_s, left_s)).status_code < 500 else None
    except requests.ConnectionError as exc:
        return False if _never_sent(exc) else None
    except requests.RequestException:
        return None


def _pooled_session() -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # loopback servers: never route through an HTTP proxy from the environment
    adapter = HTTPAdapter(pool_connections=4, pool_maxsize=POOL_SIZE, max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
