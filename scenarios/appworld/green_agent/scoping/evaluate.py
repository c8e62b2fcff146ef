"""Scope quality against gold required APIs, per task and averaged over a split.

Scored on the `app.api` form: precision = |pred & gold| / |pred|,
recall = |pred & gold| / |gold|, f1 their harmonic mean, all per task and then averaged (macro);
full_coverage = the share of tasks whose scope holds every gold API.
Tasks without gold APIs (minimal ground truth) cannot be scored and are refused.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from kernel.errors import BadInputError
from green_agent.models.scope import ScopePrediction
from green_agent.scoping.cache import PredictionCache
from green_agent.scoping.select import predict_scope
from kernel.settings import Settings
from kernel.world_data import WorldData

WORST_COUNT = 3


class TaskScopeScore(BaseModel):
    """One task's scope against its gold APIs."""

    task_id: str = Field(description="The task.")
    recall: float = Field(description="Share of gold APIs in the scope.")
    precision: float = Field(description="Share of the scope that is gold.")
    f1: float = Field(description="Harmonic mean of precision and recall.")
    num_apis: int = Field(description="Size of the scope.")
    missing: list[str] = Field(description="Gold APIs left out, sorted.")
    predictor: str = Field(description="Predictor that produced the scope (after any fallback).")
    fallback_reason: str | None = Field(default=None, description="Why the requested predictor was not used.")


class ScopeEvalReport(BaseModel):
    """What `appworld-green scope-eval` prints."""

    predictor: str = Field(description="The predictor asked for.")
    split: str = Field(description="The split evaluated.")
    tasks: int = Field(description="Number of tasks scored.")
    recall: float = Field(description="Mean per-task recall.")
    full_coverage: float = Field(description="Share of tasks whose every gold API is in the scope (recall 1).")
    precision: float = Field(description="Mean per-task precision.")
    f1: float = Field(description="Mean per-task f1.")
    mean_apis: float = Field(description="Mean scope size.")
    max_apis: int = Field(description="Largest scope.")
    fallbacks: int = Field(description="Tasks scoped by the fallback predictor.")
    cost_usd: float = Field(description="Approximate model cost of this run (0 for cache hits).")
    worst: list[TaskScopeScore] = Field(description="Lowest-recall tasks with their missing APIs.")
    per_task: list[TaskScopeScore] = Field(description="Every task's score, in split order.")


def score_task(task_id: str, prediction: ScopePrediction, gold: list[str]) -> TaskScopeScore:
    """Precision/recall/f1 of one scope."""
    predicted, gold_set = set(prediction.apis), set(gold)
    hits = len(predicted & gold_set)
    recall = hits / len(gold_set) if gold_set else 1.0
    precision = hits / len(predicted) if predicted else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return TaskScopeScore(task_id=task_id, recall=round(recall, 4), precision=round(precision, 4), f1=round(f1, 4),
                          num_apis=len(prediction.apis), missing=sorted(gold_set - predicted),
                          predictor=prediction.predictor, fallback_reason=prediction.fallback_reason)


def evaluate_split(world: WorldData, split: str, predictor: str, settings: Settings,
                   cache: PredictionCache | None = None) -> ScopeEvalReport:
    """Scope every task of `split` with `predictor` and score it against gold."""
    scores: list[TaskScopeScore] = []
    cost = 0.0
    for task_id in world.split(split):
        spec = world.task(task_id)
        if not spec.gold_apis:
            raise BadInputError(f"task {task_id} of split {split!r} has no gold APIs; scope-eval needs train/dev tasks")
        prediction = predict_scope(task_id, spec.instruction, settings, world, predictor, cache=cache)
        cost += prediction.usage.cost_usd
        scores.append(score_task(task_id, prediction, spec.gold_apis))
    if not scores:
        raise BadInputError(f"split {split!r} has no tasks")
    n = len(scores)
    worst = sorted(scores, key=lambda s: (s.recall, s.f1, s.task_id))[:WORST_COUNT]
    return ScopeEvalReport(
        predictor=predictor, split=split, tasks=n,
        recall=round(sum(s.recall for s in scores) / n, 4),
        full_coverage=round(sum(1 for s in scores if not s.missing) / n, 4), precision=round(sum(s.precision for s in scores) / n, 4),
        f1=round(sum(s.f1 for s in scores) / n, 4), mean_apis=round(sum(s.num_apis for s in scores) / n, 2),
        max_apis=max(s.num_apis for s in scores), fallbacks=sum(1 for s in scores if s.fallback_reason),
        cost_usd=round(cost, 6), worst=worst, per_task=scores,
    )
