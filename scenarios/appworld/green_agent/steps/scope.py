"""Step 3: choose the APIs Blue may use and tell the gateway.

Predictors come from `green_agent.scoping.select.predict_scope` (llm, lexical, ground_truth,
upstream_first20, appworld_agents; `auto` = llm with an OpenAI key, else lexical). Handled here:
`all` and `none` (no scoping: every tool exposed, the gateway gets `scope: null`) and, if the
scoping module is missing, `upstream_first20`/`auto` fall back to upstream's cut (the first N APIs,
`supervisor.complete_task` first) with the reason recorded.
"""

from __future__ import annotations

import logging

from kernel.errors import BadInputError
from kernel.fault_spec import FaultSpec
from green_agent.gateway_client import GatewayClient
from green_agent.models.result import ScopeRecord
from green_agent.models.scope import UNSCOPED_PREDICTORS
from green_agent.models.trajectory import TrajectoryMetrics
from green_agent.scoping.select import predict_scope
from kernel.api_names import api_name, tool_name
from kernel.settings import ScopePolicy, Settings
from kernel.world_data import WorldData

log = logging.getLogger(__name__)

COMPLETE_TASK = "supervisor.complete_task"
UNSCOPED = UNSCOPED_PREDICTORS
UPSTREAM_CUT = "upstream_first20"


def choose_scope(task_id: str, instruction: str, predictor: str, settings: Settings,
                 world: WorldData | None, policy: ScopePolicy = "advise") -> ScopeRecord:
    """Step 3a: predict the scope (`app.api` names) and score it against gold when gold is known."""
    record = _predicted_scope(task_id, instruction, predictor, settings, world)
    return record.model_copy(update={"policy": policy})


def _predicted_scope(task_id: str, instruction: str, predictor: str, settings: Settings,
                     world: WorldData | None) -> ScopeRecord:
    gold = _gold(world, task_id)
    if predictor in UNSCOPED:
        return ScopeRecord(predictor=predictor, requested=predictor, apis=None, gold_apis=gold,
                           missed_gold=None if gold is None else [])
    if world is None:
        raise BadInputError(f"scope predictor {predictor!r} needs the world's data files; use --predictor none")
    prediction = predict_scope(task_id, instruction, settings, world, predictor=predictor)
    return ScopeRecord(predictor=prediction.predictor, requested=prediction.requested, apis=list(prediction.apis),
                       fallback_reason=prediction.fallback_reason, gold_apis=gold, recall=recall(prediction.apis, gold),
                       missed_gold=missed_gold(prediction.apis, gold),
                       usage=prediction.usage, cached=prediction.cached, model=prediction.model)


def apply_scope(gateway: GatewayClient | None, battle_id: str, task_id: str, scope: ScopeRecord,
                launch_url_allowed: bool = False, interaction: str = "tools",
                task_datetime: str | None = None, faults: FaultSpec | None = None, trial: int = 1,
                wording: str | None = None) -> str | None:
    """Step 3b: `PUT /control/battle` so the gateway attributes and scopes Blue's calls (under the scope's
    policy), with a new per-battle token. Returns the Blue's MCP base URL for this battle (`.../b/<token>`);
    None if no gateway.

    `launch_url_allowed`: the Blue takes its MCP URL from its launch configuration (an AgentBeats SDK
    agent's `--mcp`), so the gateway's plain routes serve this battle too. `interaction` "code": the battle
    acts through the gateway's `execute` tool, in a REPL whose clock is `task_datetime`. `faults`: a reliability
    run's spec, which the gateway alone plans and applies (for this `trial` of the task). `wording`: a paraphrase
    arm's instruction, which the gateway answers `supervisor.show_active_task` with (the world keeps the original).

    Raises BadInputError for code mode or a paraphrase without a gateway (code runs only in the gateway's sandbox;
    only the gateway can answer show_active_task with the paraphrase)."""
    if gateway is None:
        if interaction == "code":
            raise BadInputError("code mode needs the MCP gateway (its sandboxed REPL runs the agent's code)")
        if wording is not None:
            raise BadInputError("--paraphrase needs the MCP gateway: only it answers supervisor.show_active_task "
                                "with the battle's wording")
        return None
    tools = [tool_name(api) for api in scope.apis] if scope.apis is not None else None
    return gateway.start_battle(battle_id, task_id, tools, scope.policy, launch_url_allowed=launch_url_allowed,
                                interaction=interaction, task_datetime=task_datetime, faults=faults, trial=trial,
                                instruction=wording)


def account_calls(scope: ScopeRecord, trajectory: TrajectoryMetrics | None) -> ScopeRecord:
    """After the metrics step: count Blue's out-of-scope calls and, under enforce, the gold APIs it was refused.

    `trajectory` is the battle's `TrajectoryMetrics` (None when the log could not be read:
    nothing is counted). A refused gold API makes the battle a `scope_error` (see `green_agent.steps.judge`).
    """
    if trajectory is None:
        return scope
    tools = trajectory.out_of_scope_tools
    refused: list[str] = []
    if scope.policy == "enforce" and scope.apis is not None and scope.gold_apis:
        refused = sorted({api_name(tool) for tool in tools} & set(scope.gold_apis))
    return scope.model_copy(update={"out_of_scope_calls": trajectory.out_of_scope_calls,
                                    "refused_gold": refused})


def all_apis(world: WorldData, cap: int) -> list[str]:
    """Upstream's cut (`upstream_first20`): the first `cap` APIs (api_docs app excluded), complete_task first."""
    names = [COMPLETE_TASK] + [a for a in world.all_apis() if a != COMPLETE_TASK]
    return names[:cap]


def recall(apis: list[str] | None, gold: list[str] | None) -> float | None:
    """|gold ∩ apis| / |gold|; None when either is unknown or gold is empty (unscoped = 1.0)."""
    if not gold:
        return None
    if apis is None:
        return 1.0
    return round(len(set(gold) & set(apis)) / len(set(gold)), 4)


def missed_gold(apis: list[str] | None, gold: list[str] | None) -> list[str] | None:
    """Gold APIs left out of the scope, sorted; [] when unscoped, None when gold is unknown."""
    if gold is None:
        return None
    return [] if apis is None else sorted(set(gold) - set(apis))


def _gold(world: WorldData | None, task_id: str) -> list[str] | None:
    if world is None:
        return None
    try:
        return world.gold_apis(task_id) or None
    except Exception:  # minimal ground truth or another root: gold unknown
        return None
