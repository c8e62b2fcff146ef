"""The local driver of the battle engine: the CLI's `battle`, `demo` and the `eval` batch layer.

It decides where the battle runs (`plan_slot`: running servers to attach to, or a slot to start on its
index's ports or on explicit ones), starts or attaches to that world slot (`open_slot`, which holds the slot's
machine-wide lock), starts or addresses a Blue (`open_blue`), builds the battle with
`engine.config.build_battle` and runs it with `engine.sequencer.run_battle`. Nothing here exits the process.

A slot this driver starts writes its gateway's call log into the run folder (`<run>/logs/mcp-calls.jsonl`,
`run_call_log`), never into a file the checkout shares; only a slot someone else runs (`world up`, `--env-url`)
keeps the call log it was started with (`AGENTBEATS_MCP_LOG_PATH`), from which the battle's own records are
archived into its run folder as ever.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

import requests
from pydantic import BaseModel, Field

from kernel.errors import BadInputError, InfrastructureError
from green_agent.models.result import BattleResult
from green_agent.output_paths import check_output_dir, check_output_file
from green_agent.engine.config import BattleChoices, build_battle, resolve_choices, run_paraphrases, world_data
from green_agent.engine.sequencer import run_battle
from green_agent.runtime.code_sandbox import check_code_sandbox
from green_agent.runtime.processes import ManagedProcess
from kernel.ports import free_port
from kernel.settings import SCENARIO_DIR, Settings
from green_agent.runtime.slot import SLOT_LOCK_DIR, SlotSpec, SlotUrls, WorldSlot
from green_agent.steps.report import Reporter
from green_agent.task_check import require_intact
from kernel.task_ids import TaskRef, extract_task_token, resolve_task, validate_task_id

BUILTIN_BLUES = ("reference", "reference-retry", "reference-reckless", "reference-careful", "instruction-bound", "noop",
                 "llm")
BLUE_HELP = " | ".join(BUILTIN_BLUES) + " | an A2A URL"
"""`--blue`'s help on every command that takes it."""
BLUE_READY_TIMEOUT_S = 60.0
LLM_BLUE_CARD = SCENARIO_DIR / "blue_agent" / "blue_agent_card.toml"
LLM_BLUE_TOOLS = SCENARIO_DIR / "blue_agent" / "tools.py"
RUN_CALL_LOG = "mcp-calls.jsonl"
"""The call log of a slot a battle (or the demo) starts, in the run's `logs/` folder."""


class BattleRequest(BaseModel):
    """What the user asked for (CLI flags): the task, the battle's choices, and where it runs."""

    task: str = Field(description="Task id, 'Task description: <id>', or a 1-based index into the split.")
    choices: BattleChoices = Field(description="Blue, predictor, policy, deadline (None: the Settings default).")
    env_url: str | None = Field(default=None, description="Use this running env server (attach mode).")
    apis_url: str | None = Field(default=None, description="Its APIs server (attach mode).")
    gateway_url: str | None = Field(default=None, description="Its MCP gateway (attach mode).")
    slot: int = Field(default=0, ge=0, description="World slot to start or attach to.")
    slot_spec: SlotSpec | None = Field(default=None, description=(
        "A slot to start on these ports (`--slot-ports`, or the free slot `--first-slot` chose); never attached to, "
        "so the battle cannot land on servers another run owns."))
    out: Path | None = Field(default=None, description="Run directory; default runs/<timestamp>-<task>/.")
    battle_id: str | None = Field(default=None, description="Battle id; default generated.")


def precheck_task(request: BattleRequest, settings: Settings) -> TaskRef | str:
    """Validate the task before anything starts (exit 2 fast): the resolved `TaskRef` the battle then carries,
    or, when this machine cannot read the world, the task as given (step 1 asks the env server whether it exists).

    Raises BrokenTaskError when the world's folder for the task is incomplete or corrupt.
    """
    world = world_data(settings)
    split = request.choices.split or settings.default_split
    if world is not None:
        token = extract_task_token(request.task)
        if not token.isdigit():
            require_intact(world, [validate_task_id(token)])
    ref = resolve_task(request.task, world, split)
    return ref if world is not None else request.task


