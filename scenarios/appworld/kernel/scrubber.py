"""The one scrubber: every secret value the referee knows, removed from every text it writes.

Redaction by key (`kernel.redaction`) blanks what stands under a credential's name; this removes known
*values* wherever they stand: a password the agent printed bare, a token echoed in an error, an API key in
a traceback. Each process registers what it knows, in two scopes:
- its own (`register_secrets`): API keys from the settings and the environment, slot secrets, the gateway
  tokens it made, the purple's HTTP Basic secret. Values under `MIN_PROCESS_CHARS` (8) are ignored: these
  are machine-made keys, and a short value of a variable named `*_TOKEN` is not one;
- a battle's (`register_battle_secrets`): the supervisor's account passwords (from the task's data,
  `kernel.world_secrets`; the Green hands them to the gateway and the bridge with the battle) and the access
  tokens AppWorld issued in it (its login replies, seen where they pass). Values under `MIN_BATTLE_CHARS` (4)
  are ignored, since a 1-3 character value is in every text and removing it would only mangle the record;
  values under `ANYWHERE_CHARS` (8) are removed only where they stand alone (not inside a longer run of
  letters and digits); longer ones wherever they appear. At most `MAX_BATTLE_VALUES` per battle and
  `KEPT_BATTLES` battles (the oldest forgotten first); longer than `MAX_VALUE_CHARS` is not registered.

`scrub(text, battle_id)` replaces every occurrence of each form a known value takes in the texts we write (as is,
JSON-escaped, ASCII or not, once or twice for a JSON result inside a JSON line; inside a Python repr, a REPL's
printed dict; HTML-escaped; URL-encoded, wholly or in part: any of its characters as the `%XX` of its UTF-8 bytes,
hex in either case, since the text is also searched with its runs of `%XX` decoded, in one more pass over a text
that holds one) with `[REDACTED]`, overlapping occurrences merged into one marker so
no part of either value is left; then JWTs and Bearer credentials. With a battle id: the process's values and
that battle's; without one: every value this process knows. `scrub_data` does it on every string of a
JSON-like value but a whole timestamp: writers of JSON scrub the data before encoding it (a replace inside
encoded JSON could fall on an escape sequence and spoil the line). Unscoped text is matched against every scope's
forms as one set, the short values' patterns compiled together once every `FRESH_SCOPES` battles and each later
battle's on its own meanwhile (a long-lived process knows up to `KEPT_BATTLES` battles: compiling them all again
after every registration was its largest cost per battle).

Not removed (say so to whoever reads a run): a secret the agent transformed before it was written (base64,
hex, reversed, split, spaced, hashed, percent-encoded twice over), a value the referee never learned, and one cut
by a bound before the scrub saw it whole (writers scrub before they cut where they can).
"""

from __future__ import annotations

import html
import json
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from functools import lru_cache
from typing import Any
from urllib.parse import quote, quote_plus

from kernel.percent import PercentDecoded, unquoted
from kernel.redaction import REDACTED, redact_credential_shapes

MIN_PROCESS_CHARS = 8
MIN_BATTLE_CHARS = 4
ANYWHERE_CHARS = 8
MAX_VALUE_CHARS = 4096
MAX_BATTLE_VALUES = 512
KEPT_BATTLES = 1024
_SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d{1,9})?)?(?:Z|[+-]\d\d:?\d\d)?")
_Compiled = tuple[tuple[str, ...], "re.Pattern[str] | None"]


@lru_cache(maxsize=65_536)
def forms(value: str) -> frozenset[str]:
    """The ways `value` can appear in a text we write (see the module docstring)."""
    shown = repr(value)[1:-1]
    found = {value, shown, quote(value, safe=""), quote_plus(value, safe="")}
    for text in (value, shown):
        for ascii_only in (True, False):
            once = json.dumps(text, ensure_ascii=ascii_only)[1:-1]
            found.update((once, json.dumps(once, ensure_ascii=ascii_only)[1:-1]))
    return frozenset(found | {html.escape(form) for form in found})


def _compile(values: Iterable[str]) -> _Compiled:
    anywhere: set[str] = set()
    alone: set[str] = set()
    for value in values:
        (anywhere if len(value) >= ANYWHERE_CHARS else alone).update(forms(value))
    pattern = None
    if alone:
        words = "|".join(re.escape(form) for form in sorted(alone, key=len, reverse=True))
        pattern = re.compile(rf"(?<![A-Za-z0-9])(?:{words})(?![A-Za-z0-9])")
    return tuple(sorted(anywhere, key=len, reverse=True)), pattern


