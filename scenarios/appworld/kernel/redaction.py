"""Redaction by key: the credential-naming rule for the call log, the archived evidence and reports.

A key names a credential when it holds one of `password`, `passwd`, `secret`, `api_key` (`apikey`),
`authorization`, `credential`, or ends with `token` (`token`, `access_token`, `file_system_access_token`,
`accessToken`). A key that only mentions tokens is not one: `token_type` (AppWorld's `"Bearer"`),
`max_tokens`, `prompt_tokens`, `tokens` keep their plain values, which a reader of a trace should see.

- `redact(value)`: a copy with every credential-named key's value replaced by `[REDACTED]`, recursively;
- `redact_free_text(text)`: quoted `key: 'value'` pairs whose key names a credential, Bearer credentials and JWTs;
- `redact_text(text, secrets)`: the given values (as seen under credential keys of the same call), JWTs, Bearer.

Removing *known secret values* wherever they stand (the supervisor's passwords printed bare, the gateway
token, API keys) is `kernel.scrubber`'s job, which every writer calls after these.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[REDACTED]"
_SECRET_WORDS = ("password", "passwd", "secret", "api_key", "apikey", "authorization", "credential")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]+")
_KEY_START = r"(?<![\w-])[\w-]{0,64}"
"""A key's letters before the credential word: bounded, and anchored at a word start, so a long run of word
characters costs linear time (an unbounded `[\\w-]*` made the search quadratic in the run's length)."""
_SECRET_KEY = r"%s(?:(?:password|passwd|secret|api[_-]?key|authorization|credential)[\w-]{0,64}|token(?![\w-]))" % (
    _KEY_START)
_QUOTED_PAIR = re.compile(r"""(["']?%s["']?\s*[:=]\s*)(["'])(?:(?!\2).)*\2""" % _SECRET_KEY, re.IGNORECASE)
_MIN_SECRET_LEN = 4
"""Shorter values seen under a credential key are not removed from free text (they would mangle ordinary words)."""


def is_sensitive_key(key: str) -> bool:
    """True if a key names a credential (see the module docstring)."""
    lowered = key.lower().replace("-", "_")
    return any(word in lowered for word in _SECRET_WORDS) or lowered.endswith("token")


def redact(value: Any, scrub_strings: bool = False) -> Any:
    """A copy of `value` with every credential-named key's value replaced by `[REDACTED]`.

    `scrub_strings`: also pass every string value through `redact_free_text` (evidence files, reports),
    not only the call arguments' keys (the gateway's log keeps what the Blue sent otherwise verbatim)."""
    if isinstance(value, dict):
        return {k: REDACTED if is_sensitive_key(str(k)) and v is not None else redact(v, scrub_strings)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(item, scrub_strings) for item in value]
    if scrub_strings and isinstance(value, str):
        return redact_free_text(value)
    return value


def redact_free_text(text: str) -> str:
    """`text` with quoted credential pairs (`"password": "..."`, `token='...'`), Bearer credentials and JWTs redacted."""
    text = _QUOTED_PAIR.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}{m.group(2)}", text)
    return redact_credential_shapes(text)


def redact_credential_shapes(text: str) -> str:
    """`text` with Bearer credentials and anything shaped like a JWT (AppWorld's access tokens) redacted."""
    text = _BEARER.sub(f"Bearer {REDACTED}", text)
    return _JWT.sub(REDACTED, text)


def secret_values(value: Any) -> list[str]:
    """Every string stored under a credential-named key in `value` (recursively)."""
    found: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if is_sensitive_key(str(k)) and isinstance(v, (str, int, float)) and not isinstance(v, bool):
                found.append(str(v))
            else:
                found.extend(secret_values(v))
    elif isinstance(value, (list, tuple)):
        for item in value:
            found.extend(secret_values(item))
    return found


def redact_text(text: str | None, secrets: Iterable[str] = ()) -> str | None:
    """`text` with the given secret values, JWTs and Bearer credentials replaced by `[REDACTED]`."""
    if text is None:
        return None
    for secret in sorted({s for s in secrets if len(s) >= _MIN_SECRET_LEN}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return redact_credential_shapes(text)
