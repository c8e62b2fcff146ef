"""The Green's per-battle configuration: the `[appworld]` table of scenario.toml.

`ScenarioManager` ignores tables it does not know, so the Green reads its own settings from the
same file the user edits. Registering `task_config` with the backend would trigger a backend LLM
call (D4), so the task normally lives here; a non-empty `task_config` in battle_start wins.

```toml
[appworld]
task = "1"                 # task id, or N = the N-th task of `split` (1-based)
split = "dev"
predictor = "auto"         # auto | llm | lexical | ground_truth | all | none | upstream_first20 | appworld_agents
scope_policy = "advise"    # advise: other APIs stay callable (logged); enforce: the gateway refuses them
interaction = "tools"      # tools: one MCP tool per API; code: Python against `apis` in a sandboxed REPL
deadline_s = 1200          # how long Blue may work
# faults = "rate=0.3,seed=1" # a reliability run: the gateway answers a seeded share of calls with a fault
green_mode = "llm"         # llm: the model follows the card; deterministic: no model call at all
env_url = "http://127.0.0.1:8000"
apis_url = "http://127.0.0.1:9000"
gateway_url = "http://127.0.0.1:10000"   # the AppWorld MCP gateway Blue uses
```

The Green's process runs with the scenario directory as its working directory (tmux `cd`), so
`find_scenario_file()` looks there first. Relative paths in the table are resolved against the
file's directory. Unset keys fall back to `Settings` (environment / `.env`): the battle's choices
(predictor, scope_policy, interaction, deadline_s, split) in the engine's `build_battle`, the rest in `resolve`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from green_agent.agentbeats.battle_start import describe_errors
from green_agent.engine.config import BattleChoices
from kernel.errors import BadInputError
from kernel.fault_spec import FaultSpec, parse_fault_spec
from kernel.paraphrase_set import ParaphraseSpec
from kernel.settings import SCENARIO_DIR, Interaction, ScopePolicy, Settings

SCENARIO_FILE = "scenario.toml"
TABLE = "appworld"
GreenMode = Literal["llm", "deterministic"]


class AppWorldScenarioConfig(BaseModel):
    """The `[appworld]` table; None means 'use Settings'."""

    model_config = ConfigDict(extra="forbid")

    task: str | None = Field(default=None, description="Task id or 1-based index into `split`.")
    split: str | None = Field(default=None, description="Split an index refers to.")
    predictor: str | None = Field(default=None, description="Scope predictor.")
    scope_policy: ScopePolicy | None = Field(default=None, description="advise | enforce.")
    interaction: Interaction | None = Field(default=None, description="tools | code (docs/code-mode.md).")
    deadline_s: float | None = Field(default=None, gt=0, le=24 * 3600, description="Blue's deadline.")
    green_mode: GreenMode = Field(default="llm", description="llm | deterministic.")
    env_url: str | None = Field(default=None, description="AppWorld env server.")
    apis_url: str | None = Field(default=None, description="AppWorld APIs server.")
    gateway_url: str | None = Field(default=None, description="AppWorld MCP gateway (base URL, no /sse); '' = none.")
    call_log_path: Path | None = Field(default=None, description="The gateway's JSONL call log.")
    runs_dir: Path | None = Field(default=None, description="Where each battle's run directory goes.")
    reply_grace_s: float | None = Field(default=None, gt=0, description="Wait after Blue's reply for complete_task.")
    faults: FaultSpec | None = Field(default=None, description=(
        "A reliability run's spec, `rate=R,seed=S[,...]` (docs/reliability.md); None: no faults."))
    paraphrase: ParaphraseSpec | None = Field(default=None, description=(
        "A paraphrase arm, `paraphrase = { strength = \"strong\", seed = 0 }` (optional `set_path`): the Blue is "
        "asked in that wording of the task (docs/paraphrases.md); None: the original wording."))

    @field_validator("faults", mode="before")
    @classmethod
    def _spec_text(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return parse_fault_spec(value, "faults")
            except BadInputError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("task", mode="before")
    @classmethod
    def _task_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class ResolvedConfig(BaseModel):
    """Everything a battle needs: the task, the battle's choices (their defaults are filled by the engine's
    `build_battle`, like every driver's), and where the world and the records are (Settings filled in)."""

    task: str = Field(description="Task config (battle_start's wins over the file's).")
    task_source: Literal["battle_start", "scenario", "default"] = Field(description="Where `task` came from.")
    choices: BattleChoices = Field(description="The table's choices for this battle (None: the Settings default).")
    green_mode: GreenMode
    env_url: str
    apis_url: str
    gateway_url: str | None
    call_log_path: Path
    runs_dir: Path


def find_scenario_file(cwd: Path | None = None) -> Path | None:
    """`<cwd>/scenario.toml` (the scenario being run), else the packaged scenario's, else None."""
    for candidate in ((cwd or Path.cwd()) / SCENARIO_FILE, SCENARIO_DIR / SCENARIO_FILE):
        if candidate.is_file():
            return candidate
    return None


def load_scenario_config(path: Path | None) -> AppWorldScenarioConfig:
    """Read `[appworld]` from `path` (an empty config if there is no file or no table)."""
    if path is None:
        return AppWorldScenarioConfig()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BadInputError(f"cannot read {path}: {exc}") from None
    table = data.get(TABLE, {})
    if not isinstance(table, dict):
        raise BadInputError(f"[{TABLE}] in {path} must be a table")
    try:
        config = AppWorldScenarioConfig.model_validate(table)
    except ValidationError as exc:
        raise BadInputError(f"invalid [{TABLE}] in {path}: {describe_errors(exc)}") from None
    base = Path(path).parent
    updates = {key: (base / value) for key in ("call_log_path", "runs_dir")
               if (value := getattr(config, key)) is not None and not value.is_absolute()}
    return config.model_copy(update=updates)


def resolve(config: AppWorldScenarioConfig, settings: Settings, battle_start_task: str | None,
            blue: str) -> ResolvedConfig:
    """Merge battle_start's task config (and the Blue's name, `blue`), the `[appworld]` table and Settings."""
    if battle_start_task:
        task, source = battle_start_task, "battle_start"
    elif config.task:
        task, source = config.task, "scenario"
    else:
        task, source = "1", "default"
    return ResolvedConfig(
        task=task, task_source=source, green_mode=config.green_mode,
        choices=BattleChoices(
            blue=blue, predictor=config.predictor, scope_policy=config.scope_policy, interaction=config.interaction,
            deadline_s=config.deadline_s, faults=config.faults, paraphrase=config.paraphrase,
            split=config.split, reply_grace_s=config.reply_grace_s,
            launch_url_allowed=True),  # AgentBeats SDK Blues take their MCP URL from scenario.toml at launch
        env_url=(config.env_url or settings.appworld_env_url).rstrip("/"),
        apis_url=(config.apis_url or settings.appworld_apis_url).rstrip("/"),
        gateway_url=(settings.appworld_mcp_url if config.gateway_url is None else config.gateway_url).rstrip("/") or None,
        call_log_path=config.call_log_path or settings.agentbeats_mcp_log_path,
        runs_dir=config.runs_dir or settings.runs_dir / "agentbeats")
