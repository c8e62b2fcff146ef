"""How large one request to AppWorld's APIs server may be: checked before it is sent, answered as a bad argument.

AppWorld's APIs server is uvicorn 0.27 on h11 0.16 (the AppWorld virtualenv has no httptools). h11 refuses a
request whose head (request line and headers) is not complete within 16 KiB of buffered bytes (its
`DEFAULT_MAX_INCOMPLETE_EVENT_SIZE`; uvicorn keeps that default): uvicorn answers 400 "Invalid HTTP request
received." and closes the socket with the rest unread, which the sender sees as a reset (`requests` raises
`ChunkedEncodingError`, or `ConnectionError` while still sending). Whether a head between 16 KiB and about 64 KiB
passes depends on how the kernel hands it over (one loopback segment is read whole), so the bounds sit well below
16 KiB, where the server's answer does not depend on timing. Neither uvicorn nor h11 bounds a body; ours bounds
what one call may make the server parse (through the gateway a call's arguments are bounded before this, by
`gateway.MAX_ARGUMENTS_BYTES` on their JSON; a URL-encoded query can be three times as long).

`too_large(prepared)` measures the prepared request as it will go out (no second encoding: the length of the
path, the headers and the body `requests` already built) and returns the agent-facing message naming the limit,
or None. A request over a bound is never sent: the forwarder answers it as AppWorld answers a bad argument, HTTP
422 with `{"message": ...}` (`TOO_LARGE_STATUS`), which a tool call gets as an API error and code mode raises
inside the code as AppWorld's requester does (`Response status code is 422:` and the body).
"""

from __future__ import annotations

from requests import PreparedRequest

MAX_REQUEST_LINE_BYTES = 8 * 1024
"""The request line (`GET <path>?<query> HTTP/1.1`): a GET's arguments travel in its query string."""
MAX_REQUEST_HEAD_BYTES = 12 * 1024
"""The request line and every header (the `access_token` travels as `Authorization: Bearer <token>`)."""
MAX_REQUEST_BODY_BYTES = 1024 * 1024
"""The body (a JSON object, or the login form)."""
TOO_LARGE_STATUS = 422
"""AppWorld's status for a bad argument (`appworld.apps.api_lib.raise_http_exception`, its validation errors)."""
_HTTP_VERSION_AND_CRLF = len(" HTTP/1.1\r\n")


def too_large(prepared: PreparedRequest, host: str) -> str | None:
    """The message for a request over a bound (module docstring), or None; `host` is the Host header's value."""
    line = len(prepared.method or "") + 1 + len(prepared.path_url) + _HTTP_VERSION_AND_CRLF
    if line > MAX_REQUEST_LINE_BYTES:
        return _message("request line (its path and query string, where a GET call's arguments go)", line,
                        MAX_REQUEST_LINE_BYTES)
    head = line + len("Host: \r\n") + len(host) + 2 + sum(
        len(name) + len(value) + 4 for name, value in prepared.headers.items())
    if head > MAX_REQUEST_HEAD_BYTES:
        return _message("request line and headers (its path, query string and access_token)", head,
                        MAX_REQUEST_HEAD_BYTES)
    body = prepared.body
    size = len(body) if isinstance(body, (bytes, str)) else 0
    if size > MAX_REQUEST_BODY_BYTES:
        return _message("body (its arguments as JSON)", size, MAX_REQUEST_BODY_BYTES)
    return None


def _message(part: str, size: int, limit: int) -> str:
    return (f"Request too large: this call's {part} would be {size} bytes; AppWorld's APIs server takes at most "
            f"{limit}. The call was not sent. Send shorter arguments.")
