"""The non-predicting modes: `ground_truth` (an oracle), `all` (no scoping) and `upstream_first20`.

`ground_truth` reads the task's gold required APIs (full ground truth only: train/dev/test). `all`
is every API except `api_docs`, uncapped: no scoping (a battle asked for `all` is unscoped). Upstream
calls its "no prediction" mode `all` too, but cuts it at the cap:
every API in doc order, `complete_task` first, first `cap` kept (20 by default: `supervisor` plus 19
amazon APIs). That baseline is kept as `upstream_first20`, a name that says what it is.
"""

from __future__ import annotations

from kernel.errors import BadInputError
from green_agent.models.scope import ScopePrediction
from green_agent.scoping.base import complete_task_first
from kernel.world_data import WorldData


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
    """Every API of all apps except `api_docs`, complete_task first, uncapped (no scoping)."""

    name = "all"

    def __init__(self, world: WorldData) -> None:
        self.world = world

    def predict(self, task_id: str, instruction: str) -> ScopePrediction:
        return ScopePrediction(predictor="all", requested="all", apis=complete_task_first(self.world.all_apis(), None))


class UpstreamFirst20Predictor:
    """Upstream's capped "no prediction" mode: the first `cap` APIs in doc order, complete_task first."""

    name = "upstream_first20"

    def __init__(self, world: WorldData, cap: int = 20) -> None:
        self.world, self.cap = world, cap

    def predict(self, task_id: str, instruction: str) -> ScopePrediction:
        return ScopePrediction(predictor="upstream_first20", requested="upstream_first20",
                               apis=complete_task_first(self.world.all_apis(), self.cap))
