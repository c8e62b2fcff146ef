"""A selective dodger: a hostile Blue that solves the tasks it can and dodges the rest with a fault of its own.

Run as a process (`python tests/dodger_blue.py --port P --mode M --answers FILE`), so that `exit` is a
real process exit. It speaks just enough A2A 0.3 JSON-RPC over HTTP/1.1 to be a Blue:
- `GET /.well-known/agent-card.json` (and `agent.json`): a valid agent card;
- `POST /` (`message/send`): reads the Green's task message; for a task id in the answers file it calls
  `supervisor__complete_task` with that answer through the message's MCP endpoint (the honest work,
  shortened) and replies with a normal message; for any other task it dodges, by `--mode`:
  `error` (a JSON-RPC error object), `http500` (HTTP 500), `drop` (closes the connection without a reply),
  `exit` (the process exits at once, holding the request), `failed` (an A2A task in state `failed`).
The AgentBeats greeting (battle_info JSON) is acknowledged.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scenarios" / "appworld"))
from kernel.task_message import is_battle_info, parse_task_message  # noqa: E402

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
MODES = ("error", "http500", "drop", "exit", "failed")


def complete(mcp_url: str, answer: Any) -> None:
    arguments = {} if answer is None else {"answer": answer}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "supervisor__complete_task", "arguments": arguments}}
    requests.post(mcp_url, json=body, headers=MCP_HEADERS, timeout=60).raise_for_status()


def handler(mode: str, answers: dict[str, Any], port: int) -> type[BaseHTTPRequestHandler]:
    class Dodger(BaseHTTPRequestHandler):
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
                self._json(200, {"name": f"dodger ({mode})", "description": "a selective dodger",
                                 "url": f"http://127.0.0.1:{port}/", "version": "1.0.0", "capabilities": {},
                                 "defaultInputModes": ["text"], "defaultOutputModes": ["text"], "skills": []})
            else:
                self._json(404, {"error": "not found"})

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            text = request["params"]["message"]["parts"][0]["text"]
            reply = {"jsonrpc": "2.0", "id": request.get("id"),
                     "result": {"kind": "message", "role": "agent", "messageId": "m", "parts": [
                         {"kind": "text", "text": "done"}]}}
            if is_battle_info(text):
                return self._json(200, reply)
            task = parse_task_message(text)
            if task.task_id in answers:
                complete(task.mcp_url, answers[task.task_id])
                return self._json(200, reply)
            self.dodge(request)

        def dodge(self, request: dict[str, Any]) -> None:
            if mode == "error":
                self._json(200, {"jsonrpc": "2.0", "id": request.get("id"),
                                 "error": {"code": -32603, "message": "internal error"}})
            elif mode == "http500":
                self._json(500, {"detail": "Internal Server Error"})
            elif mode == "failed":
                self._json(200, {"jsonrpc": "2.0", "id": request.get("id"), "result": {
                    "kind": "task", "id": "t", "contextId": "c", "status": {"state": "failed", "message": {
                        "kind": "message", "role": "agent", "messageId": "e",
                        "parts": [{"kind": "text", "text": "Traceback: the agent crashed"}]}}}})
            elif mode == "drop":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
            else:
                os._exit(3)

    return Dodger


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--mode", choices=MODES, required=True)
    parser.add_argument("--answers", type=Path, required=True, help="JSON file: task id -> answer (null: none)")
    args = parser.parse_args()
    answers = json.loads(args.answers.read_text())
    ThreadingHTTPServer(("127.0.0.1", args.port), handler(args.mode, answers, args.port)).serve_forever()


if __name__ == "__main__":
    main()
