"""The assessment request (platform -> Green) and its task set.

The platform sends one A2A message whose text is JSON `{"participants": {"<role>": "<url>"},
"config": {...}}`; the config may also be nested as `config.assessment_config` (keys beside it win).
User info in a participant URL (`http://user:pass@host/`) is taken out of the URL at once: the clean URL is
the only one stored, logged or reported; the credentials are kept apart (`Assessment.purple_auth`) for HTTP
Basic auth. `parse_request(text)` returns an `Assessment` or raises `RequestError`, a `BadInputError` whose one
sentence names the field; `resolve_shard(config, world)` turns the config into this shard's ordered
task ids. Both run before any world starts. Unknown config keys are refused, never ignored.
`faults` (whose `rate` may be a sweep) and `paraphrase` (strengths) are read by `green_agent.reliability.arms`, the
parser the `reliability` command uses, so both doors accept and refuse the same things in the same words.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from green_agent.a2a.bridge.conversation import DEFAULT_MAX_STEPS, DEFAULT_TURN_TIMEOUT_S, MAX_TURN_TIMEOUT_S
from green_agent.a2a.purple_http import split_credentials
from green_agent.models.scope import PREDICTOR_CHOICES
from green_agent.runfolder.limits import MAX_TRIALS
from kernel.errors import BadInputError
from green_agent.reliability.arms import fault_sweep_from, strengths
from kernel.fault_spec import FaultSpec
from kernel.paraphrase_set import Strength
from kernel.scrubber import register_secrets
from kernel.settings import Interaction, ScopePolicy
from kernel.settings import MAX_SLOTS
from kernel.task_ids import validate_task_id
from kernel.world_data import WorldData

AGENT_ROLE = "agent"
MAX_SHARDS = 100
MAX_REQUEST_CHARS = 100_000


class RequestError(BadInputError):
    """The assessment request is refused (task `rejected`); the message names the field."""


class AssessmentConfig(BaseModel):
    """`config`: every key optional, with the CLI's defaults."""

    model_config = ConfigDict(extra="forbid")

    split: str | None = Field(default=None, description="Split to evaluate (default Settings.default_split).")
    task_ids: list[str] | None = Field(default=None, description="Explicit task ids (list or comma string).")
    num_tasks: int | None = Field(default=None, ge=1, description="Only the first N tasks of the ordered set.")
    num_instances: int | None = Field(default=None, ge=1, description="The platform's name for num_tasks.")
    shard_index: int = Field(default=0, ge=0, description="This shard: tasks [shard_index::num_shards].")
    num_shards: int = Field(default=1, ge=1, le=MAX_SHARDS, description="Shards the task set is cut into.")
    trials: int = Field(default=1, ge=1, le=MAX_TRIALS, description="Battles per task.")
    workers: int = Field(default=1, ge=1, le=MAX_SLOTS, description="Tasks run in parallel, each on its own slot.")
    deadline_s: float | None = Field(default=None, gt=0, description="Seconds per task (default Settings).")
    max_steps: int = Field(default=DEFAULT_MAX_STEPS, ge=1, le=10_000, description="Purple replies per task.")
    turn_timeout_s: float = Field(default=DEFAULT_TURN_TIMEOUT_S, gt=0, le=MAX_TURN_TIMEOUT_S,
                                  description="Seconds the purple may take for one reply (< 300).")
    predictor: str | None = Field(default=None, description="Scope predictor (default Settings.scope_predictor).")
    scope_policy: ScopePolicy | None = Field(default=None, description="advise | enforce.")
    interaction: Interaction | None = Field(default=None, description=(
        "tools | code (the purple writes Python against `apis`: protocol appworld-a2a-code/1, docs/a2a.md)."))
    faults: list[FaultSpec] | None = Field(default=None, description=(
        "A reliability profile's fault arms: {rate, seed, kinds, timeout_s, max_consecutive}, `rate` one number or a "
        "sweep (a list, or `R1+R2`): one arm per rate (`kernel.fault_spec`, docs/reliability.md)."))
    paraphrase: list[Strength] | None = Field(default=None, description=(
        "A reliability profile's paraphrase arms: strengths as a list or `S1+S2` (mild, medium, strong, "
        "naturalistic), worded from the world's authored set (docs/paraphrases.md)."))
    paraphrase_seed: int = Field(default=0, ge=0, description="Seed of the variant choice (as `--paraphrase-seed`).")

    @field_validator("task_ids", mode="before")
    @classmethod
    def _comma_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("predictor")
    @classmethod
    def _known_predictor(cls, value: str | None) -> str | None:
        if value is not None and value not in PREDICTOR_CHOICES:
            raise ValueError(f"must be one of {', '.join(PREDICTOR_CHOICES)}")
        return value


