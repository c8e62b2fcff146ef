"""The Green's records written to disk or sent to the backend, one module per record kind (the call log's
record, shared with the gateway, is `kernel.call_record`)."""

from green_agent.models.eval_run import (EVAL_SCHEMA_VERSION, AgentBeatsResults, EvalAggregates, EvalResults, EvalRow,
                                         RunManifest)
from green_agent.models.result import RESULT_SCHEMA_VERSION, BattleResult
from green_agent.models.scope import ScopePrediction, ScopeUsage
from green_agent.models.trajectory import TRAJECTORY_SCHEMA_VERSION, PaginationReport, TrajectoryMetrics

__all__ = ["RESULT_SCHEMA_VERSION", "BattleResult", "ScopePrediction", "ScopeUsage",
           "TRAJECTORY_SCHEMA_VERSION", "PaginationReport", "TrajectoryMetrics", "EVAL_SCHEMA_VERSION", "AgentBeatsResults",
           "EvalAggregates", "EvalResults", "EvalRow", "RunManifest"]
