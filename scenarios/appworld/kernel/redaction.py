"""The one credential-redaction policy: for the gateway's call log, the archived evidence and reports.

Keys that name a credential (`password`, `access_token`, anything containing password / passwd /
token / secret / api_key / authorization / credential) have their values replaced by `[REDACTED]`,
recursively through dicts and lists. Free text (error messages, log lines) is scrubbed of the exact
secret values seen in a call's arguments, of quoted `key: 'value'` pairs whose key names a
credential, and of anything shaped like a JWT or a Bearer credential.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[REDACTED]"
_SENSITIVE_PARTS = ("password", "passwd", "token", "secret", "api_key", "apikey", "authorization", "credential")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]+")
_KEY_AFFIX = r"(?<![\w-])[\w-]{0,%d}" % 64
"""A key's letters around the credential word: bounded, and anchored at a word start, so a long run of word
characters costs linear time (an unbounded `[\w-]*` made the search quadratic in the run's length)."""
_QUOTED_PAIR = re.compile(
    r"""(["']?%s(?:%s)[\w-]{0,64}["']?\s*[:=]\s*)(["'])(?:(?!\2).)*\2""" % (_KEY_AFFIX, "|".join(_SENSITIVE_PARTS)),
    re.IGNORECASE)
_MIN_SECRET_LEN = 4
"""Shorter secret values are not scrubbed from free text (they would mangle ordinary words)."""


def is_sensitive_key(key: str) -> bool:
    """True if a key names a credential."""
    lowered = key.lower().replace("-", "_")
    return any(part in lowered for part in _SENSITIVE_PARTS)


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
    text = _BEARER.sub(f"Bearer {REDACTED}", text)
    return _JWT.sub(REDACTED, text)


# -- process-wide scrubbing of known secret values --------------------------------------------
# Redaction above works on what a call carries. Scrubbing removes the *values* of every secret the
# process knows (API keys from the environment, slot secrets, world passwords and tokens seen) from
# anything it writes or prints, including text that came from a third party (an OpenAI-compatible
# endpoint that echoes the key in its error, a traceback).

_MIN_SCRUBBED_LEN = 8
"""Registered values shorter than this are ignored (they would mangle ordinary text)."""
_SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
_known: set[str] = set()
_longest_first: tuple[str, ...] = ()
"""`_known`, longest first (a secret that contains another is replaced whole); rebuilt only on registration."""


def register_secrets(values: Iterable[str | None]) -> None:
    """Scrub these values from everything this process writes from now on."""
    global _longest_first
    new = {v for v in values if isinstance(v, str) and len(v) >= _MIN_SCRUBBED_LEN} - _known
    if new:
        _known.update(new)
        _longest_first = tuple(sorted(_known, key=len, reverse=True))


def secrets_in_environment(environ: dict[str, str]) -> list[str]:
    """Values of the variables that name a secret (`*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`)."""
    return [value for name, value in environ.items() if name.upper().endswith(_SECRET_ENV_SUFFIXES)]


def scrub(text: str) -> str:
    """`text` with every registered secret value (and JWT or Bearer credential) replaced by `[REDACTED]`."""
    if not text:
        return text
    for secret in _longest_first:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return redact_text(text) or text


def scrub_data(value: Any) -> Any:
    """A copy of JSON-like `value` with every string scrubbed (keys included)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub_data(k): scrub_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_data(item) for item in value]
    return value


def scrub_file(path: os.PathLike[str] | str, chunk_limit: int = 256 * 1024 * 1024) -> bool:
    """Rewrite the text file at `path` with `scrub` applied (a child's log, once the child stopped).

    True if it changed. A missing file, or one larger than `chunk_limit` bytes, is left alone (the latter
    logged); the rewrite is atomic and keeps the file 0600. Never raises on I/O errors (logged instead).
    """
    import logging
    from pathlib import Path

    from kernel.atomic import atomic_write_text

    target = Path(path)
    try:
        if not target.is_file():
            return False
        if target.stat().st_size > chunk_limit:
            logging.getLogger(__name__).warning("%s is too large to scrub (%d bytes)", target, target.stat().st_size)
            return False
        text = target.read_text(errors="replace")
        cleaned = scrub(text)
        if cleaned == text:
            return False
        atomic_write_text(target, cleaned)
        return True
    except OSError as exc:
        logging.getLogger(__name__).warning("could not scrub %s: %s", target, exc)
        return False


class ScrubbingStream:
    """A text stream wrapper that scrubs every write (for stdout and stderr)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(scrub(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def scrub_process_output() -> None:
    """Scrub this process's stdout, stderr and log records from now on (idempotent)."""
    import logging
    import sys

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, ScrubbingStream):
            setattr(sys, name, ScrubbingStream(stream))
    factory = logging.getLogRecordFactory()
    if getattr(factory, "_scrubs", False):
        return

    def scrubbing_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        try:
            record.msg, record.args = scrub(record.getMessage()), None
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is left as it is
            pass
        return record

    scrubbing_factory._scrubs = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(scrubbing_factory)
    for handler in logging.getLogger().handlers:  # handlers made before the wrap keep the raw stream
        stream = getattr(handler, "stream", None)
        if stream is not None and not isinstance(stream, ScrubbingStream) and hasattr(handler, "setStream"):
            handler.setStream(ScrubbingStream(stream))