class Assessment(BaseModel):
    """A parsed request: who plays (its role and URL) and the config."""

    role: str = Field(description="The participant's role (`agent`, or the only one given).")
    purple_url: str = Field(description="The participant's A2A URL, without user info (the one stored and shown).")
    purple_auth: tuple[str, str] | None = Field(default=None, exclude=True, repr=False, description=(
        "HTTP Basic credentials taken out of the participant URL's user info; never stored, logged or reported."))
    config: AssessmentConfig


def parse_request(text: str) -> Assessment:
    """The request text -> `Assessment`; raise RequestError naming the field (see the module docstring)."""
    if len(text) > MAX_REQUEST_CHARS:
        raise RequestError(f"the request is too long ({len(text)} characters; at most {MAX_REQUEST_CHARS})")
    try:
        body = json.loads(text)
    except ValueError:
        raise RequestError('the request is not JSON: send {"participants": {"agent": URL}, "config": {...}}') from None
    if not isinstance(body, dict):
        raise RequestError("the request must be a JSON object with participants and config")
    extra = sorted(set(body) - {"participants", "config"})
    if extra:
        raise RequestError(f"{_quote(extra[0])} is not a request field (only participants and config are)")
    role, url = _participant(body.get("participants"))
    clean = split_credentials(url)
    register_secrets([clean.auth[1]] if clean.auth else [])
    return Assessment(role=role, purple_url=clean.url, purple_auth=clean.auth, config=_config(body.get("config")))


def _participant(participants: Any) -> tuple[str, str]:
    if not isinstance(participants, dict) or not participants:
        raise RequestError(f"participants must name the agent under test, e.g. {{\"{AGENT_ROLE}\": URL}}")
    if AGENT_ROLE in participants:
        role = AGENT_ROLE
    elif len(participants) == 1:
        role = next(iter(participants))
    else:
        raise RequestError(f"participants has no role {AGENT_ROLE!r} and more than one role: name the agent "
                           f"under test {AGENT_ROLE!r}")
    url = participants[role]
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise RequestError(f"participants.{_quote(role)} must be an http(s) URL of an A2A agent")
    return str(role), url.rstrip("/")


def _config(config: Any) -> AssessmentConfig:
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise RequestError("config must be a JSON object")
    nested = config.get("assessment_config", {})
    if not isinstance(nested, dict):
        raise RequestError("config.assessment_config must be a JSON object")
    merged = {**nested, **{k: v for k, v in config.items() if k != "assessment_config"}}
    merged = _arms(merged)
    try:
        return AssessmentConfig.model_validate(merged)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        if error["type"] == "extra_forbidden":
            known = ", ".join(AssessmentConfig.model_fields)
            raise RequestError(f"config.{_quote(field)} is not a known key (known: {known})") from None
        raise RequestError(f"config.{_quote(field)}: {error['msg']}") from None


def _arms(config: dict[str, Any]) -> dict[str, Any]:
    """`faults` and `paraphrase` parsed as the `reliability` command parses them; RequestError in their words."""
    try:
        if config.get("faults") is not None:
            config = {**config, "faults": fault_sweep_from(config["faults"], "config.faults")}
        if config.get("paraphrase") is not None:
            config = {**config, "paraphrase": strengths(config["paraphrase"], "config.paraphrase")}
    except BadInputError as exc:
        raise RequestError(str(exc)) from None
    return config


def resolve_shard(config: AssessmentConfig, world: WorldData, default_split: str) -> tuple[list[str], int]:
    """This shard's ordered task ids and the size of the whole (unsharded) task set."""
    if config.split and config.task_ids:
        raise RequestError("config.split and config.task_ids exclude each other: give one")
    if config.num_tasks and config.num_instances and config.num_tasks != config.num_instances:
        raise RequestError("config.num_tasks and config.num_instances disagree: give one")
    if config.shard_index >= config.num_shards:
        raise RequestError(f"config.shard_index {config.shard_index} is out of range for num_shards "
                           f"{config.num_shards} (0..{config.num_shards - 1})")
    if config.task_ids is not None:
        ids = config.task_ids
        try:
            ids = [validate_task_id(t) for t in ids]
        except BadInputError as exc:
            raise RequestError(f"config.task_ids: {exc}") from None
        missing = [t for t in ids if not world.has_task(t)]
        if missing:
            raise RequestError(f"config.task_ids: unknown task id(s) {', '.join(missing[:5])}")
    else:
        try:
            ids = world.split(config.split or default_split)
        except BadInputError as exc:
            raise RequestError(f"config.split: {exc}") from None
    ordered = list(dict.fromkeys(ids))
    if not ordered:
        raise RequestError("config.task_ids is empty" if config.task_ids is not None else "config.split is empty")
    limit = config.num_tasks or config.num_instances
    ordered = ordered[:limit] if limit else ordered
    return ordered[config.shard_index::config.num_shards], len(ordered)


def _quote(name: str) -> str:
    """A field name from the request, made safe to print (it is the caller's text)."""
    text = str(name)[:60]
    return text if text.replace("_", "").replace(".", "").isalnum() else json.dumps(text)
