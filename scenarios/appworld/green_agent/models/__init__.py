"""Every record written to disk or sent to the backend, one module per record kind."""

from green_agent.models.call_record import CALL_RECORD_SCHEMA_VERSION, CallRecord
from green_agent.models.eval_run import (EVAL_SCHEMA_VERSION, AgentBeatsResults, EvalAggregates, EvalResults, EvalRow,
                                         RunManifest)
from green_agent.models.result import RESULT_SCHEMA_VERSION, BattleResult
from green_agent.models.scope import ScopePrediction, ScopeUsage
from green_agent.models.trajectory import TRAJECTORY_SCHEMA_VERSION, PaginationReport, TrajectoryMetrics

__all__ = ["RESULT_SCHEMA_VERSION", "BattleResult", "CALL_RECORD_SCHEMA_VERSION", "CallRecord", "ScopePrediction", "ScopeUsage",
           "TRAJECTORY_SCHEMA_VERSION", "PaginationReport", "TrajectoryMetrics", "EVAL_SCHEMA_VERSION", "AgentBeatsResults",
           "EvalAggregates", "EvalResults", "EvalRow", "RunManifest"]
