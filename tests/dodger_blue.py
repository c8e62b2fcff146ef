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
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scenarios" / "appworld"))
from kernel.task_message import is_battle_info, parse_task_message  # noqa: E402
from stub_blue import StubBlue, agent_message, call_tool  # noqa: E402

MODES = ("error", "http500", "drop", "exit", "failed")


def complete(mcp_url: str, answer: Any) -> None:
    call_tool(mcp_url, "supervisor__complete_task", {} if answer is None else {"answer": answer})


def handler(mode: str, answers: dict[str, Any], port: int) -> type[StubBlue]:
    class Dodger(StubBlue):
        card_name, card_description = f"dodger ({mode})", "a selective dodger"

        def do_POST(self) -> None:
            request = self.read_request()
            text = request["params"]["message"]["parts"][0]["text"]
            reply = agent_message(request.get("id"), "done")
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

    Dodger.port = port
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
