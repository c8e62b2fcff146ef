"""What a run cost: the purple's reported usage (`kernel.a2a_usage`) plus the Green's own predictor cost.

Reported, never trusted for a verdict: these figures sit beside TGC, nothing reads them to judge.
Unknown is None, never 0: a battle whose purple reported no usage (or a refused one) has an unknown
purple cost, and a run total is known only when every battle of the task set ran and is known.
The Green's own cost (its scope predictor's tokens at `green_agent.scoping.pricing`) is always
known (0.0 without an LLM predictor).
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class CostFigures(BaseModel):
    """`results.json` `aggregates.cost`, the artifact's `cost`, the report's and compare's cost lines."""

    battles: int = Field(description="Battles of the task set (run or not).")
    purple_known: int = Field(description="Battles whose purple cost is known (every reply reported valid usage).")
    purple_input_tokens: int = Field(description="Reported input tokens over the known battles.")
    purple_output_tokens: int = Field(description="Reported output tokens over the known battles.")
    purple_cost_usd: float | None = Field(description="The purple's cost over the task set (None: unknown).")
    green_cost_usd: float = Field(description="The Green's own predictor cost over the run.")
    total_cost_usd: float | None = Field(description="purple + Green (None: the purple's is unknown).")
    cost_per_task_usd: float | None = Field(description="total / battles of the task set.")
    cost_per_solved_task_usd: float | None = Field(description="total / battles passed (None: none passed / unknown).")
    unknown_because: str | None = Field(default=None, description="Why the purple's cost is unknown, in one line.")


def cost_sentence(cost: CostFigures) -> str:
    """One sentence for people: cost per task and per solved task, or why it is unknown."""
    if cost.total_cost_usd is None:
        return f"Cost per task: unknown ({cost.unknown_because})."
    solved = (f"{usd(cost.cost_per_solved_task_usd)} per solved task" if cost.cost_per_solved_task_usd is not None
              else "no task solved")
    return (f"Cost: {usd(cost.cost_per_task_usd)} per task, {solved} ({usd(cost.total_cost_usd)} in all: "
            f"the purple's reported usage plus the Green's {usd(cost.green_cost_usd)}).")


def usd(value: float | None) -> str:
    """`$0.0123`, or `unknown` (never 0 for a missing figure)."""
    return f"${value:.4f}" if value is not None else "unknown"


def cost_short(cost: CostFigures | None) -> str:
    """`$0.0100/task, $0.0200/solved task` for a table; `unknown` when the purple's cost is."""
    if cost is None or cost.total_cost_usd is None:
        return "unknown"
    return f"{usd(cost.cost_per_task_usd)}/task, {usd(cost.cost_per_solved_task_usd)}/solved task"
