"""What the process Blues of the tests share: just enough A2A 0.3 JSON-RPC over HTTP/1.1 to be a Blue.

`StubBlue` answers `GET /.well-known/...` with a valid agent card (its `card_name`, `card_description` and
`port`, set by the subclass) and sends JSON; the subclass's `do_POST` reads the Green's message. `call_tool`
makes one plain JSON-RPC `tools/call` on the task message's MCP endpoint; `agent_message` is a `message/send`
result holding one text part.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

import requests

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def call_tool(mcp_url: str, name: str, arguments: dict[str, Any]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    requests.post(mcp_url, json=body, headers=MCP_HEADERS, timeout=60).raise_for_status()


def agent_message(request_id: Any, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": {
        "kind": "message", "role": "agent", "messageId": "m", "parts": [{"kind": "text", "text": text}]}}


class StubBlue(BaseHTTPRequestHandler):
    card_name = "stub blue"
    card_description = "a Blue of the tests"
    port = 0

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.startswith("/.well-known/"):
            self._json(200, {"name": self.card_name, "description": self.card_description,
                             "url": f"http://127.0.0.1:{self.port}/", "version": "1.0.0", "capabilities": {},
                             "defaultInputModes": ["text"], "defaultOutputModes": ["text"], "skills": []})
        else:
            self._json(404, {"error": "not found"})

    def read_request(self) -> dict[str, Any]:
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
