"""What one battle is (`BattleConfig`) and what it runs on (`BattleDeps`), and the one builder of both.

Both drivers build their battles here: the CLI/`eval` driver (`green_agent.local_battle`) from
flags and a world slot it started or attached to, the AgentBeats driver (`agentbeats.session`) from
scenario.toml's `[appworld]` table and the battle_start message. Nothing here starts a process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import requests
from pydantic import BaseModel, Field

from green_agent.appworld_client import DEFAULT_MAX_INTERACTIONS, AppWorldClient
from green_agent.gateway_client import GatewayClient
from green_agent.http_sessions import session_for
from green_agent.models.result import ScopePolicy
from green_agent.runtime.slot import SlotLock
from green_agent.runtime.slot_clients import slot_env_client, slot_gateway
from green_agent.steps.report import Reporter
from green_agent.steps.wait import AUTHORITY_EVERY_S, FALLBACK_POLL_S, REPLY_GRACE_S
from kernel.settings import Settings
from kernel.world_data import WorldData


class BattleConfig(BaseModel):
    """What one battle is (already resolved values; no lookups)."""

    battle_id: str = Field(description="Unique battle id.")
    task_config: str = Field(description="'Task description: <id>', a bare id, or a 1-based index into `split`.")
    blue: str = Field(description="Label of the Blue under test (reference | noop | llm | URL).")
    blue_url: str = Field(description="Blue's A2A URL.")
    predictor: str = Field(default="auto", description="Scope predictor (`all`/`none`: no scoping).")
    scope_policy: ScopePolicy = Field(default="advise", description="advise | enforce (see mcp_gateway.scope).")
    deadline_s: float = Field(gt=0, description="How long Blue may work.")
    run_dir: Path = Field(description="Where result.json and the evidence go.")
    split: str = Field(default="dev", description="Split a bare index refers to.")
    max_interactions: int = Field(default=DEFAULT_MAX_INTERACTIONS, description="/execute cap per world.")
    reply_grace_s: float = Field(default=REPLY_GRACE_S, description="Wait after Blue's reply for its complete_task.")
    authority_every_s: float = Field(default=AUTHORITY_EVERY_S, description="/task_completed period with a gateway.")
    fallback_poll_s: float = Field(default=FALLBACK_POLL_S, description="/task_completed period without one.")
    launch_url_allowed: bool = Field(default=False, description=(
        "The Blue calls through the gateway's plain launch URL (an SDK agent's --mcp), not only the battle's token URL."))
    bridge: bool = Field(default=False, description=(
        "The Blue is the Green's built-in in-band bridge (green_agent.a2a.bridge): its fault report is trusted."))


@dataclass
class BattleDeps:
    """The live objects a battle runs on."""

    client: AppWorldClient
    apis_url: str
    settings: Settings
    world: WorldData | None
    appworld_root: Path
    gateway: GatewayClient | None = None
    call_log_path: Path | None = None
    blue_session: requests.Session | None = None
    reporters: list[Reporter] = field(default_factory=list)
    slot_lock: SlotLock | None = None
    """Held from setup to cleanup when the driver does not hold the slot itself (the AgentBeats path)."""


class BattleChoices(BaseModel):
    """A driver's choices for one battle; None means the Settings default."""

    battle_id: str
    task: str = Field(description="Task id, 'Task description: <id>', or a 1-based index into the split.")
    blue: str = Field(description="Label of the Blue under test.")
    blue_url: str
    run_dir: Path
    predictor: str | None = None
    scope_policy: ScopePolicy | None = None
    deadline_s: float | None = Field(default=None, gt=0)
    split: str | None = None
    reply_grace_s: float | None = Field(default=None, gt=0)
    launch_url_allowed: bool = False
    bridge: bool = False
    """Only the A2A assessment driver sets this, for the bridge it started itself."""


def world_data(settings: Settings) -> WorldData | None:
    """The world's files, or None when this machine cannot read them (attach to a remote world)."""
    world = WorldData(settings.appworld_root)
    return world if (world.data / "tasks").is_dir() else None


def build_battle(choices: BattleChoices, settings: Settings, *, env_url: str, apis_url: str, gateway_url: str | None,
                 call_log_path: Path | None, reporters: list[Reporter] | None = None,
                 slot_lock: SlotLock | None = None) -> tuple[BattleConfig, BattleDeps]:
    """The config and live clients of one battle on the world slot at `env_url`/`apis_url`/`gateway_url`."""
    extra = {"reply_grace_s": choices.reply_grace_s} if choices.reply_grace_s else {}
    config = BattleConfig(
        battle_id=choices.battle_id, task_config=choices.task, blue=choices.blue, blue_url=choices.blue_url,
        predictor=choices.predictor or settings.scope_predictor,
        scope_policy=choices.scope_policy or settings.scope_policy,
        deadline_s=choices.deadline_s or settings.completion_deadline_s, run_dir=choices.run_dir,
        split=choices.split or settings.default_split, launch_url_allowed=choices.launch_url_allowed,
        bridge=choices.bridge, **extra)
    deps = BattleDeps(
        client=slot_env_client(env_url, apis_url), apis_url=apis_url, settings=settings, world=world_data(settings),
        appworld_root=settings.appworld_root, gateway=slot_gateway(gateway_url, apis_url),
        call_log_path=call_log_path, blue_session=session_for(choices.blue_url), reporters=list(reporters or []),
        slot_lock=slot_lock)
    return config, deps
