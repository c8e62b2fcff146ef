"""Step 5, dispatch, against a loopback HTTP Blue (stdlib server, no A2A SDK).

The stand-in serves the two parts of the A2A 0.3 contract the Green uses: an agent card at
`/.well-known/agent-card.json` (or the older `agent.json`) and JSON-RPC `message/send` at `/`, answered
after a delay the test chooses. The real A2A Blues are exercised end to end in `test_battle_e2e.py`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from green_agent.steps.dispatch import dispatch
from kernel.errors import BlueUnreachableError
from kernel.trace_context import new_context, parse_traceparent

CARD = {"name": "Loopback Blue", "url": "http://127.0.0.1/", "version": "1"}


class Blue:
    """What the stand-in does: card or not, how it answers message/send, and what it received."""

    def __init__(self) -> None:
        self.card: dict | None = CARD
        self.reply_after_s = 0.0
        self.reply: dict = {"jsonrpc": "2.0", "id": "x", "result": {"kind": "task", "status": {"state": "completed"}}}
        self.received: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.raw_reply: bytes | None = None
        self.raw_card: bytes | None = None


def _handler(blue: Blue) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, body: dict | None) -> None:
            data = json.dumps(body or {}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _raw(self, data: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except OSError:  # the Green stopped reading: what a bounded reader does
                pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if blue.raw_card is not None:
                self._raw(blue.raw_card)
                return
            found = blue.card is not None and self.path.startswith("/.well-known/agent")
            self._send(200 if found else 404, blue.card if found else None)

        def do_POST(self) -> None:  # noqa: N802
            blue.received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            blue.headers.append({k.lower(): v for k, v in self.headers.items()})
            time.sleep(blue.reply_after_s)
            if blue.raw_reply is not None:
                self._raw(blue.raw_reply)
                return
            self._send(200, blue.reply)

    return Handler


@pytest.fixture()
def blue() -> Iterator[tuple[Blue, str]]:
    state = Blue()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _wait_reply(handle: object, timeout_s: float = 10.0) -> str:
    deadline = time.monotonic() + timeout_s
    while handle.reply().state == "pending" and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.02)
    return handle.reply().state  # type: ignore[attr-defined]


def test_dispatch_returns_before_the_blue_answers_and_records_the_reply_later(blue: tuple[Blue, str]) -> None:
    state, url = blue
    state.reply_after_s = 1.5
    started = time.monotonic()
    handle = dispatch(url, "AppWorld task id: abc_1", context_id="battle-7")
    assert time.monotonic() - started < 1.0  # the Green never waits for the Blue's reply
    assert handle.result.agent.name == "Loopback Blue" and handle.reply().state == "pending"
    assert _wait_reply(handle) == "replied" and handle.reply().task_state == "completed"
    (request,) = state.received
    message = request["params"]["message"]
    assert request["method"] == "message/send" and message["contextId"] == "battle-7"
    assert message["parts"] == [{"kind": "text", "text": "AppWorld task id: abc_1"}]


def test_the_battles_traceparent_goes_in_the_messages_metadata_and_the_requests_header(
        blue: tuple[Blue, str]) -> None:
    state, url = blue
    context = new_context()
    handle = dispatch(url, "AppWorld task id: abc_1", context_id="battle-8", traceparent=context.traceparent)
    assert _wait_reply(handle) == "replied"
    (request,), (headers,) = state.received, state.headers
    assert request["params"]["message"]["metadata"] == {"traceparent": context.traceparent}
    assert headers["traceparent"] == context.traceparent
    assert parse_traceparent(headers["traceparent"]) == context
    handle = dispatch(url, "AppWorld task id: abc_1", context_id="battle-9")  # none given: none sent
    assert _wait_reply(handle) == "replied"
    assert "metadata" not in state.received[1]["params"]["message"] and "traceparent" not in state.headers[1]


def test_a_blue_without_an_agent_card_is_unreachable_before_anything_is_sent(blue: tuple[Blue, str]) -> None:
    state, url = blue
    state.card = None
    with pytest.raises(BlueUnreachableError, match="serves no agent card.*HTTP 404"):
        dispatch(url, "task")
    assert state.received == []


def test_a_json_rpc_error_reply_is_recorded_as_an_error(blue: tuple[Blue, str]) -> None:
    state, url = blue
    state.reply = {"jsonrpc": "2.0", "id": "x", "error": {"code": -32600, "message": "bad request"}}
    handle = dispatch(url, "task")
    assert _wait_reply(handle) == "error" and "A2A error -32600: bad request" in (handle.reply().error or "")


def test_a_dead_blue_is_named_with_its_url() -> None:
    from kernel.ports import free_port

    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(BlueUnreachableError, match=f"Blue agent at {url} is unreachable"):
        dispatch(url, "task", card_timeout_s=2)


def test_a_blues_reply_is_read_within_a_limit_and_parsed_within_a_depth_limit(blue: tuple[Blue, str]) -> None:
    state, url = blue
    state.raw_reply = b"[" * 20_000 + b"]" * 20_000
    deep = dispatch(url, "task")
    assert _wait_reply(deep) == "error" and deep.reply().fault == "malformed_reply"  # no RecursionError in a thread
    state.raw_reply = b" " * (20 * 1024 * 1024)
    huge = dispatch(url, "task")
    assert _wait_reply(huge) == "error" and huge.reply().fault == "malformed_reply"
    assert "larger than 1048576 bytes" in (huge.reply().error or "")


def test_an_agent_card_over_its_limit_is_not_read(blue: tuple[Blue, str]) -> None:
    state, url = blue
    state.raw_card = b"{" + b" " * (10 * 1024 * 1024) + b"}"
    with pytest.raises(BlueUnreachableError, match="agent card larger than 65536 bytes"):
        dispatch(url, "task")
    assert state.received == []
