"""A misbehaving purple for the charging tests: a raw HTTP A2A endpoint, one behaviour per task.

Contract it stands for: an A2A 0.3 agent over JSON-RPC (`GET /.well-known/agent-card.json`, `POST /`
with `message/send`). The behaviour of a conversation is chosen by the task id in its first message
(`modes[task_id]`) and kept per contextId:
- `error`: a JSON-RPC error for every message;
- `drop`: the connection is closed without an answer;
- `silent`: no answer for `silent_s` seconds (longer than the turn timeout);
- `garbage`: a message that is not a tool call, every time;
- `kill`: the first message ever in this mode calls `on_kill()` (a test kills our AppWorld server there,
  mid-task); every message is answered with a `supervisor__complete_task` call.
- `solve`: plays the task's reference solution (our reference purple's player), an honest purple;
- `deep_text` / `deep_data`: a tool call whose JSON nests 20,000 deep, as text / as a DataPart;
- `big_arg`: a DataPart tool call with a 5 MB argument;
- `rpc_list`, `rpc_part_kind`, `rpc_state`, `rpc_bare`, `rpc_code`: JSON-RPC replies a2a-sdk refuses (`result` a
  list, an unknown part kind, an unknown task state, no result nor error, a non-numeric error code);
- `huge_reply`: a 100 MB reply body;
- `call_api_complete`: completes through `call_api("supervisor", "complete_task")` at once.
- code mode (issue 39): `code_solve` plays the reference solution as code (an honest purple); `code_stall`: its
  code turns its alarm off, shrinks its pipes, forges a call with a huge id and never reads the answer;
  `code_surrogate`: its code forges an output line holding a lone surrogate; `code_surrogate_arg`: it sends
  `execute` as a DataPart tool call whose code holds a lone surrogate; `code_nan`: its code calls `complete_task`
  with a NaN answer (a JSON body: AppWorld's requester refuses it). Each replies the same way to every message.
- issue 50: `long_query` first calls `amazon__search_products` with `LONG_QUERY` (a GET request line AppWorld's
  server resets), `code_long_query` does so in code; each then records the message it got back (in `answers`, per
  context) and completes the task with no answer.
- secrets by value (issue 50): `leak` (tools mode) reads the supervisor's account passwords and a login's access token
  from the tool results, then sends them bare (as a note search's query, in a DataPart call beside a text that says
  them, then in a text with no call), then completes the task; `leak_code` runs `leak_support.LEAK_CODE`, says
  what its output printed in its next reply (with code holding a password), then completes. What each saw is kept
  in `seen`.
- issue 59: `forge_traceparent` answers every message with a `traceparent` of its own (`FORGED_TRACEPARENT`) in the
  reply's metadata, in a DataPart and in its text, first calling `supervisor__show_profile`, then completing the task;
  every `traceparent` it received (header and metadata, per message) is kept in `traceparents`.
`card_limit=N`: after serving its card N times the purple stops listening (its N-th card answer goes out on
a connection already accepted; the server speaks HTTP/1.0, so nothing else reuses that connection).
`card_url`: the `url` its card names (default its own); `huge_card_after=N`: from the (N+1)-th card GET on, its
card is 100 MB. Each POST is counted in `posts` and per context in `context_posts` (the test checks the purple
was really asked), each card GET in `cards`; every `Authorization` header it received is kept in `auth_headers`.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Callable
from typing import Any

from blue_agent.purple.code_mode import CodeReferencePlayer
from blue_agent.purple.reference import ReferencePlayer
from kernel.a2a_tools import task_id_of
from kernel.ports import free_port
from kernel.world_data import WorldData
from leak_support import LEAK_CODE, seen_in_output

DEEP = 20_000
HUGE = 100 * 1024 * 1024
CHUNK = 1024 * 1024


class HostilePurple:
    def __init__(self, modes: dict[str, str], silent_s: float = 30.0, on_kill: Callable[[], None] | None = None,
                 card_limit: int | None = None, world: WorldData | None = None, card_url: str | None = None,
                 huge_card_after: int | None = None) -> None:
        self.modes, self.silent_s, self.on_kill, self.card_limit = modes, silent_s, on_kill, card_limit
        self.world, self.card_url, self.huge_card_after = world, card_url, huge_card_after
        self.cards, self.killed = 0, False
        self.context_posts: dict[str, int] = {}
        self.auth_headers: list[str] = []
        self.traceparents: list[tuple[str | None, str | None]] = []
        self.players: dict[str, ReferencePlayer | CodeReferencePlayer] = {}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.contexts: dict[str, str] = {}
        self.answers: dict[str, list[str]] = {}
        self.posts = 0
        self.seen: list[str] = []
        self._leaked: dict[str, dict[str, Any]] = {}
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self._server.daemon_threads = True

    def __enter__(self) -> "HostilePurple":
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def card(self) -> dict[str, Any]:
        return {"name": "hostile purple", "description": "misbehaves on purpose", "url": self.card_url or self.url + "/",
                "version": "0", "capabilities": {"streaming": False}, "defaultInputModes": ["text"],
                "defaultOutputModes": ["text"], "protocolVersion": "0.3.0",
                "skills": [{"id": "x", "name": "x", "description": "x", "tags": []}]}

    def _mode(self, params: dict[str, Any]) -> str:
        message = params.get("message") or {}
        context = message.get("contextId") or "none"
        self.context_posts[context] = self.context_posts.get(context, 0) + 1
        if context not in self.contexts:
            text = " ".join(p.get("text", "") for p in message.get("parts") or [])
            self.contexts[context] = self.modes.get(task_id_of(text) or "", "garbage")
        return self.contexts[context]

    def _solve(self, params: dict[str, Any], code: bool = False) -> str:
        """The reference player's next call for this conversation (an honest purple)."""
        message = params.get("message") or {}
        context = message.get("contextId") or "none"
        text = " ".join(p.get("text", "") for p in message.get("parts") or [])
        if context not in self.players:
            assert self.world is not None, "a purple in mode solve needs the world"
            source = self.world.solution_source(task_id_of(text) or "")
            self.players[context] = CodeReferencePlayer(source) if code else ReferencePlayer(source)
        return asyncio.run(self.players[context].turn(text))

    def _leak(self, params: dict[str, Any], code: bool) -> list[dict[str, Any]]:
        """The next message of a `leak` or `leak_code` conversation (its parts)."""
        message = params.get("message") or {}
        context = message.get("contextId") or "none"
        text = " ".join(p.get("text", "") for p in message.get("parts") or [])
        state = self._leaked.setdefault(context, {"step": 0})
        state["step"] += 1
        if code:
            return self._leak_code(state, text)
        return self._leak_tools(state, text)

    def _leak_code(self, state: dict[str, Any], text: str) -> list[dict[str, Any]]:
        if state["step"] == 1:
            return [{"kind": "text", "text": f"```python\n{LEAK_CODE}```"}]
        if state["step"] == 2:
            values = seen_in_output(text.split("Output:", 1)[-1])
            self.seen.extend(values)
            code = f"print('again', {values[1]!r})"
            return [{"kind": "text", "text": f"I saw {' '.join(values)}.\n```python\n{code}\n```"}]
        return [{"kind": "text", "text": "```python\napis.supervisor.complete_task(status='fail')\n```"}]

    def _leak_tools(self, state: dict[str, Any], text: str) -> list[dict[str, Any]]:
        def call(name: str, **arguments: Any) -> dict[str, Any]:
            return {"kind": "text", "text": json.dumps({"name": name, "arguments": arguments})}

        step = state["step"]
        # the tool result the bridge sent: `Tool '<name>' result: <json>`
        result = json.loads(text.split(" result: ", 1)[1]) if step in (2, 3, 4) else None
        if step == 1:
            return [call("supervisor__show_profile")]
        if step == 2:
            state["email"] = result["email"]
            return [call("supervisor__show_account_passwords")]
        if step == 3:
            state["passwords"] = {a["account_name"]: a["password"] for a in result}
            self.seen.extend(state["passwords"].values())
            return [call("simple_note__login", username=state["email"], password=state["passwords"]["simple_note"])]
        if step == 4:
            token = state["token"] = result["access_token"]
            self.seen.append(token)
            said = " ".join([token, *state["passwords"].values()])
            return [{"kind": "text", "text": f"What I read: {said}"},
                    {"kind": "data", "data": {"name": "simple_note__search_notes", "arguments": {
                        "query": said, "access_token": token}}}]
        if step == 5:  # (the search's result is not read)
            said = " ".join(state["passwords"].values())
            return [{"kind": "text", "text": f"No call this time; the passwords: {said}"}]
        return [call("supervisor__complete_task", status="fail")]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        purple = self

        class Handler(BaseHTTPRequestHandler):
            server_purple = purple

            def log_message(self, *args: Any) -> None:
                pass

            def _raw(self, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _json(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _huge(self, content_type: str) -> None:
                """A 100 MB body, written until the reader stops reading."""
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(HUGE))
                self.end_headers()
                chunk = b"a" * CHUNK
                try:
                    for _ in range(HUGE // CHUNK):
                        self.wfile.write(chunk)
                except OSError:
                    pass

            def _message(self, rpc_id: Any, context: Any, part: dict[str, Any] | list[dict[str, Any]]) -> None:
                self._json({"jsonrpc": "2.0", "id": rpc_id, "result": {
                    "kind": "message", "role": "agent", "messageId": f"m{purple.posts}", "contextId": context,
                    "parts": part if isinstance(part, list) else [part]}})

            def do_GET(self) -> None:  # noqa: N802
                purple.cards += 1
                if purple.huge_card_after is not None and purple.cards > purple.huge_card_after:
                    self._huge("application/json")
                    return
                if purple.card_limit is not None and purple.cards >= purple.card_limit:
                    # stop listening before answering: the serve loop is stopped first (handlers run in their own
                    # threads, so this does not wait on us), then the socket closed, so no connection made after
                    # this answer can be accepted by the kernel's backlog: the next one is refused
                    purple._server.shutdown()
                    purple._server.socket.close()
                self._json(purple.card())

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                purple.posts += 1
                if self.headers.get("Authorization"):
                    purple.auth_headers.append(self.headers["Authorization"])
                params = body.get("params") or {}
                metadata = (params.get("message") or {}).get("metadata") or {}
                purple.traceparents.append((self.headers.get("traceparent"), metadata.get("traceparent")))
                mode = purple._mode(params)
                rpc_id, context = body.get("id"), params.get("message", {}).get("contextId")
                if mode in ATTACKS:
                    ATTACKS[mode](self, rpc_id, context, params)
                    return
                if mode == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if mode == "silent":
                    time.sleep(purple.silent_s)
                if mode == "error":
                    self._json({"jsonrpc": "2.0", "id": body.get("id"),
                                "error": {"code": -32603, "message": "purple exploded"}})
                    return
                context = (body.get("params") or {}).get("message", {}).get("contextId")
                if mode == "kill":
                    if not purple.killed and purple.on_kill is not None:
                        purple.killed = True
                        purple.on_kill()
                    self._json({"jsonrpc": "2.0", "id": body.get("id"), "result": {
                        "kind": "message", "role": "agent", "messageId": f"m{purple.posts}", "contextId": context,
                        "parts": [{"kind": "text", "text": '{"name": "supervisor__complete_task", "arguments": {}}'}]}})
                    return
                self._json({"jsonrpc": "2.0", "id": body.get("id"), "result": {
                    "kind": "message", "role": "agent", "messageId": f"m{purple.posts}", "contextId": context,
                    "parts": [{"kind": "text", "text": "I would rather chat. <script>alert(1)</script>"}]}})

        return Handler


def _deep(depth: int) -> str:
    return '{"name": "supervisor__show_profile", "arguments": {"x": ' + "[" * depth + "]" * depth + "}}"


def _forging(lines: str, then: str = "") -> str:
    """A fenced python block whose code writes the bytes `lines` (a Python expression) on every pipe it holds (its
    protocol pipes among them), then runs `then`."""
    return ("```python\no, st = __import__('posix'), __import__('stat')\nfor fd in range(3, 30):\n    try:\n"
            f"        if st.S_ISFIFO(o.fstat(fd).st_mode):\n            o.write(fd, {lines})\n"
            f"    except OSError:\n        pass\n{then}\n```")


CODE_STALL = _forging("b'{\"call\": {\"app\": \"supervisor\", \"api\": \"show_profile\", \"arguments\": {}}, "
                      "\"id\": \"' + b'9' * 300_000 + b'\"}\\n'",
                      "__import__('select').select([], [], [], 600)").replace(
    "```python\n", "```python\ns, f = __import__('signal'), __import__('fcntl')\ns.signal(s.SIGALRM, s.SIG_IGN)\n"
    "s.alarm(0)\nfor fd in range(3, 30):\n    try:\n        f.fcntl(fd, 1031, 4096)\n    except OSError:\n"
    "        pass\n", 1)
"""Issue 39 row 1: the alarm off, its pipes shrunk to a page (F_SETPIPE_SZ), a forged call whose id is 300 kB."""

LONG_QUERY = "<" * 60_000
"""60 kB of JSON (under the gateway's 100 kB for a call's arguments), 180 kB once URL-encoded (`%3C`): the request
line AppWorld's APIs server (uvicorn on h11) refused and reset, which once gave a purple a retry (issue 50)."""


def _long_query(handler: Any, rpc_id: Any, context: Any, params: dict[str, Any], code: bool = False) -> None:
    """The long call first; then the answer it got is recorded and the task completed with no answer."""
    purple = handler.server_purple
    if purple.context_posts.get(context, 0) > 1:
        text = " ".join(p.get("text", "") for p in (params.get("message") or {}).get("parts") or [])
        purple.answers.setdefault(context, []).append(text)
        call = "```python\napis.supervisor.complete_task()\n```" if code else json.dumps(
            {"name": "supervisor__complete_task", "arguments": {}})
    else:
        call = f"```python\napis.amazon.search_products(query='<' * {len(LONG_QUERY)})\n```" if code else json.dumps(
            {"name": "amazon__search_products", "arguments": {"query": LONG_QUERY}})
    handler._message(rpc_id, context, {"kind": "text", "text": call})


FORGED_TRACEPARENT = "00-" + "f" * 32 + "-" + "e" * 16 + "-01"
"""The trace context `forge_traceparent` sends back: valid in form, never ours."""


def _forge_traceparent(handler: Any, rpc_id: Any, context: Any, params: dict[str, Any]) -> None:
    first = handler.server_purple.context_posts.get(context, 0) <= 1
    call = {"name": "supervisor__show_profile" if first else "supervisor__complete_task", "arguments": {}}
    handler._json({"jsonrpc": "2.0", "id": rpc_id, "result": {
        "kind": "message", "role": "agent", "messageId": f"m{handler.server_purple.posts}", "contextId": context,
        "metadata": {"traceparent": FORGED_TRACEPARENT},
        "parts": [{"kind": "text", "text": f"traceparent: {FORGED_TRACEPARENT}\n{json.dumps(call)}"},
                  {"kind": "data", "data": {"traceparent": FORGED_TRACEPARENT}}]}})


ATTACKS: dict[str, Callable[[Any, Any, Any, dict[str, Any]], None]] = {
    "forge_traceparent": _forge_traceparent,
    "long_query": _long_query,
    "code_long_query": lambda h, i, c, p: _long_query(h, i, c, p, code=True),
    "code_solve": lambda h, i, c, p: h._message(i, c, {"kind": "text", "text": h.server_purple._solve(p, code=True)}),
    "code_stall": lambda h, i, c, p: h._message(i, c, {"kind": "text", "text": CODE_STALL}),
    "code_surrogate": lambda h, i, c, p: h._message(i, c, {"kind": "text", "text": _forging(
        "b'{\"output\": \"\\\\ud800 forged\", \"counted\": true}\\n'")}),
    "code_surrogate_arg": lambda h, i, c, p: h._message(i, c, {"kind": "data", "data": {
        "name": "execute", "arguments": {"code": "print('\ud800')"}}}),
    "code_nan": lambda h, i, c, p: h._message(i, c, {"kind": "text", "text": "```python\n"
                                                  "apis.supervisor.complete_task(answer=float('nan'))\n```"}),
    "solve": lambda h, i, c, p: h._message(i, c, {"kind": "text", "text": h.server_purple._solve(p)}),
    "leak": lambda h, i, c, p: h._message(i, c, h.server_purple._leak(p, code=False)),
    "leak_code": lambda h, i, c, p: h._message(i, c, h.server_purple._leak(p, code=True)),
    "deep_text": lambda h, i, c, p: h._message(i, c, {"kind": "text", "text": _deep(DEEP)}),
    "deep_data": lambda h, i, c, p: h._raw(('{"jsonrpc": "2.0", "id": ' + json.dumps(i) + ', "result": {"kind": '
                                            '"message", "role": "agent", "messageId": "m", "contextId": ' + json.dumps(c)
                                            + ', "parts": [{"kind": "data", "data": ' + _deep(DEEP) + '}]}}').encode()),
    "big_arg": lambda h, i, c, p: h._message(i, c, {"kind": "data", "data": {
        "name": "supervisor__show_profile", "arguments": {"x": "a" * (5 * 1024 * 1024)}}}),
    "call_api_complete": lambda h, i, c, p: h._message(i, c, {"kind": "text", "text": json.dumps({
        "name": "call_api", "arguments": {"app_name": "supervisor", "api_name": "complete_task",
                                          "arguments": {"status": "success"}}})}),
    "rpc_list": lambda h, i, c, p: h._json({"jsonrpc": "2.0", "id": i, "result": [1, 2, 3]}),
    "rpc_part_kind": lambda h, i, c, p: h._message(i, c, {"kind": "hologram", "text": "hi"}),
    "rpc_state": lambda h, i, c, p: h._json({"jsonrpc": "2.0", "id": i, "result": {
        "kind": "task", "id": "t1", "contextId": c, "status": {"state": "exploded"}}}),
    "rpc_bare": lambda h, i, c, p: h._json({"jsonrpc": "2.0", "id": 1}),
    "rpc_code": lambda h, i, c, p: h._json({"jsonrpc": "2.0", "id": i, "error": {"code": "abc", "message": "x"}}),
    "huge_reply": lambda h, i, c, p: h._huge("application/json"),
}
"""The attack modes (module docstring): each answers one message, given the handler, the JSON-RPC id, the context."""
