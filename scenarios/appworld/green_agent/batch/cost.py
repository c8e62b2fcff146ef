"""A battle's and a run's cost (`green_agent.models.cost`): read from result.json's bridge report, summed over rows.

`purple_cost(result)`: the purple's reported usage for one battle (the bridge's `BridgeReport.usage`),
priced: the purple's own `cost_usd` when every reply gave one, else its tokens at the Green's price
table (`green_agent.scoping.pricing`) when it named a priced model, else unknown (None). Only a
battle whose every reply reported valid usage has a known cost.
`cost_figures(rows, battles)`: the run's `CostFigures` from the rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from green_agent.models.cost import CostFigures
from green_agent.models.eval_run import EvalRow
from green_agent.models.result import BattleResult
from green_agent.scoping.pricing import approximate_cost_usd, is_priced


class BattleCost(BaseModel):
    purple_cost_usd: float | None = None
    purple_input_tokens: int | None = None
    purple_output_tokens: int | None = None
    purple_usage_note: str | None = None


def purple_cost(result: BattleResult) -> BattleCost:
    report = result.completion.bridge_report if result.completion else None
    usage = report.usage if report else None
    if usage is None:
        return BattleCost(purple_usage_note="the purple reported no usage")
    tokens = {"purple_input_tokens": usage.input_tokens, "purple_output_tokens": usage.output_tokens}
    if not usage.complete:
        note = (f"usage refused: {usage.refused}" if usage.refused
                else f"{usage.replies - usage.reported} of {usage.replies} replies reported no usage")
        return BattleCost(purple_usage_note=note, **tokens)
    if usage.reported_cost_usd is not None:
        return BattleCost(purple_cost_usd=usage.reported_cost_usd, **tokens)
    if usage.model and is_priced(usage.model):
        return BattleCost(purple_cost_usd=approximate_cost_usd(usage.model, usage.input_tokens, usage.output_tokens),
                          purple_usage_note=f"priced by the Green at {usage.model}'s list price", **tokens)
    return BattleCost(purple_usage_note="tokens reported without a cost or a priced model", **tokens)


def cost_figures(rows: Sequence[EvalRow], battles: int) -> CostFigures:
    green = round(sum(r.cost_usd or 0.0 for r in rows), 6)
    known = [r for r in rows if r.purple_cost_usd is not None]
    purple = round(sum(r.purple_cost_usd or 0.0 for r in known), 6) if rows and len(known) == battles else None
    total = round(purple + green, 6) if purple is not None else None
    passed = sum(r.passed for r in rows)
    why = None
    if purple is None:
        notes = [r.purple_usage_note for r in rows if r.purple_cost_usd is None and r.purple_usage_note]
        why = (f"{battles - len(known)} of {battles} battle(s) without a known purple cost"
               + (f" (e.g. {notes[0]})" if notes else ""))
    return CostFigures(battles=battles, purple_known=len(known),
                       purple_input_tokens=sum(r.purple_input_tokens or 0 for r in known),
                       purple_output_tokens=sum(r.purple_output_tokens or 0 for r in known),
                       purple_cost_usd=purple, green_cost_usd=green, total_cost_usd=total,
                       cost_per_task_usd=round(total / battles, 6) if total is not None and battles else None,
                       cost_per_solved_task_usd=round(total / passed, 6) if total is not None and passed else None,
                       unknown_because=why)
