"""Credential redaction for everything the gateway logs.

Keys that name a credential (`password`, `access_token`, anything containing password / token /
secret / api_key / authorization) have their values replaced by `[REDACTED]`, recursively through
dicts and lists. Free text (error messages) is scrubbed of the exact secret values seen in the
call's arguments and of anything shaped like a JWT or a Bearer credential.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[REDACTED]"
_SENSITIVE_PARTS = ("password", "passwd", "token", "secret", "api_key", "apikey", "authorization", "credential")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]+")
_MIN_SECRET_LEN = 4
"""Shorter secret values are not scrubbed from free text (they would mangle ordinary words)."""


def is_sensitive_key(key: str) -> bool:
    """True if a key names a credential."""
    lowered = key.lower().replace("-", "_")
    return any(part in lowered for part in _SENSITIVE_PARTS)


def redact(value: Any) -> Any:
    """A copy of `value` with every credential-named key's value replaced by `[REDACTED]`."""
    if isinstance(value, dict):
        return {k: REDACTED if is_sensitive_key(str(k)) and v is not None else redact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(item) for item in value]
    return value


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
    text = _BEARER.sub(f"Bearer {REDACTED}", text)
    return _JWT.sub(REDACTED, text)
