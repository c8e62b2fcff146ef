"""A Blue for the trace tests: hostile text in its calls and reply, or calls and then a hang (to be killed).

Run as a process (`python tests/trace_blue.py --port P --mode M`), speaking just enough A2A 0.3 JSON-RPC over
HTTP/1.1 to be a Blue (`stub_blue.py`). On the Green's task message it calls tools through
the message's MCP endpoint (plain JSON-RPC `tools/call`), then, by `--mode`:
- `hostile`: a call whose arguments hold markup, one nested 80 levels deep, `complete_task` with a markup answer,
  and a reply of ~900 kB of markup (under the Green's 1 MiB reply limit);
- `hang`: two calls, then it holds the request without answering (the test kills it, or the gateway).
"""

from __future__ import annotations

import argparse
import sys
import time
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scenarios" / "appworld"))
from kernel.task_message import is_battle_info, parse_task_message  # noqa: E402
from stub_blue import StubBlue, agent_message, call_tool  # noqa: E402

MARKUP = '<script>window.pwned=1</script><img src=x onerror="alert(1)"><b id="injected">bold</b>'


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"deeper": [value]}
    return value


def act(mode: str, mcp_url: str) -> str:
    call_tool(mcp_url, "supervisor__show_profile", {})
    if mode == "hang":
        call_tool(mcp_url, "supervisor__show_account_passwords", {})
        while True:
            time.sleep(60)
    call_tool(mcp_url, "simple_note__search_notes", {"query": MARKUP, "access_token": "not-a-real-token"})
    call_tool(mcp_url, "simple_note__search_notes", {"query": nested(40)})  # 80 levels: the gateway takes up to 100
    call_tool(mcp_url, "supervisor__complete_task", {"answer": MARKUP})
    return (MARKUP + "\n") * 10_000


def handler(mode: str, port: int) -> type[StubBlue]:
    class TraceBlue(StubBlue):
        card_name, card_description = f"trace blue ({mode})", "a Blue for the trace tests"

        def do_POST(self) -> None:
            request = self.read_request()
            text = request["params"]["message"]["parts"][0]["text"]
            said = "hello" if is_battle_info(text) else act(mode, parse_task_message(text).mcp_url)
            self._json(200, agent_message(request.get("id"), said))

    TraceBlue.port = port
    return TraceBlue


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--mode", choices=("hostile", "hang"), required=True)
    args = parser.parse_args()
    ThreadingHTTPServer(("127.0.0.1", args.port), handler(args.mode, args.port)).serve_forever()


if __name__ == "__main__":
    main()