def precheck_paraphrase(choices: BattleChoices, settings: Settings, task: TaskRef | str) -> None:
    """A paraphrase arm: the set loads and the task has a usable variant, before anything starts (BadInputError)."""
    paraphrases = run_paraphrases(choices.paraphrase, world_data(settings))
    if paraphrases is not None and isinstance(task, TaskRef):
        paraphrases.check_tasks([task.task_id])


def new_battle_id() -> str:
    return f"{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


def default_run_dir(settings: Settings, task_id: str, battle_id: str) -> Path:
    return settings.runs_dir / f"{battle_id}-{task_id}"


class SlotPlan(NamedTuple):
    """Where a battle runs: servers to attach to (`spec` None), or a slot to start on `spec`'s ports."""

    urls: SlotUrls
    spec: SlotSpec | None


def plan_slot(request: BattleRequest, settings: Settings) -> SlotPlan:
    """Explicit URLs: attach; an explicit slot spec: start it; slot K: attach when its servers answer, else start it."""
    if request.env_url:
        return SlotPlan(SlotUrls(env_url=request.env_url, apis_url=request.apis_url or settings.appworld_apis_url,
                                 gateway_url=request.gateway_url), None)
    if request.slot_spec is not None:
        return SlotPlan(request.slot_spec.urls(), request.slot_spec)
    spec = SlotSpec.for_index(request.slot)
    urls = spec.urls()
    if _answers(urls.env_url) and _answers(urls.apis_url):  # `world up`'s slot: use it as it runs
        return SlotPlan(urls if _answers(f"{urls.gateway_url}/health") else urls.model_copy(update={"gateway_url": None}),
                        None)
    return SlotPlan(urls, spec)


def run_call_log(log_dir: Path) -> Path:
    """The call log of a slot started for one run: in that run's own `logs/` folder."""
    return Path(log_dir) / RUN_CALL_LOG


@contextmanager
def open_slot(plan: SlotPlan, settings: Settings, log_dir: Path, code: bool = False) -> Iterator[SlotUrls]:
    """Attach to the planned running servers, or start the planned slot (its gateway logging calls to
    `settings.agentbeats_mcp_log_path`); lock it either way. `code`: a code-mode battle (spare REPLs at start)."""
    if plan.spec is None:
        slot = WorldSlot.attach(plan.urls, lock_dir=SLOT_LOCK_DIR)
    else:
        slot = WorldSlot(plan.spec, appworld_root=settings.appworld_root, appworld_python=settings.appworld_python,
                         log_dir=log_dir, mcp_log_path=settings.agentbeats_mcp_log_path, lock_dir=SLOT_LOCK_DIR,
                         launch=settings.appworld_server_launch, code_spares_at_start=code)
    with slot:
        yield slot.urls


@contextmanager
def open_blue(blue: str, settings: Settings, urls: SlotUrls, log_dir: Path) -> Iterator[str]:
    """Start a built-in Blue on a free port (stopped on exit), or pass an A2A URL through."""
    if blue not in BUILTIN_BLUES:
        yield _check_url(blue)
        return
    port = free_port(avoid=urls.ports())  # the slot's servers may still be starting, their ports unbound
    env = {**os.environ, "APPWORLD_ROOT": str(settings.appworld_root),
           "AGENTBEATS_MCP_LOG_PATH": str(settings.agentbeats_mcp_log_path),
           "REFERENCE_BLUE_THINK_S": str(settings.reference_blue_think_s)}
    if blue == "llm":
        if not settings.openai_api_key:
            raise BadInputError("--blue llm needs OPENAI_API_KEY (in the environment or .env)")
        if not urls.gateway_url:
            raise BadInputError("--blue llm needs the MCP gateway (--gateway-url when attaching)")
        env["OPENAI_API_KEY"] = settings.openai_api_key.get_secret_value()
        argv = [str(Path(sys.executable).parent / "agentbeats"), "run_agent", str(LLM_BLUE_CARD), "--agent_host",
                "127.0.0.1", "--agent_port", str(port), "--tool", str(LLM_BLUE_TOOLS), "--mcp", f"{urls.gateway_url}/sse"]
    else:
        module = f"blue_agent.{blue.replace('-', '_')}"
        if importlib.util.find_spec(module) is None:
            raise InfrastructureError(f"the {blue} Blue ({module}) is not installed in this environment")
        argv = [sys.executable, "-m", module, "--port", str(port)]
    process = ManagedProcess(f"{blue} Blue :{port}", argv, log_dir / f"blue-{blue}-{port}.log", env=env)
    url = f"http://127.0.0.1:{port}"
    with process.running(f"{url}/.well-known/agent.json", timeout_s=BLUE_READY_TIMEOUT_S):
        yield url


