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
`card_limit=N`: after serving its card N times the purple stops listening (its N-th card answer goes out on
a connection already accepted; the server speaks HTTP/1.0, so nothing else reuses that connection).
Each POST is counted in `posts` (the test checks the purple was really asked), each card GET in `cards`.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Callable
from typing import Any

from kernel.a2a_tools import task_id_of
from kernel.ports import free_port


class HostilePurple:
    def __init__(self, modes: dict[str, str], silent_s: float = 30.0, on_kill: Callable[[], None] | None = None,
                 card_limit: int | None = None) -> None:
        self.modes, self.silent_s, self.on_kill, self.card_limit = modes, silent_s, on_kill, card_limit
        self.cards, self.killed = 0, False
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.contexts: dict[str, str] = {}
        self.posts = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self._server.daemon_threads = True

    def __enter__(self) -> "HostilePurple":
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def card(self) -> dict[str, Any]:
        return {"name": "hostile purple", "description": "misbehaves on purpose", "url": self.url + "/",
                "version": "0", "capabilities": {"streaming": False}, "defaultInputModes": ["text"],
                "defaultOutputModes": ["text"], "protocolVersion": "0.3.0",
                "skills": [{"id": "x", "name": "x", "description": "x", "tags": []}]}

    def _mode(self, params: dict[str, Any]) -> str:
        message = params.get("message") or {}
        context = message.get("contextId") or "none"
        if context not in self.contexts:
            text = " ".join(p.get("text", "") for p in message.get("parts") or [])
            self.contexts[context] = self.modes.get(task_id_of(text) or "", "garbage")
        return self.contexts[context]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        purple = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                purple.cards += 1
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
                mode = purple._mode(body.get("params") or {})
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
