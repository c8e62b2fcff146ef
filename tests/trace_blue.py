"""A Blue for the trace tests: hostile text in its calls and reply, or calls and then a hang (to be killed).

Run as a process (`python tests/trace_blue.py --port P --mode M`), speaking just enough A2A 0.3 JSON-RPC over
HTTP/1.1 to be a Blue (`stub_blue.py`). On the Green's task message it calls tools through
the message's MCP endpoint (plain JSON-RPC `tools/call`), then, by `--mode`:
- `hostile`: a call whose arguments hold markup, one nested 80 levels deep, `complete_task` with a markup answer,
  and a reply of ~900 kB of markup (under the Green's 1 MiB reply limit);
- `hang`: two calls, then it holds the request without answering (the test kills it, or the gateway).
- `leak` (tools mode): reads the supervisor's account passwords, logs in with one, sends the passwords and the token
  it got as bare argument values (a note search) and replies with them as bare text;
- `leak_code` (code mode): one `execute` of `leak_support.LEAK_CODE` (prints the token and the passwords bare),
  then one whose code holds a password, and a reply with them as bare text.
Each value a `leak` mode saw is written to `--seen` (a JSON list), for the test to look for in the run's files.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scenarios" / "appworld"))
import requests  # noqa: E402

from kernel.task_message import is_battle_info, parse_task_message  # noqa: E402
from leak_support import LEAK_CODE, seen_in_output  # noqa: E402
from stub_blue import MCP_HEADERS, StubBlue, agent_message, call_tool  # noqa: E402

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


def answer(mcp_url: str, name: str, arguments: dict[str, Any]) -> Any:
    """One `tools/call`'s answer: the API's JSON (or the REPL's output in code mode)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    reply = requests.post(mcp_url, json=body, headers=MCP_HEADERS, timeout=300)
    reply.raise_for_status()
    structured = reply.json()["result"].get("structuredContent") or {}
    return structured.get("output", structured.get("response"))


def leak(mode: str, mcp_url: str, seen: Path) -> str:
    """Read the passwords and a token, show them bare (see the module docstring); returns the reply's text."""
    if mode == "leak_code":
        values = seen_in_output(answer(mcp_url, "execute", {"code": LEAK_CODE}))
        answer(mcp_url, "execute", {"code": f"print('again', {values[1]!r})"})
    else:
        profile = answer(mcp_url, "supervisor__show_profile", {})
        accounts = {a["account_name"]: a["password"] for a in answer(mcp_url, "supervisor__show_account_passwords", {})}
        token = answer(mcp_url, "simple_note__login", {"username": profile["email"],
                                                        "password": accounts["simple_note"]})["access_token"]
        values = [token, *accounts.values()]
        answer(mcp_url, "simple_note__search_notes", {"query": accounts["simple_note"], "access_token": token})
        answer(mcp_url, "simple_note__search_notes", {"query": " ".join(values), "access_token": token})
    seen.write_text(json.dumps(values))
    return "What I read: " + " ".join(values)


def handler(mode: str, port: int, seen: Path | None = None) -> type[StubBlue]:
    class TraceBlue(StubBlue):
        card_name, card_description = f"trace blue ({mode})", "a Blue for the trace tests"

        def do_POST(self) -> None:
            request = self.read_request()
            text = request["params"]["message"]["parts"][0]["text"]
            if is_battle_info(text):
                said = "hello"
            elif mode.startswith("leak"):
                assert seen is not None, "a leak mode needs --seen"
                said = leak(mode, parse_task_message(text).mcp_url, seen)
            else:
                said = act(mode, parse_task_message(text).mcp_url)
            self._json(200, agent_message(request.get("id"), said))

    TraceBlue.port = port
    return TraceBlue


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--mode", choices=("hostile", "hang", "leak", "leak_code"), required=True)
    parser.add_argument("--seen", type=Path, default=None, help="leak modes: write the values seen here")
    args = parser.parse_args()
    ThreadingHTTPServer(("127.0.0.1", args.port), handler(args.mode, args.port, args.seen)).serve_forever()


if __name__ == "__main__":
    main()