def _apply(compiled: _Compiled, text: str) -> str:
    """`text` with every occurrence of a compiled form replaced; overlapping occurrences (of one form, or of two
    secrets that share a part) become one `[REDACTED]`, so no part of either is left."""
    anywhere, alone = compiled
    return _replace(anywhere, (alone,) if alone is not None else (), text)


def _replace(anywhere: Iterable[str], alone: Iterable["re.Pattern[str]"], text: str) -> str:
    """`_apply` over forms found anywhere and several patterns of forms standing alone, spans merged as one; in the
    text as it is and with its runs of `%XX` decoded (`kernel.percent`: a value percent-encoded in any way)."""
    anywhere, alone = tuple(anywhere), tuple(alone)
    spans = _spans(anywhere, alone, text)
    plain = unquoted(text)
    found = _spans(anywhere, alone, plain) if plain is not None else []
    if found:  # where it came from, only when a value is there (the decoded text is built once more, slower)
        decoded = PercentDecoded.of(text)
        assert decoded is not None
        if decoded.text != plain:
            found = _spans(anywhere, alone, decoded.text)
        spans += [decoded.original(start, end) for start, end in found]
    if not spans:
        return text
    parts, done = [], 0
    for start, end in _merged(spans):
        parts += [text[done:start], REDACTED]
        done = end
    return "".join(parts) + text[done:]