def run_on_slot(task: TaskRef | str, choices: BattleChoices, settings: Settings, urls: SlotUrls, blue_url: str,
                run_dir: Path, battle_id: str, reporters: list[Reporter] | None = None, trial: int = 1,
                publish_salt: bool | None = None) -> BattleResult:
    """Build and run one battle (`trial` of its task) on a ready slot and Blue (`publish_salt`: `build_battle`'s)."""
    if choices.blue == "llm":  # the built-in LLM Blue calls through its --mcp launch URL
        choices = choices.model_copy(update={"launch_url_allowed": True})
    config, deps = build_battle(task, choices, settings, battle_id=battle_id, blue_url=blue_url, run_dir=run_dir,
                                env_url=urls.env_url, apis_url=urls.apis_url, gateway_url=urls.gateway_url,
                                call_log_path=settings.agentbeats_mcp_log_path, reporters=reporters, trial=trial,
                                publish_salt=publish_salt)
    return run_battle(config, deps)


def run_battle_request(request: BattleRequest, settings: Settings, reporters: list[Reporter] | None = None) -> BattleResult:
    """Validate (task, output paths: `OutputPathError` before anything starts), start (or attach to) what the
    battle needs, run it, stop what was started."""
    task = precheck_task(request, settings)
    precheck_paraphrase(request.choices, settings, task)
    check_code_sandbox(resolve_choices(request.choices, settings).interaction, settings)
    battle_id = request.battle_id or new_battle_id()
    task_label = task.task_id if isinstance(task, TaskRef) else resolve_task(request.task, None, "").task_id
    run_dir = check_output_dir(request.out or default_run_dir(settings, task_label, battle_id),
                               "--out" if request.out else "the run directory (RUNS_DIR)")
    log_dir = check_output_dir(run_dir / "logs", "--out (its logs folder)")
    plan = plan_slot(request, settings)
    if plan.spec is not None:  # our own gateway: its call log is this run's, never a file the checkout shares
        settings = settings.model_copy(update={"agentbeats_mcp_log_path": run_call_log(log_dir)})
    elif plan.urls.gateway_url:  # a running gateway writes the call log we will read
        check_output_file(settings.agentbeats_mcp_log_path, "the call log (AGENTBEATS_MCP_LOG_PATH)")
    blue = request.choices.blue
    code = resolve_choices(request.choices, settings).interaction == "code"
    with open_slot(plan, settings, log_dir, code) as urls, open_blue(blue, settings, urls, log_dir) as blue_url:
        return run_on_slot(task, request.choices, settings, urls, blue_url, run_dir, battle_id, reporters,
                           publish_salt=True)  # one battle is the whole run: its secret is published when it ends


def _answers(url: str) -> bool:
    try:
        requests.get(url, timeout=1)
    except requests.RequestException:
        return False
    return True


def _check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadInputError(f"--blue must be one of {', '.join(BUILTIN_BLUES)} or an http(s) URL, got {url[:80]!r}")
    return url.rstrip("/")
