"""The scope record: which APIs a battle exposes to Blue and how they were chosen.

It is written into `result.json` (`scope`) and printed by `appworld-green scope-eval`.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, Field

from kernel.api_names import tool_name

PredictorName = Literal["llm", "lexical", "ground_truth", "all", "upstream_first20", "appworld_agents"]
"""A concrete predictor (what actually produced a scope). `all` = every API (no scoping);
`upstream_first20` = upstream's "no prediction" cut: the first `cap` (20 by default) APIs in doc order."""

RequestedPredictor = Literal["auto", "llm", "lexical", "ground_truth", "all", "none", "upstream_first20",
                             "appworld_agents"]
"""What a caller may ask for; `auto` = `llm` when an OpenAI key is set, else `lexical`; `none` = `all`."""

UNSCOPED_PREDICTORS: tuple[str, ...] = ("all", "none")
"""Requests that mean "no scoping": a battle exposes every tool (the gateway gets `scope: null`)."""

PREDICTOR_CHOICES: tuple[str, ...] = get_args(RequestedPredictor)
"""Every name a caller may pass as `--predictor`."""

PREDICTOR_HELP = ("scope predictor: " + " | ".join(get_args(RequestedPredictor))
                  + " (all, none: every API, no scoping; upstream_first20: upstream's cut, the first 20 APIs)")
"""The `--predictor` help of every command (so each lists every predictor)."""

SCOPE_POLICY_HELP = ("advise (default: scoped APIs + api_docs tools + call_api listed, any API callable, out-of-scope "
                     "calls logged) | enforce (only the scope is callable; a refused gold API grades scope_error)")
"""The `--scope-policy` help of `battle` and `eval`."""

COMPLETE_TASK_API = "supervisor.complete_task"


class ScopeUsage(BaseModel):
    """Model usage of one prediction (zero for offline predictors and cache hits)."""

    input_tokens: int = Field(default=0, ge=0, description="Prompt tokens billed.")
    output_tokens: int = Field(default=0, ge=0, description="Completion tokens billed (reasoning included).")
    cost_usd: float = Field(default=0.0, ge=0, description="Approximate cost from a static price table.")


class ScopePrediction(BaseModel):
    """The APIs chosen for one task, in the `app.api` form, `supervisor.complete_task` first."""

    predictor: PredictorName = Field(description="The predictor that produced `apis` (after any fallback).")
    requested: RequestedPredictor = Field(default="auto", description="The predictor the caller asked for.")
    apis: list[str] = Field(description="Chosen `app.api` names, at most the cap.")
    fallback_reason: str | None = Field(default=None, description="Why the requested predictor was not used.")
    usage: ScopeUsage = Field(default_factory=ScopeUsage, description="Tokens and approximate cost of this call.")
    cached: bool = Field(default=False, description="True when the answer came from the disk cache.")
    model: str | None = Field(default=None, description="Model name for LLM predictors.")
    prompt_version: str | None = Field(default=None, description="Prompt version for LLM predictors.")

    @property
    def tool_names(self) -> list[str]:
        """The same APIs as MCP tool names (`app__api`)."""
        return [tool_name(api) for api in self.apis]
