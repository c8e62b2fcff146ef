"""What one battle is (`BattleConfig`) and what it runs on (`BattleDeps`), and the one builder of both.

Every driver builds its battles here from one `BattleChoices` record: the CLI/`eval` driver
(`green_agent.local_battle`) from flags and a world slot it started or attached to, the AgentBeats
driver (`agentbeats.session`) from scenario.toml's `[appworld]` table and the battle_start message.
Settings' defaults are filled in one place, `resolve_choices`. Nothing here starts a process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import requests
from pydantic import BaseModel, Field

from green_agent.appworld_client import DEFAULT_MAX_INTERACTIONS, AppWorldClient
from green_agent.gateway_client import GatewayClient
from green_agent.http_sessions import session_for
from green_agent.runtime.slot import SlotLock
from green_agent.runtime.slot_clients import slot_env_client, slot_gateway
from green_agent.steps.report import Reporter
from green_agent.steps.wording import RunParaphrases, open_paraphrases
from green_agent.steps.wait import AUTHORITY_EVERY_S, FALLBACK_POLL_S, REPLY_GRACE_S
from kernel.errors import BadInputError
from kernel.fault_spec import FaultSpec
from kernel.paraphrase_set import ParaphraseSpec
from kernel.settings import Interaction, ScopePolicy, Settings
from kernel.task_ids import TaskRef
from kernel.world_data import WorldData


class BattleChoices(BaseModel):
    """The one record of a battle's choices: every driver builds it (the CLI's `battle` and `demo`, `eval`'s
    batch layer, the AgentBeats session). None means the Settings default; `resolve_choices` fills them."""

    blue: str = Field(description="Label of the Blue under test (reference | noop | llm | URL, or its AgentBeats name).")
    predictor: str | None = Field(default=None, description="Scope predictor (`all`/`none`: no scoping).")
    scope_policy: ScopePolicy | None = Field(default=None, description="advise | enforce (see mcp_gateway.scope).")
    interaction: Interaction | None = Field(default=None, description=(
        "tools: one MCP tool per API | code: Python against `apis` in a sandboxed REPL (the gateway's `execute`)."))
    deadline_s: float | None = Field(default=None, gt=0, description="How long Blue may work.")
    split: str | None = Field(default=None, description="Split a bare task index refers to.")
    reply_grace_s: float | None = Field(default=None, gt=0, description="Wait after Blue's reply for its complete_task.")
    launch_url_allowed: bool = Field(default=False, description=(
        "The Blue calls through the gateway's plain launch URL (an SDK agent's --mcp), not only the battle's token URL."))
    bridge: bool = Field(default=False, description=(
        "The Blue is the Green's built-in in-band bridge (green_agent.a2a.bridge): its fault report is trusted. "
        "Only the A2A assessment driver sets this, for the bridge it started itself."))
    faults: FaultSpec | None = Field(default=None, description=(
        "A reliability run's fault spec, carried to the gateway, which alone plans and applies it (None: no faults)."))
    paraphrase: ParaphraseSpec | None = Field(default=None, description=(
        "A reliability run's paraphrase setting: the agent is asked in another wording of the same task, at this "
        "strength (None: the original wording; docs/reliability.md)."))


def resolve_choices(choices: BattleChoices, settings: Settings) -> BattleChoices:
    """`choices` with every default filled in: the one place Settings' battle defaults are applied.

    Called by `build_battle` (every battle) and by `eval`'s manifest, which records the values it ran with."""
    return choices.model_copy(update={
        "predictor": choices.predictor or settings.scope_predictor,
        "scope_policy": choices.scope_policy or settings.scope_policy,
        "interaction": choices.interaction or settings.interaction,
        "deadline_s": choices.deadline_s or settings.completion_deadline_s,
        "split": choices.split or settings.default_split,
        "reply_grace_s": choices.reply_grace_s or REPLY_GRACE_S})


