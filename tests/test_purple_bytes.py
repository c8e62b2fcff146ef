"""Unit tests of how the Green reads a purple's bytes (issue 31): the depth limit, the bounded transport, the
card rewrite, credentials out of URLs, and which gateway failures are the purple's.

The inner transport is httpx's `MockTransport`; it stands for a purple's HTTP server: it answers each request
with the status, headers and body given (the bounded transport is what is tested, not the network).
"""

from __future__ import annotations

import asyncio
import gzip
import json

import httpx
import pytest

from green_agent.a2a.bridge.gateway_tools import _status
from green_agent.a2a.purple_http import (BoundedTransport, PurpleBytesRefused, auth_from_env, fetch_card,
                                         split_credentials)
from kernel.a2a_tools import parse_tool_call
from kernel.bounded_json import JsonTooDeep, json_depth, loads_bounded

CARD = {"name": "p", "description": "d", "url": "http://127.0.0.1:1/elsewhere", "version": "1",
        "capabilities": {}, "defaultInputModes": ["text"], "defaultOutputModes": ["text"], "skills": [],
        "additionalInterfaces": [{"transport": "JSONRPC", "url": "http://127.0.0.1:2/"}]}


def test_json_depth_counts_brackets_outside_strings_only() -> None:
    assert json_depth('{"a": "[[[[{{", "b": [1, [2, {"c": []}]]}') == 5
    assert json_depth("7") == 0 and json_depth('"[[["') == 0 and json_depth(r'["\"[", [[]]]') == 3
    assert loads_bounded('{"a": [1]}') == {"a": [1]}
    with pytest.raises(JsonTooDeep, match="20000 levels"):
        loads_bounded("[" * 20_000 + "]" * 20_000)


def test_a_deep_tool_call_in_text_is_not_a_tool_call_and_nothing_recurses() -> None:
    problem = parse_tool_call('{"name": "x", "arguments": {"a": ' + "[" * 20_000 + "]" * 20_000 + "}}")
    assert isinstance(problem, str) and "levels deep" in problem
    stringly = parse_tool_call(json.dumps({"name": "x", "arguments": "[" * 5_000 + "]" * 5_000}))
    assert isinstance(stringly, str)


def _client(body: bytes, headers: dict[str, str] | None = None, limit: int = 1000) -> httpx.AsyncClient:
    inner = httpx.MockTransport(lambda request: httpx.Response(200, headers=headers or {}, stream=httpx.ByteStream(body)))
    return httpx.AsyncClient(transport=BoundedTransport(inner, reply_limit=limit, card_limit=limit))


def _post(client: httpx.AsyncClient) -> httpx.Response:
    async def go() -> httpx.Response:
        async with client:
            return await client.post("http://purple.test/", json={})
    return asyncio.run(go())


def test_the_transport_reads_within_its_limit_and_refuses_depth_before_parsing() -> None:
    assert _post(_client(b'{"ok": [1]}')).json() == {"ok": [1]}
    with pytest.raises(PurpleBytesRefused, match="larger than 1000 bytes"):
        _post(_client(b"a" * 1001))
    with pytest.raises(PurpleBytesRefused, match="levels deep"):
        _post(_client(b"[" * 200 + b"]" * 200))


def test_a_compressed_body_is_inflated_within_the_limit_and_a_stale_header_is_ignored() -> None:
    small = gzip.compress(b'{"ok": true}')
    assert _post(_client(small, {"Content-Encoding": "gzip"})).json() == {"ok": True}
    bomb = gzip.compress(b" " * 100_000)  # ~100 bytes on the wire
    with pytest.raises(PurpleBytesRefused, match="inflates to more than 1000 bytes"):
        _post(_client(bomb, {"Content-Encoding": "gzip"}))
    assert _post(_client(b'{"plain": 1}', {"Content-Encoding": "gzip"})).json() == {"plain": 1}  # a proxy's stale header


def test_the_card_never_chooses_where_we_connect() -> None:
    inner = httpx.MockTransport(lambda request: httpx.Response(200, json=CARD))

    async def go():  # noqa: ANN202
        async with httpx.AsyncClient(transport=BoundedTransport(inner)) as http:
            return await fetch_card(http, "http://127.0.0.1:9999")

    card = asyncio.run(go())
    assert card.url == "http://127.0.0.1:9999/" and card.additional_interfaces is None
    assert card.preferred_transport == "JSONRPC"


def test_credentials_are_taken_out_of_a_participant_url() -> None:
    clean = split_credentials("http://al%40ice:p%3Ass@127.0.0.1:8080/a?b=1")
    assert clean.url == "http://127.0.0.1:8080/a?b=1" and clean.auth == ("al@ice", "p:ss")
    assert split_credentials("https://[::1]:9/").auth is None
    assert split_credentials("http://u:p@[::1]:9/x").url == "http://[::1]:9/x"
    assert auth_from_env("u:p:q") == ("u", "p:q") and auth_from_env(None) is None


def test_only_a_413_from_the_gateway_is_the_purples() -> None:
    request = httpx.Request("POST", "http://127.0.0.1:1/mcp")
    too_large = httpx.HTTPStatusError("x", request=request, response=httpx.Response(413, request=request))
    server_error = httpx.HTTPStatusError("x", request=request, response=httpx.Response(500, request=request))
    assert _status(ExceptionGroup("g", [too_large])) == 413 and _status(server_error) == 500
    assert _status(ConnectionError("down")) is None
