"""A battle's call log -> the calls to replay, each as the HTTP request the gateway forwarded to AppWorld.

`replay_plan(log, battle_id, interaction, specs)` reads the battle's archived call log (`mcp_calls.jsonl`: the
gateway's records of this battle) and returns a `ReplayPlan` of the forwarded calls in the order they reached
the world (each record's `seq`, which the gateway takes under its forwarder's lock; parallel calls of an agent
are logged after forwarding, so the log's line order may differ), or raises
`NotReplayable` saying why the log cannot be replayed. A run folder may come from anyone: the log is read
with a size limit and the kernel's bounded reader, and anything the gateway never writes for a forwarded call
makes the whole log unreplayable (never a partial replay that could pass).

Which records count: only calls the gateway forwarded to AppWorld's APIs server, i.e. a record with an HTTP
status and no refusal. Refused calls (no battle, a wrong token, after the episode ended, too many in flight),
calls outside an enforced scope, unknown tools and arguments the gateway refused before forwarding carry no
status and never reached the world, so they are skipped; so is a call the gateway answered with a fault on
purpose (a reliability run: its record's `fault`), which carries the status the agent was shown, except a lost
answer (`lost_response`: the call reached the world, its record keeps AppWorld's status as `upstream_status`),
which is replayed; every fault record is also kept apart (`ReplayPlan.faulted`) to be checked against the run's
plan (`green_agent.rejudge.faults`). A record that says it was forwarded must be
replayable: a log capped by the gateway (`log_capped`), a forwarded call whose arguments the log left out
(too large to log), an unknown tool, or a redacted argument that cannot be re-derived raise `NotReplayable`.

Each request is built by the gateway's own forwarder (`mcp_gateway.forwarding.ApiForwarder`) over a session
that keeps the prepared request instead of sending it, after the gateway's own argument rule (only the API's
parameters; in tools mode a None dropped unless required, in code mode kept as AppWorld's requester sends
it). The call log redacts secrets (`kernel.redaction`), so those arguments become markers that the replay
re-derives in the fresh world (`world/replay.py`): `access_token` (the app's token from the replay's own
login) and `file_system_access_token` (the file_system app's), and a login's `password`. Markers are a
random nonce and letters, so the agent's own arguments cannot hold one.
"""

from __future__ import annotations

import base64
import io
import secrets
from pathlib import Path
from typing import Any, Literal

import requests
from pydantic import BaseModel, Field

from kernel.call_log import BATTLE_LOG_CAP_BYTES, LOG_CAPPED
from kernel.call_log_reader import CallLogReader
from kernel.call_record import CallRecord
from kernel.redaction import REDACTED
from mcp_gateway.forwarding import ApiForwarder
from mcp_gateway.tools import ToolSpec

MAX_CALL_LOG_BYTES = BATTLE_LOG_CAP_BYTES + (1 << 20)
"""Largest call log replayed: what the gateway writes for one battle at most, and room for its cap note."""
_BASE = "http://appworld-replay.invalid"
_SENT_HEADERS = ("content-type", "authorization")
_TOKEN_ARGUMENTS = {"access_token": None, "file_system_access_token": "file_system"}
"""Token arguments -> the app whose login issued the token (None: the called API's own app)."""


class NotReplayable(ValueError):
    """The call log cannot be replayed; the message says why."""


class ReplayCall(BaseModel):
    """One forwarded call, as the request the gateway sent (with markers where the log redacted a secret)."""

    seq: int = Field(description="The record's `seq` (the gateway's call number), for messages.")
    tool: str = Field(description="`app__api`.")
    app: str = Field(description="AppWorld app of the API.")
    method: str = Field(description="HTTP method.")
    url: str = Field(description="Path and query string on the APIs server.")
    headers: dict[str, str] = Field(description="Content-Type and Authorization, as sent.")
    body: str = Field(description="The request body, base64.")
    recorded: int = Field(description="The HTTP status the call log records.")
    login: bool = Field(description="A login (`POST /<app>/auth/token`): its token is kept for later calls.")
    logout: bool = Field(description="A logout: its token is dropped.")
    username: str | None = Field(default=None, description="A login's username (the log keeps it).")
    tokens: dict[str, str] = Field(default_factory=dict, description="Token marker -> the app whose token it is.")
    password: str | None = Field(default=None, description="A login's password marker.")


class ReplayPlan(BaseModel):
    """What to replay, and how many of the battle's records the log holds."""

    calls: list[ReplayCall] = Field(description=(
        "The forwarded calls in the order they reached the world (their `seq`, taken under the forwarder's lock)."))
    records: int = Field(description="All of the battle's records in the log (refused ones included).")
    faulted: list[CallRecord] = Field(default_factory=list, description=(
        "The records marked as a planned fault: skipped by the replay, so checked against the plan "
        "(`green_agent.rejudge.faults`)."))


class _Capture(requests.Session):
    """A session that keeps the prepared request instead of sending it: the forwarder's transport seam."""

    def __init__(self) -> None:
        super().__init__()
        self.trust_env = False
        self.sent: requests.PreparedRequest | None = None

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # noqa: ARG002
        self.sent = request
        response = requests.Response()
        response.status_code, response.raw, response.request = 200, io.BytesIO(b"{}"), request
        return response


