"""The backend's battle_start message, validated.

The stock executor does not recognise battle_start (D9): it reaches the Green as raw JSON text.
`parse_battle_start` turns that text into a typed `BattleStart` or raises `BadInputError` with a
message naming what is wrong (not JSON, missing field, wrong type), quoting little of the input.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kernel.errors import BadInputError

MAX_MESSAGE_CHARS = 200_000
"""A battle_start is a few hundred bytes; anything this large is refused before parsing."""
_TASK_DESCRIPTION = re.compile(r"^\s*Task description:\s*", re.IGNORECASE)


def _http_url(value: str) -> str:
    if not re.fullmatch(r"https?://[A-Za-z0-9.\-\[\]:]+(/[^\s]*)?", value or ""):
        raise ValueError(f"not an http(s) URL: {value[:80]!r}")
    return value.rstrip("/")


class GreenBattleContext(BaseModel):
    """`green_battle_context`: where to report, and the registered task config."""

    model_config = ConfigDict(extra="ignore")

    battle_id: str = Field(min_length=1, max_length=200, description="Battle id.")
    backend_url: str = Field(description="Backend REST URL (the backend's PUBLIC_BACKEND_URL).")
    agent_name: str = Field(default="green_agent", max_length=200, description="The Green's alias.")
    task_config: str = Field(default="", max_length=10_000, description="'Task description: <x>' or ''.")

    _url = field_validator("backend_url")(lambda cls, v: _http_url(v))


class OpponentInfo(BaseModel):
    """One opponent: its slot name and A2A URL."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1, max_length=200, description="Opponent alias.")
    agent_url: str = Field(description="Opponent's A2A URL.")

    _url = field_validator("agent_url")(lambda cls, v: _http_url(v))


class BattleStart(BaseModel):
    """The battle_start message sent once to the Green."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["battle_start"] = Field(description="Always battle_start.")
    battle_id: str = Field(min_length=1, max_length=200, description="Battle id.")
    green_battle_context: GreenBattleContext = Field(description="The Green's context.")
    red_battle_contexts: dict[str, Any] = Field(default_factory=dict, description="Opponents' contexts by URL.")
    opponent_infos: list[OpponentInfo] = Field(min_length=1, description="Opponents (the Blue first).")

    @property
    def backend_url(self) -> str:
        return self.green_battle_context.backend_url

    @property
    def blue(self) -> OpponentInfo:
        return self.opponent_infos[0]

    @property
    def task_config(self) -> str | None:
        """The registered task config without the 'Task description:' prefix; None when empty."""
        value = _TASK_DESCRIPTION.sub("", self.green_battle_context.task_config).strip()
        return value or None


def is_battle_start_text(text: str) -> bool:
    """Cheap check: does this message claim to be a battle_start (before full validation)?"""
    return isinstance(text, str) and '"battle_start"' in text[:MAX_MESSAGE_CHARS] and text.lstrip().startswith("{")


def parse_battle_start(text: str) -> BattleStart:
    """Parse and validate a battle_start message; raise BadInputError saying what is wrong."""
    if not isinstance(text, str):
        raise BadInputError(f"battle_start must be text, got {type(text).__name__}")
    if len(text) > MAX_MESSAGE_CHARS:
        raise BadInputError(f"battle_start message too large ({len(text)} characters)")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BadInputError(f"battle_start is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(data, dict):
        raise BadInputError(f"battle_start must be a JSON object, got {type(data).__name__}")
    try:
        return BattleStart.model_validate(data)
    except ValidationError as exc:
        raise BadInputError(f"invalid battle_start: {describe_errors(exc)}") from None


def describe_errors(exc: ValidationError, limit: int = 5) -> str:
    """'field.path: problem' for the first `limit` errors, without echoing long inputs."""
    parts = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(p) for p in error["loc"]) or "(message)"
        parts.append(f"{where}: {error['msg']}")
    more = exc.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
