"""The scope record: which APIs a battle exposes to Blue and how they were chosen.

It is written into `result.json` (`scope`) and printed by `appworld-green scope-eval`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

PredictorName = Literal["llm", "lexical", "ground_truth", "all", "appworld_agents"]
"""A concrete predictor (what actually produced a scope)."""

RequestedPredictor = Literal["auto", "llm", "lexical", "ground_truth", "all", "appworld_agents"]
"""What a caller may ask for; `auto` = `llm` when an OpenAI key is set, else `lexical`."""

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
        return [api.replace(".", "__", 1) for api in self.apis]