def replay_plan(log: Path, battle_id: str, interaction: Literal["tools", "code"],
                specs: dict[str, ToolSpec]) -> ReplayPlan:
    """The forwarded calls of `battle_id` in the call log `log` (see the module docstring)."""
    if log.is_symlink() or not log.is_file():
        raise NotReplayable(f"{log.name} is missing or not a regular file")
    if log.stat().st_size > MAX_CALL_LOG_BYTES:
        raise NotReplayable(f"{log.name} is larger than {MAX_CALL_LOG_BYTES} bytes, more than a gateway writes")
    reader = CallLogReader(log, battle_id=battle_id)
    records = list(reader)
    if reader.stats.malformed_lines:
        raise NotReplayable(f"{log.name} holds {reader.stats.malformed_lines} line(s) that are not call records")
    nonce = secrets.token_hex(8)
    forwarded = sorted((record for record in records if _forwarded(record)), key=lambda record: record.seq)
    calls = [_call(record, interaction, specs, nonce) for record in forwarded]
    return ReplayPlan(calls=calls, records=len(records), faulted=[r for r in records if r.fault is not None])


def _forwarded(record: CallRecord) -> bool:
    if record.refused == LOG_CAPPED:
        raise NotReplayable(f"the call log reached the gateway's cap at call {record.seq}: the battle's later calls "
                            "were not logged")
    if record.fault is not None:  # a fault on purpose (a reliability run) was answered by the gateway itself and never
        return record.fault.upstream_status is not None  # reached the world, but a lost answer's call (it did)
    return record.refused is None and record.status_code is not None


def _call(record: CallRecord, interaction: str, specs: dict[str, ToolSpec], nonce: str) -> ReplayCall:
    where = f"call {record.seq} ({record.tool_name[:80]})"
    spec = specs.get(record.tool_name)
    if spec is None:
        raise NotReplayable(f"{where} names no AppWorld API, yet the log says it was forwarded")
    if record.arguments_bytes is not None:
        raise NotReplayable(f"{where}: the log left its arguments out ({record.arguments_bytes} bytes)")
    arguments = cleaned(spec, record.arguments, interaction)
    call = ReplayCall(seq=record.seq, tool=spec.name, app=spec.app_name, method="", url="", headers={}, body="",
                      recorded=_recorded_status(record), login=spec.is_login,
                      logout=spec.method == "POST" and spec.path.endswith("/auth/logout"),
                      username=arguments.get("username") if isinstance(arguments.get("username"), str) else None)
    for name, value in list(arguments.items()):
        if value == REDACTED:
            arguments[name] = _marker(call, spec, name, nonce, where)
        elif _holds_redacted(value):
            raise NotReplayable(f"{where}: its argument {name!r} holds a redacted value that cannot be re-derived "
                                "(a secret the log keeps only as [REDACTED], by key or by value)")
    return _prepared(call, spec, arguments, where)


def _recorded_status(record: CallRecord) -> int:
    """What AppWorld answered the call: a lost answer's record keeps it apart (the agent got a 504)."""
    if record.fault is not None and record.fault.upstream_status is not None:
        return record.fault.upstream_status
    return record.status_code or 0


def cleaned(spec: ToolSpec, arguments: dict[str, Any], interaction: str) -> dict[str, Any]:
    """The arguments the gateway forwards (`Gateway._outcome`'s rule): the API's parameters only; in tools mode
    a None only where the parameter is required."""
    known = spec.input_schema["properties"]
    if interaction == "code":
        return {k: v for k, v in arguments.items() if k in known}
    return {k: v for k, v in arguments.items() if k in known and (v is not None or k in spec.required)}


def _marker(call: ReplayCall, spec: ToolSpec, name: str, nonce: str, where: str) -> str:
    """A marker the replay fills in (`world/replay.py`) for the redacted argument `name`."""
    if name in _TOKEN_ARGUMENTS:
        marker = f"RPL{nonce}T{len(call.tokens)}"
        call.tokens[marker] = _TOKEN_ARGUMENTS[name] or spec.app_name
        return marker
    if name == "password" and spec.is_login:
        call.password = f"RPL{nonce}P"
        return call.password
    raise NotReplayable(f"{where}: its argument {name!r} is redacted in the log and cannot be re-derived (only "
                        "access tokens and login passwords are)")


def _holds_redacted(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_redacted(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_redacted(v) for v in value)
    return isinstance(value, str) and REDACTED in value  # by value: a password inside a note's text, say


def _prepared(call: ReplayCall, spec: ToolSpec, arguments: dict[str, Any], where: str) -> ReplayCall:
    """`call` with the request the gateway's forwarder makes of `arguments`."""
    capture = _Capture()
    try:
        ApiForwarder(_BASE, session=capture).forward(spec, arguments)
    except ValueError as exc:  # the forwarder's ArgumentError: the gateway never forwarded such a call
        raise NotReplayable(f"{where}: its arguments cannot be forwarded ({exc})") from None
    sent = capture.sent
    assert sent is not None and sent.url is not None and sent.url.startswith(_BASE)
    body = sent.body.encode() if isinstance(sent.body, str) else sent.body or b""
    headers = {name: value for name, value in sent.headers.items() if name.lower() in _SENT_HEADERS}
    return call.model_copy(update={"method": sent.method, "url": sent.url[len(_BASE):], "headers": headers,
                                   "body": base64.b64encode(body).decode("ascii")})
