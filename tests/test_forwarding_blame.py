"""Who failed at the forwarding step (issue 50): the forwarder against a tiny loopback server, by evidence.

`TinyApis` stands for AppWorld's APIs server as the wire shows it (uvicorn over h11, HTTP/1.1 keep-alive):
`GET /` answers 404 JSON while it is up (AppWorld's health probe target answers below 500); every other request
is read whole (head, then `Content-Length` bytes of body) and then, by `mode`:
- `ok`: answered 200 `{"ok": true}`;
- `reset`: the connection is reset (RST) without an answer, as uvicorn does to a request h11 refuses;
- `half`: a 400 head promising a body, then a reset (what `requests` raised as `ChunkedEncodingError`);
- `silent`: no answer while the connection is held (a call the server cannot serve in time);
- `reset_and_die`: it stops listening, then resets (its process died under the call);
- `hang`: it stops answering everything, the health probe included (a stalled server);
- `500_then_close`: answered 500 with a keep-alive head (no `Connection: close`), then, `CLOSE_AFTER_S` later,
  the connection is closed without reading what came meanwhile, as uvicorn closes one after the app raised
  (a request sent on it in that window, a health probe on the pooled connection, reads as a dropped connection);
- `500_and_die`: answered 500, then it stops listening and closes the connection (its process died after).
It records each request line it read (`seen`) and each connection it accepted (`connections`).
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from typing import Any

import pytest

from kernel.ports import free_port
from mcp_gateway import forwarding
from mcp_gateway.forwarding import ApiForwarder, ArgumentError
from mcp_gateway.request_limits import (MAX_REQUEST_BODY_BYTES, MAX_REQUEST_HEAD_BYTES, MAX_REQUEST_LINE_BYTES,
                                        TOO_LARGE_STATUS)
from mcp_gateway.tools import ToolSpec

SEARCH = ToolSpec(name="amazon__search_products", app_name="amazon", api_name="search_products", method="GET",
                  path="/amazon/products", description="d", input_schema={"type": "object", "properties": {}})
CREATE = ToolSpec(name="simple_note__create_note", app_name="simple_note", api_name="create_note", method="POST",
                  path="/simple_note/notes", description="d", input_schema={"type": "object", "properties": {}})
SHOW = ToolSpec(name="amazon__show_product", app_name="amazon", api_name="show_product", method="GET",
                path="/amazon/products/{product_id}", path_params=["product_id"], description="d",
                input_schema={"type": "object", "properties": {}})
CLOSE_AFTER_S = 0.075
OVERFLOW = "Python int too large to convert to SQLite INTEGER"


class TinyApis:
    """The loopback server of the module docstring."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.seen: list[str] = []
        self.connections = 0
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._held: list[socket.socket] = []
        self._hang = threading.Event()

    def __enter__(self) -> "TinyApis":
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._hang.set()
        self._stop_listening()
        for held in self._held:
            held.close()

    def _stop_listening(self) -> None:
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        while True:
            try:
                line = reader.readline()
                headers = {}
                while (header := reader.readline()) not in (b"\r\n", b""):
                    name, _, value = header.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                reader.read(int(headers.get("content-length", "0")))
            except OSError:
                return
            if not line:
                conn.close()
                return
            if self.mode == "hang":
                self._held.append(conn)
                return
            if line.startswith(b"GET / "):
                self._answer(conn, 404, {"detail": "Not Found"})
                continue
            self.seen.append(line.decode("latin-1").strip())
            if self.mode == "ok":
                self._answer(conn, 200, {"ok": True})
                continue
            if self.mode.startswith("500_"):
                self._answer(conn, 500, {"message": "Python int too large to convert to SQLite INTEGER"})
                self._close_after_500(conn)
                return
            if self.mode == "silent":
                self._held.append(conn)
                return
            if self.mode == "half":
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nInv")
                time.sleep(0.1)
            if self.mode == "reset_and_die":
                self._stop_listening()
            _reset(conn)
            return

    def _close_after_500(self, conn: socket.socket) -> None:
        if self.mode == "500_and_die":
            self._stop_listening()
        else:
            time.sleep(CLOSE_AFTER_S)
        _reset(conn)

    @staticmethod
    def _answer(conn: socket.socket, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        conn.sendall(f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
                     .encode() + data)


def _reset(conn: socket.socket) -> None:
    """Close with an RST (SO_LINGER 0), as a server does that drops a connection with bytes unread."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


@pytest.fixture()
def apis() -> Any:
    with TinyApis() as server:
        yield server


@pytest.mark.parametrize("mode", ["reset", "half"])
def test_a_call_the_server_drops_while_it_still_answers_is_the_callers_api_error(apis: TinyApis, mode: str) -> None:
    apis.mode = mode
    reply = ApiForwarder(apis.url).forward(SEARCH, {"query": "shoes"})
    assert apis.seen == ["GET /amazon/products?query=shoes HTTP/1.1"]  # it was sent and read
    assert (reply.status_code, reply.fault, reply.ok) == (None, None, False), reply
    assert "dropped this call's request without an answer" in reply.agent_message


def test_a_call_the_server_cannot_serve_in_time_while_it_answers_others_is_the_callers(apis: TinyApis) -> None:
    apis.mode = "silent"
    reply = ApiForwarder(apis.url, read_timeout_s=0.5).forward(SEARCH, {"query": "shoes"})
    assert (reply.status_code, reply.fault) == (None, None), reply
    assert "did not answer this call within 0.5 s (it answers other requests)" in reply.agent_message


def test_a_server_that_dies_under_the_call_is_ours(apis: TinyApis) -> None:
    apis.mode = "reset_and_die"
    reply = ApiForwarder(apis.url).forward(SEARCH, {"query": "shoes"})
    assert reply.fault is not None and reply.fault.endswith("then no answer to a health probe"), reply
    assert f"APIs server at {apis.url} failed" in reply.agent_message


def test_a_stalled_server_is_ours(apis: TinyApis) -> None:
    apis.mode = "hang"
    reply = ApiForwarder(apis.url, read_timeout_s=0.5).forward(SEARCH, {"query": "shoes"})
    assert (reply.status_code, reply.fault) == (None, "timeout"), reply
    assert "did not answer within" in reply.agent_message


def test_a_refused_connection_is_ours_and_nothing_was_sent() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    reply = ApiForwarder(url, connect_timeout_s=1).forward(SEARCH, {"query": "shoes"})
    assert (reply.status_code, reply.fault) == (None, "unreachable (ConnectionError)"), reply


@pytest.mark.parametrize("arguments, what, limit", [
    ({"query": "<" * 3000}, "request line (its path and query string", MAX_REQUEST_LINE_BYTES),  # %3C: 9000 bytes
    ({"access_token": "t" * 20_000, "query": "x"}, "request line and headers", MAX_REQUEST_HEAD_BYTES),
])
def test_a_request_line_or_head_over_its_bound_is_never_sent_and_answered_as_a_bad_argument(
        apis: TinyApis, arguments: dict[str, Any], what: str, limit: int) -> None:
    reply = ApiForwarder(apis.url).forward(SEARCH, arguments)
    assert apis.seen == [] and apis.connections == 0
    assert (reply.status_code, reply.fault) == (TOO_LARGE_STATUS, None)
    assert reply.body == {"message": reply.agent_message} and reply.error == reply.agent_message
    assert what in reply.agent_message and f"takes at most {limit}." in reply.agent_message
    assert ApiForwarder(apis.url).forward(SEARCH, {"query": "<" * 2000}).ok  # 6000 bytes: sent as before


def test_a_body_over_its_bound_is_never_sent(apis: TinyApis) -> None:
    reply = ApiForwarder(apis.url).forward(CREATE, {"title": "a" * MAX_REQUEST_BODY_BYTES})
    assert (reply.status_code, apis.seen) == (TOO_LARGE_STATUS, [])
    assert f"body (its arguments as JSON) would be {MAX_REQUEST_BODY_BYTES + 13} bytes" in reply.agent_message


def test_arguments_no_request_can_carry_are_refused_before_anything_is_sent(apis: TinyApis) -> None:
    forwarder = ApiForwarder(apis.url)
    with pytest.raises(ArgumentError, match="printable ASCII"):
        forwarder.forward(SEARCH, {"access_token": "t\r\nX-Injected: 1"})
    with pytest.raises(ArgumentError, match="printable ASCII"):
        forwarder.forward(SEARCH, {"access_token": "t\u0101"})
    with pytest.raises(ArgumentError, match="not JSON compliant"):
        forwarder.forward(CREATE, {"title": float("nan")})
    assert apis.connections == 0


def test_a_connection_idle_past_the_servers_keep_alive_is_not_reused(apis: TinyApis,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forwarding, "KEEPALIVE_REUSE_S", 0.3)
    forwarder = ApiForwarder(apis.url)
    assert forwarder.forward(SEARCH, {"query": "a"}).ok and forwarder.forward(SEARCH, {"query": "b"}).ok
    assert apis.connections == 1  # reused at once
    time.sleep(0.5)
    assert forwarder.forward(SEARCH, {"query": "c"}).ok
    assert apis.connections == 2  # past the window: a fresh connection, never one the server may be closing


def test_a_500_on_a_connection_the_server_then_closes_is_the_calls_api_error(apis: TinyApis) -> None:
    """The free re-roll: the probe on the pooled connection raced its close and read as 'no answer' (ours)."""
    apis.mode = "500_then_close"
    reply = ApiForwarder(apis.url).forward(SHOW, {"product_id": 10**30})
    assert (reply.status_code, reply.fault) == (500, None), reply
    assert reply.agent_message == OVERFLOW and reply.body == {"message": OVERFLOW}
    assert apis.connections == 2  # the call's, and a new one for the probe: never the one being closed


def test_calls_after_a_500_are_never_charged_a_keep_alive_race(apis: TinyApis) -> None:
    apis.mode = "500_then_close"
    forwarder = ApiForwarder(apis.url)
    replies = [forwarder.forward(SHOW, {"product_id": 10**30 + i}) for i in range(10)]
    assert [(r.status_code, r.fault) for r in replies] == [(500, None)] * 10, replies
    assert (len(apis.seen), apis.connections) == (10, 20)  # each call and each probe on a connection of its own


def test_a_server_that_answers_500_and_dies_is_ours(apis: TinyApis) -> None:
    apis.mode = "500_and_die"
    reply = ApiForwarder(apis.url).forward(SHOW, {"product_id": 10**30})
    assert (reply.status_code, reply.fault) == (500, "HTTP 500, then no answer to a health probe"), reply
    assert f"APIs server at {apis.url} failed (HTTP 500) and no longer answers" in reply.agent_message


def _raising_app() -> Any:
    """A route that raises: Starlette's error middleware answers 500 (keep-alive), then uvicorn closes the
    connection, as AppWorld's APIs server (FastAPI on uvicorn) does for an API that raised."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    async def show(request: Any) -> Any:
        raise OverflowError("Python int too large to convert to SQLite INTEGER")

    return Starlette(routes=[Route("/amazon/products/{product_id}", show)])


def test_500s_of_a_real_uvicorn_are_the_calls_api_errors() -> None:
    from faults_support import InProcessServer
    with InProcessServer(_raising_app()) as server:
        forwarder = ApiForwarder(server.url)
        replies = [forwarder.forward(SHOW, {"product_id": 10**30}) for _ in range(40)]
    faults = [r.fault for r in replies if r.fault]
    assert faults == [] and [r.status_code for r in replies] == [500] * 40, faults
    assert replies[0].agent_message == "Internal Server Error"