class BattleConfig(BaseModel):
    """What one battle is (already resolved values; no lookups)."""

    battle_id: str = Field(description="Unique battle id.")
    task: TaskRef | str = Field(description=(
        "The task as the driver resolved it (`TaskRef`), or as given: 'Task description: <id>', a bare id, or a "
        "1-based index into the split, resolved by step 1."))
    choices: BattleChoices = Field(description="The battle's choices, every default filled (`resolve_choices`).")
    blue_url: str = Field(description="Blue's A2A URL.")
    run_dir: Path = Field(description="Where result.json and the evidence go.")
    max_interactions: int = Field(default=DEFAULT_MAX_INTERACTIONS, description="/execute cap per world.")
    trial: int = Field(default=1, ge=1, description="The battle's trial of its task (an input of the fault plan).")
    publish_salt: bool = Field(default=False, description=(
        "The battle is the whole run: its finished result.json publishes the fault plan's secret (`build_battle`)."))
    authority_every_s: float = Field(default=AUTHORITY_EVERY_S, description="/task_completed period with a gateway.")
    fallback_poll_s: float = Field(default=FALLBACK_POLL_S, description="/task_completed period without one.")

    @property
    def task_config(self) -> str:
        """The task as text (a resolved task's id)."""
        return self.task.task_id if isinstance(self.task, TaskRef) else self.task


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
    paraphrases: RunParaphrases | None = None
    """The run's paraphrase set (`choices.paraphrase`), from which step 1 chooses the battle's wording."""


def world_data(settings: Settings) -> WorldData | None:
    """The world's files, or None when this machine cannot read them (attach to a remote world)."""
    world = WorldData(settings.appworld_root)
    return world if (world.data / "tasks").is_dir() else None


def run_paraphrases(spec: ParaphraseSpec | None, world: WorldData | None) -> RunParaphrases | None:
    """The run's paraphrase set, loaded once per process (`green_agent.steps.wording`); None without a spec."""
    if spec is None:
        return None
    if world is None:
        raise BadInputError("--paraphrase needs the world's files on this machine (its tasks and the paraphrase "
                            "set); attached to a remote world, run without it")
    return open_paraphrases(spec, world)


def build_battle(task: TaskRef | str, choices: BattleChoices, settings: Settings, *, battle_id: str, blue_url: str,
                 run_dir: Path, env_url: str, apis_url: str, gateway_url: str | None, call_log_path: Path | None,
                 reporters: list[Reporter] | None = None, slot_lock: SlotLock | None = None,
                 trial: int = 1, publish_salt: bool | None = None) -> tuple[BattleConfig, BattleDeps]:
    """The config and live clients of one battle (`trial` of its task) on the world slot at
    `env_url`/`apis_url`/`gateway_url`.

    A fault spec without the run's secret gets a fresh one here: the battle is then the whole run, and its
    result.json publishes the secret once it is over (`publish_salt`; None: exactly when the secret was drawn here).
    A run of many battles (`eval`) draws its secret once, keeps it across `--resume`, and publishes it itself."""
    faults = choices.faults
    drawn = faults is not None and faults.salt is None
    if faults is not None and drawn:
        choices = choices.model_copy(update={"faults": faults.salted()})
    config = BattleConfig(battle_id=battle_id, task=task, choices=resolve_choices(choices, settings),
                          blue_url=blue_url, run_dir=run_dir, trial=trial,
                          publish_salt=drawn if publish_salt is None else publish_salt)
    world = world_data(settings)
    deps = BattleDeps(
        client=slot_env_client(env_url, apis_url), apis_url=apis_url, settings=settings, world=world,
        appworld_root=settings.appworld_root, gateway=slot_gateway(gateway_url, apis_url),
        call_log_path=call_log_path, blue_session=session_for(blue_url), reporters=list(reporters or []),
        slot_lock=slot_lock, paraphrases=run_paraphrases(choices.paraphrase, world))
    return config, deps
