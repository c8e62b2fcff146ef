"""API scoping (plan step 3): narrow AppWorld's API surface to what a task needs.

Predictors behind one interface (`base.Predictor`): `llm` (few-shot chat completions, cached),
`lexical` (offline BM25), `ground_truth` and `all` (upstream's oracle and no-scoping modes) and
`appworld_agents` (the seed's upstream predictor, opt-in). Entry points: `predict_scope` for one
task, `evaluate_split` for measured quality.
"""

from green_agent.models.scope import ScopePrediction, ScopeUsage
from green_agent.scoping.base import Predictor, ScopePredictorError
from green_agent.scoping.evaluate import ScopeEvalReport, evaluate_split
from green_agent.scoping.select import PREDICTOR_CHOICES, predict_scope

__all__ = [
    "PREDICTOR_CHOICES", "Predictor", "ScopeEvalReport", "ScopePrediction", "ScopePredictorError", "ScopeUsage",
    "evaluate_split", "predict_scope",
]