def _spans(anywhere: Iterable[str], alone: Iterable["re.Pattern[str]"], text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for form in anywhere:
        start = text.find(form)
        while start != -1:
            spans.append((start, start + len(form)))
            start = text.find(form, start + 1)
    for pattern in alone:
        spans.extend(match.span() for match in pattern.finditer(text))
    return spans


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


class _Scope:
    """The values of one scope and their compiled forms (replaced whole on registration, read without a lock)."""

    def __init__(self, min_chars: int, max_values: int | None = None) -> None:
        self.min_chars, self.max_values = min_chars, max_values
        self.values: frozenset[str] = frozenset()
        self.compiled: _Compiled = ((), None)

    def add(self, values: Iterable[str | None]) -> bool:
        """Add the values this scope keeps; True if any was new."""
        new = {v for v in values if isinstance(v, str) and self.min_chars <= len(v) <= MAX_VALUE_CHARS
               and REDACTED not in v} - self.values
        if self.max_values is not None:
            new = set(sorted(new)[:max(0, self.max_values - len(self.values))])
        if not new:
            return False
        self.values = self.values | new
        self.compiled = _compile(self.values)
        return True


_lock = threading.Lock()
_process = _Scope(MIN_PROCESS_CHARS)
_battles: OrderedDict[str, _Scope] = OrderedDict()
_Union = tuple[tuple[str, ...], tuple["re.Pattern[str]", ...]]
_union: list[_Union | None] = [None]
"""Every value known, for unscoped text (forms found anywhere, patterns of forms standing alone); built on the first
scrub after a registration from `_settled` and the scopes holding values it lacks, each with its own pattern."""
FRESH_SCOPES = 32
"""Scopes (battles) with values past `_settled` before it is compiled again: compiling one pattern of every battle's
short forms after each registration cost ~0.15 s per battle at 100 battles kept and ~1.5 s at 1,000 (in every
process that scrubs its log lines: the gateway, a long `eval`); now once per this many battles."""
_settled: list[tuple[frozenset[str], _Compiled]] = [(frozenset(), ((), None))]
"""Values compiled together, and their compiled forms (a forgotten battle's stay until the next compilation)."""


def register_secrets(values: Iterable[str | None]) -> None:
    """Scrub these values (this process's own secrets) from everything it writes from now on."""
    with _lock:
        if _process.add(values):
            _union[0] = None


def register_battle_secrets(battle_id: str, values: Iterable[str | None]) -> None:
    """Scrub these values from everything written about battle `battle_id` (and from unscoped text) from now on."""
    with _lock:
        scope = _battles.get(battle_id) or _Scope(MIN_BATTLE_CHARS, MAX_BATTLE_VALUES)
        _battles[battle_id] = scope
        _battles.move_to_end(battle_id)
        while len(_battles) > KEPT_BATTLES:
            _battles.popitem(last=False)
        if scope.add(values):
            _union[0] = None


def battle_secrets(battle_id: str) -> list[str]:
    """The values registered for `battle_id` (to hand the battle to another of our processes)."""
    scope = _battles.get(battle_id)
    return sorted(scope.values) if scope is not None else []


def _everything() -> _Union:
    union = _union[0]
    if union is None:
        with _lock:
            scopes = [_process, *_battles.values()]
            values, compiled = _settled[0]
            fresh = [scope for scope in scopes if not scope.values <= values]
            if len(fresh) > FRESH_SCOPES:
                values = frozenset().union(*(scope.values for scope in scopes))
                compiled = _compile(values)
                _settled[0], fresh = (values, compiled), []
            extra = [_compile(scope.values - values) for scope in fresh]  # only what `_settled` lacks (small)
            anywhere = compiled[0] + tuple(form for forms_, _ in extra for form in forms_)
            patterns = tuple(pattern for pattern in (compiled[1], *(alone for _, alone in extra)) if pattern)
            union = _union[0] = (anywhere, patterns)
    return union


def scrub(text: str, battle_id: str | None = None) -> str:
    """`text` with every known secret value (of the process and `battle_id`, or every one known), every JWT and
    Bearer credential replaced by `[REDACTED]`."""
    if not text:
        return text
    if battle_id is None:
        text = _replace(*_everything(), text)
    else:
        text = _apply(_process.compiled, text)
        scope = _battles.get(battle_id)
        if scope is not None:
            text = _apply(scope.compiled, text)
    return redact_credential_shapes(text)


def scrub_data(value: Any, battle_id: str | None = None) -> Any:
    """A copy of JSON-like `value` with every string scrubbed (keys included), except a string that is a whole
    timestamp (a model's time field: a short password among its digits must not make it unreadable).

    The known values are looked for once, in all its strings joined by NUL, before string by string: a value
    in one string is in the joined text too (a NUL is not a letter or digit, so a short value standing alone
    still stands alone), so where the joined text holds none, each string only needs the credential shapes.
    The same output either way; the cost no longer grows with strings x values (a long-lived process knows
    every battle's gateway token)."""
    texts: list[str] = []
    _collect_texts(value, texts)
    if not texts or _holds_value("\0".join(texts), battle_id):
        return _scrubbed_data(value, battle_id, scrub)
    return _scrubbed_data(value, battle_id, lambda text, _: redact_credential_shapes(text) if text else text)


def _collect_texts(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        if not _TIMESTAMP.fullmatch(value):
            out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _collect_texts(key, out)
            _collect_texts(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect_texts(item, out)


def _scrubbed_data(value: Any, battle_id: str | None, clean: Any) -> Any:
    if isinstance(value, str):
        return value if _TIMESTAMP.fullmatch(value) else clean(value, battle_id)
    if isinstance(value, dict):
        return {_scrubbed_data(k, battle_id, clean): _scrubbed_data(v, battle_id, clean) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrubbed_data(item, battle_id, clean) for item in value]
    return value


def _holds_value(text: str, battle_id: str | None) -> bool:
    """True if `text` holds a form of a value `scrub(text, battle_id)` would replace (the credential shapes apart)."""
    plain = unquoted(text)
    texts = (text,) if plain is None else (text, plain)
    if battle_id is None:
        unions = [_everything()]
    else:
        scope = _battles.get(battle_id)
        unions = [(anywhere, (pattern,) if pattern is not None else ())
                  for anywhere, pattern in [_process.compiled] + ([scope.compiled] if scope is not None else [])]
    return any(any(form in one for form in anywhere) or any(pattern.search(one) for pattern in alone)
               for anywhere, alone in unions for one in texts)


def secrets_in_environment(environ: dict[str, str]) -> list[str]:
    """Values of the variables that name a secret (`*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`)."""
    return [value for name, value in environ.items() if name.upper().endswith(_SECRET_ENV_SUFFIXES)]


def scrub_file(path: os.PathLike[str] | str, chunk_limit: int = 256 * 1024 * 1024) -> bool:
    """Rewrite the text file at `path` with `scrub` applied (a child's log, once the child stopped).

    True if it changed. A missing file, or one larger than `chunk_limit` bytes, is left alone (the latter
    logged); the rewrite is atomic and keeps the file 0600. Never raises on I/O errors (logged instead).
    """
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
