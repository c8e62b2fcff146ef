"""Pydantic models of the gateway's configuration and its HTTP control API (JSON bodies)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from kernel.fault_spec import FaultSpec
from kernel.paraphrase_set import MAX_TEXT_CHARS
from kernel.scrubber import MAX_BATTLE_VALUES
from kernel.settings import DEFAULT_CODE_SPARES, MAX_CODE_SPARES, Interaction, SandboxChoice, ScopePolicy
from mcp_gateway.forwarding import DEFAULT_CONNECT_TIMEOUT_S, DEFAULT_READ_TIMEOUT_S

OutputType = Literal["both", "content_only", "structured_data_only"]
MAX_COMPLETION_WAIT_S = 60.0


class GatewayConfig(BaseModel):
    """Everything one gateway process needs."""

    remote_apis_url: str = Field(description="AppWorld APIs server, e.g. http://127.0.0.1:9000.")
    appworld_root: Path = Field(description="AppWorld root whose data/api_docs define the tools.")
    log_path: Path = Field(description="JSONL call log (appended).")
    app_names: list[str] | None = Field(default=None, description="Apps exposed; None: all except api_docs, admin.")
    host: str = Field(default="127.0.0.1", description="Bind address.")
    port: int = Field(default=10000, ge=0, le=65535, description="Bind port.")
    output_type: OutputType = Field(
        default="both",
        description="Result form: text + structured (default; the openai-agents SDK reads only text), or one of them.",
    )
    connect_timeout_s: float = Field(default=DEFAULT_CONNECT_TIMEOUT_S, gt=0, description="APIs server connect timeout.")
    read_timeout_s: float = Field(default=DEFAULT_READ_TIMEOUT_S, gt=0, description="APIs server read timeout.")
    appworld_python: Path | None = Field(default=None, description=(
        "Python of the AppWorld virtualenv, which runs a code-mode battle's sandboxed REPL (None: the default)."))
    unsafe_code_in_process: bool = Field(default=False, description=(
        "Run a code-mode battle's REPL without a sandbox where no sandbox can run (unsafe; recorded)."))
    code_sandbox: SandboxChoice = Field(default="auto", description=(
        "The REPL's sandbox: auto (bubblewrap, else landlock) | bubblewrap | landlock (forced)."))
    code_spares: int = Field(default=DEFAULT_CODE_SPARES, ge=0, le=MAX_CODE_SPARES, description=(
        "Spare REPLs kept importing for the next code battles (setting `code_spares`)."))
    code_spares_at_start: bool = Field(default=False, description=(
        "Spawn the spare REPLs at start (a code-mode run), not at the first code battle (a tools run keeps none)."))


MIN_TOKEN_LENGTH = 32
RefusalReason = Literal["no_battle", "wrong_token", "token_required", "episode_over", "battle_ended", "too_many_calls"]
"""Why a call was refused before it reached the APIs server: it belongs to no running battle (no battle, a
wrong or revoked token, the plain URL), its battle's episode is over (complete_task succeeded or the Green
ended it at the deadline), its battle ended while it was queued, or its battle already has the most calls
in flight that one battle may have."""


class BattleScope(BaseModel):
    """`PUT /control/battle`: the battle and task the next calls belong to, and the allowed tools."""

    battle_id: str = Field(min_length=1, max_length=200, description="Battle id used to attribute calls.")
    token: str | None = Field(default=None, min_length=MIN_TOKEN_LENGTH, max_length=200, description=(
        "The battle's capability: calls through `/b/<token>/mcp` or `/b/<token>/sse` belong to it."))
    launch_url_allowed: bool = Field(default=False, description=(
        "Also accept calls through the plain `/mcp` and `/sse` routes while this battle runs (an AgentBeats "
        "SDK Blue takes its MCP URL from scenario.toml at launch and is respawned at every battle)."))
    task_id: str | None = Field(default=None, max_length=200, description="AppWorld task id of the battle.")
    scope: list[str] | None = Field(
        default=None,
        description="Tool names listed and callable; None: every tool. Exactly what is sent "
                    "(the Green includes supervisor__complete_task itself).",
    )
    policy: ScopePolicy = Field(
        default="advise",
        description="advise: list the scope + api_docs tools + call_api, serve any API (out-of-scope calls logged "
                    "in_scope false); enforce: list and serve only the scope (others refused).",
    )
    interaction: Interaction = Field(default="tools", description=(
        "tools: one MCP tool per API; code: the one tool `execute` runs Python in the battle's sandboxed REPL, "
        "whose `apis` calls take the same path (scope, refusals, log) as tool calls."))
    task_datetime: str | None = Field(default=None, max_length=64, description=(
        "The task's frozen date and time (ISO 8601); required in code mode (the REPL's clock)."))
    secrets: list[str] = Field(default_factory=list, max_length=MAX_BATTLE_VALUES, exclude=True, repr=False,
                               description=(
        "Secret values the Green knows for the battle (the supervisor's passwords): scrubbed from everything the "
        "gateway writes about it (`kernel.scrubber`). Never echoed: not in the battle's state or any reply."))
    faults: FaultSpec | None = Field(default=None, description=(
        "A reliability run's fault spec: the gateway answers the planned calls with a fault (`mcp_gateway.faults`); "
        "None: every call is forwarded. It must carry the run's secret (`salt`): a plan drawn from the published "
        "seed alone is one an agent can predict."))
    trial: int = Field(default=1, ge=1, le=10_000, description="The battle's trial of its task (the fault plan's input).")
    instruction: str | None = Field(default=None, min_length=1, max_length=MAX_TEXT_CHARS, description=(
        "A paraphrase arm's wording of the task: `supervisor.show_active_task` answers it in place of the "
        "instruction (`mcp_gateway.wording`); None: AppWorld's answer as it is."))

    @field_validator("faults")
    @classmethod
    def _salted(cls, value: FaultSpec | None) -> FaultSpec | None:
        if value is not None and value.salt is None:
            raise ValueError("a fault spec without the run's secret (salt) is refused: its plan would be predictable")
        return value


class BattleState(BattleScope):
    """The active battle as the gateway holds it."""

    isolation: str | None = Field(default=None, description="Code mode: the isolation its REPL runs under.")

    set_at: datetime = Field(description="When the battle was set (UTC).")
    unknown_tools: list[str] = Field(default_factory=list, description="Scope names that are not tools here.")
    refused: dict[str, int] = Field(default_factory=dict, description=(
        "Calls refused while this battle ran because they did not belong to it, by reason (not attributed)."))


class HealthReply(BaseModel):
    """`GET /health` on the Blue-facing listener: up, nothing more."""

    status: Literal["ok"] = "ok"


class ControlHealthReply(BaseModel):
    """`GET /control/health` on the control listener."""

    status: Literal["ok"] = "ok"
    tools: int = Field(description="Tools of --app-names (before any scope).")
    battle: BattleState | None = Field(default=None, description="Active battle, if any.")


DRAIN_TIMEOUT_S = 30.0
"""Longest wait for a battle's calls in flight to settle (above the forwarder's 15 s read timeout)."""
COMPLETING_WAIT_S = 240.0
"""Code mode: longest wait, when the task was completed, for the running execution (the one that completed it)
to end before its REPL is killed; above AppWorld's 100 s execution timeout and the sandbox's grace."""


class EpisodeEndedReply(BaseModel):
    """`POST /control/battle/end`: the running battle's episode is over; its calls in flight have settled."""

    battle_id: str = Field(description="The battle asked about.")
    ended: bool = Field(description="True if it is the running battle (its later calls are refused).")
    drained: bool = Field(description="Every call of it that was in flight has been answered and logged.")
    in_flight: int = Field(description="Its calls still in flight when the answer was given (0 when drained).")


class ClearedReply(BaseModel):
    """`DELETE /control/battle`: the battle that ended (its token is revoked), if any."""

    cleared: str | None = Field(default=None, description="Its battle id.")
    battle: BattleState | None = Field(default=None, description="Its final state (refusal counts).")


class CompletionReply(BaseModel):
    """`GET /control/completion`: whether Blue called supervisor__complete_task successfully."""

    battle_id: str = Field(description="The battle asked about.")
    completed: bool = Field(description="True once complete_task succeeded in this battle.")
    at: datetime | None = Field(default=None, description="When it was called (UTC).")
    status: Literal["success", "fail"] | None = Field(default=None, description="The status Blue passed.")
