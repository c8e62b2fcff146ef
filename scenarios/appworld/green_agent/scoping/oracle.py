"""The two non-predicting modes, as upstream: `ground_truth` (an oracle) and `all` (no scoping).

`ground_truth` reads the task's gold required APIs (full ground truth only: train/dev). `all` is
upstream's "no prediction" mode: every API except `api_docs`, in doc order, `complete_task` first,
cut at the cap like every mode (reference/appworld.md section 14), so it is a baseline, not a way
to expose the whole surface; the battle step's `none` predictor is the uncapped, unscoped option.
"""

from __future__ import annotations

from green_agent.errors import BadInputError
from green_agent.models.scope import ScopePrediction
from green_agent.scoping.base import complete_task_first
from green_agent.world_data import WorldData


class GroundTruthPredictor:
    """The task's gold APIs (an upper bound for every other predictor)."""

    name = "ground_truth"

    def __init__(self, world: WorldData, cap: int = 20) -> None:
        self.world, self.cap = world, cap

    def predict(self, task_id: str, instruction: str) -> ScopePrediction:
        gold = self.world.gold_apis(task_id)
        if not gold:
            raise BadInputError(
                f"task {task_id} has no gold APIs (minimal ground truth); use --predictor lexical or llm"
            )
        return ScopePrediction(predictor="ground_truth", requested="ground_truth",
                               apis=complete_task_first(sorted(gold), self.cap))


class AllPredictor:
    """Upstream's `all`: the first `cap` APIs of all apps except `api_docs`, complete_task first."""

    name = "all"

    def __init__(self, world: WorldData, cap: int = 20) -> None:
        self.world, self.cap = world, cap

    def predict(self, task_id: str, instruction: str) -> ScopePrediction:
        return ScopePrediction(predictor="all", requested="all", apis=complete_task_first(self.world.all_apis(), self.cap))
