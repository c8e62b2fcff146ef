"""A scripted OpenAI-compatible server on loopback, for offline tests (never a production path).

Contract (what real clients see; the `openai` SDK and openai-agents work against it unchanged):

* ``POST /v1/chat/completions`` (non-streaming). The reply text comes from, in order: a callable
  ``chat_replies(body) -> Reply``; else the next item of the ``chat_replies`` queue; else
  ``default_chat_reply``; else HTTP 500 (``no scripted chat reply left``). A ``Reply`` is a string
  or a ``FakeReply(text, status, delay_s)``: ``status != 200`` answers an OpenAI-style error body
  ``{"error": {"message", "type", "code"}}``; ``delay_s`` sleeps first (to provoke client timeouts).
  Body: ``{id, object: "chat.completion", created, model, choices: [{index, message: {role,
  content}, finish_reason: "stop"}], usage: {prompt_tokens, completion_tokens, total_tokens}}``; a
  ``FakeReply(tool_call=(name, args))`` answers ``message.tool_calls`` (one function call) instead;
  token counts are len(text)/4 estimates.
* ``POST /v1/responses`` (non-streaming), as the openai-agents SDK calls it:
  - the script is a JSON list of steps ``{"tool": name, "args": {...}}`` (or ``{"steps": [...],
    "final": text}``) found between ``<<FAKE_SCRIPT>>`` and ``<<END>>`` in ``instructions``, or given
    programmatically as ``scripts={instructions_substring: script}`` (inline markers win);
  - the step to emit is the number of ``function_call`` items after the last user message: one
    ``function_call`` per turn, then a final message (``final`` with placeholders filled, or a
    ``FAKE-LLM done. tools_offered=[...]. outputs=[...]. user=...`` summary);
  - a step whose tool is not in the request's ``tools`` yields a diagnostic text message instead;
  - placeholders in string args: ``{battle_id} {opp_url} {backend_url} {task_config}`` (from the
    AgentBeats battle_start JSON in a user message), ``{last_output}`` (first 300 chars of the last
    tool output) and ``{last_output.KEY}`` (a field found anywhere in the JSON-decoded last output;
    a lone placeholder keeps the field's JSON type);
  - ``text.format.type == "json_schema"`` -> valid JSON text: a minimal instance of the schema
    (``{"response": "1"}`` without one);
  - the AgentBeats backend's registration call (instructions about extracting relevant parts of task
    descriptions) gets the last word of the user text as the alias suffix.
* ``GET /v1/models``, ``GET /health``; anything else is a JSON 404.
* Every POST is recorded in ``FakeOpenAI.requests`` (``{"path", "body", "ts"}``) and, if
  ``log_path`` is set, appended to that JSONL file.

In tests: ``with FakeOpenAI(chat_replies=["spotify.login"]) as fake: ... fake.base_url`` (a free
port, a background thread, stopped on exit). Across processes:
``python tests/fake_openai.py --port P [--log FILE] [--scripts FILE.json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import responses_script as rs

START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0


@dataclass
class FakeReply:
    """One scripted chat completion: text, or an error status; optionally delayed; optionally one function call."""

    text: str = ""
    status: int = 200
    delay_s: float = 0.0
    tool_call: tuple[str, dict[str, Any]] | None = None
    """(name, arguments): the reply is `message.tool_calls = [that call]` (content null, finish_reason tool_calls)."""


Reply = Union[str, FakeReply]
ChatSource = Union[Iterable[Reply], Callable[[dict[str, Any]], Reply], None]


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": "fake_error", "param": None, "code": str(status)}},
                        status_code=status)


class FakeOpenAI:
    """The stand-in server (see the module docstring for its contract)."""

    def __init__(self, chat_replies: ChatSource = None, *, scripts: dict[str, Any] | None = None,
                 default_chat_reply: str | None = None, log_path: Path | None = None,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self._chat_fn = chat_replies if callable(chat_replies) else None
        self._chat_queue: collections.deque[Reply] = collections.deque(
            [] if chat_replies is None or callable(chat_replies) else chat_replies)
        self.scripts: dict[str, Any] = dict(scripts or {})
        self.default_chat_reply = default_chat_reply
        self.log_path = Path(log_path) if log_path else None
        self.host, self.port = host, port
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.app = Starlette(routes=[
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/v1/responses", self._responses, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
            Route("/health", lambda _: JSONResponse({"ok": True}), methods=["GET"]),
            Route("/{path:path}", lambda r: _error(404, f"FakeOpenAI: no route {r.url.path}"),
                  methods=["GET", "POST", "PUT", "DELETE", "PATCH"]),
        ])

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (`.../v1`) to hand to clients."""
        return f"http://{self.host}:{self.port}/v1"

    def add_chat_replies(self, *replies: Reply) -> None:
        self._chat_queue.extend(replies)

    def requests_to(self, suffix: str) -> list[dict[str, Any]]:
        """Recorded requests whose path ends with `suffix` (e.g. "/chat/completions")."""
        with self._lock:
            return [r for r in self.requests if r["path"].endswith(suffix)]

    # --- lifecycle -------------------------------------------------------------------------
    def start(self) -> "FakeOpenAI":
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True,
                                        name=f"fake-openai-{self.port}")
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                self.stop()
                raise RuntimeError(f"FakeOpenAI did not start on {self.host}:{self.port}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(STOP_TIMEOUT_S)
        self._server = self._thread = None

    def __enter__(self) -> "FakeOpenAI":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- handlers --------------------------------------------------------------------------
    async def _record(self, request: Request) -> dict[str, Any]:
        try:
            body = await request.json()
        except ValueError:
            body = {}
        entry = {"path": request.url.path, "body": body, "ts": time.time()}
        with self._lock:
            self.requests.append(entry)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(entry) + "\n")
        return body if isinstance(body, dict) else {}

    def _next_chat_reply(self, body: dict[str, Any]) -> Reply | None:
        if self._chat_fn is not None:
            return self._chat_fn(body)
        with self._lock:
            if self._chat_queue:
                return self._chat_queue.popleft()
        return self.default_chat_reply

    async def _chat(self, request: Request) -> JSONResponse:
        body = await self._record(request)
        if body.get("stream"):
            return _error(400, "FakeOpenAI: streaming is not supported")
        reply = self._next_chat_reply(body)
        if reply is None:
            return _error(500, "FakeOpenAI: no scripted chat reply left")
        reply = FakeReply(text=reply) if isinstance(reply, str) else reply
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        if reply.status != 200:
            return _error(reply.status, reply.text or f"FakeOpenAI scripted error {reply.status}")
        prompt = "".join(rs.text_of(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict))
        usage_in, usage_out = _tokens(prompt), _tokens(reply.text)
        message: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": None}
        if reply.tool_call is not None:
            name, arguments = reply.tool_call
            message.update(content=None, tool_calls=[{"id": "call_" + uuid.uuid4().hex[:8], "type": "function",
                                                      "function": {"name": name, "arguments": json.dumps(arguments)}}])
        return JSONResponse({
            "id": "chatcmpl-" + uuid.uuid4().hex[:12], "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if reply.tool_call else "stop", "logprobs": None}],
            "usage": {"prompt_tokens": usage_in, "completion_tokens": usage_out, "total_tokens": usage_in + usage_out},
        })

    async def _responses(self, request: Request) -> JSONResponse:
        body = await self._record(request)
        if body.get("stream"):
            return _error(400, "FakeOpenAI: streaming is not supported")
        try:
            item = rs.next_output(body, self.scripts)
        except (ValueError, KeyError, TypeError) as exc:
            item = rs.message_item(f"FAKE: bad script: {exc}")
        prompt = json.dumps(body.get("input")) + str(body.get("instructions") or "")
        return JSONResponse(rs.response_object(body, [item], _tokens(prompt), _tokens(json.dumps(item))))

    async def _models(self, request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": "fake", "object": "model", "owned_by": "fake"}]})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible stand-in (loopback only).")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", type=Path, default=None, help="append every request to this JSONL file")
    parser.add_argument("--scripts", type=Path, default=None, help="JSON {instructions_substring: script}")
    parser.add_argument("--chat-reply", action="append", default=[], help="queue a chat completion reply")
    parser.add_argument("--default-chat-reply", default=None, help="reply when the queue is empty")
    args = parser.parse_args(argv)
    scripts = json.loads(args.scripts.read_text()) if args.scripts else None
    fake = FakeOpenAI(args.chat_reply, scripts=scripts, default_chat_reply=args.default_chat_reply,
                      log_path=args.log, port=args.port)
    config = uvicorn.Config(fake.app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="off")
    uvicorn.Server(config).run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
