"""Trajectory metrics of one battle (or one task, or a whole log), derived from the gateway's call log.

Written into `result.json` under `trajectory` by the core's metrics step and printed by
`appworld-green analyze`. Every field is defined precisely in `green_agent.trajectory` and in
docs/trajectory.md; ratios whose denominator is zero are `None` (JSON `null`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

TRAJECTORY_SCHEMA_VERSION = 1

PaginationStatus = Literal["complete", "incomplete", "unknown"]


class PaginationReport(BaseModel):
    """How one paginated API (`page_index` parameter) was paged through in the battle."""

    status: PaginationStatus = Field(
        description="complete: all series reached a short page; incomplete: one did not; unknown: no sizes.")
    series: int = Field(ge=0, description="Distinct argument sets (page_index ignored) the API was called with.")
    complete_series: int = Field(
        ge=0, description="Series whose pages 0..p were all fetched and page p was short or empty.")
    incomplete_series: int = Field(ge=0, description="Series with known page sizes that never reached such a page.")
    pages_fetched: int = Field(ge=0, description="Successful calls of the API (each returns one page).")


class CodeMetrics(BaseModel):
    """Code mode: the battle's executions, from the gateway's executions log (its calls are the call metrics)."""

    executions: int = Field(ge=0, description="`execute` calls that ran code (empty and refused ones included).")
    failed_executions: int = Field(ge=0, description="Executions whose output was a traceback ('Execution failed.').")
    timeouts: int = Field(ge=0, description="Executions that hit the time limit.")
    killed: int = Field(ge=0, description="Executions during which the sandbox was ended for a limit the code hit.")
    sandbox_faults: int = Field(default=0, ge=0, description=(
        "Executions whose sandbox failed on our side (the battle is then an infra_error, never the agent's loss)."))
    first_sandbox_fault: str | None = Field(default=None, description="The first of those faults, said.")
    api_calls: int = Field(ge=0, description="apis calls made by the code, summed over executions.")
    api_calls_per_execution: float | None = Field(default=None, description="api_calls / executions (None: none).")
    max_api_calls_in_execution: int = Field(default=0, ge=0, description="Most apis calls one execution made.")
    execution_s: float = Field(ge=0, description="Wall seconds spent executing, summed.")
    isolation: str | None = Field(default=None, description="The isolation the code ran under.")


class FaultedCall(BaseModel):
    """One fault the gateway injected in a reliability run and the agent received (`green_agent.trajectory.faults`)."""

    position: int = Field(ge=1, description="The call's position among the battle's faultable calls (from 1).")
    call: int | None = Field(default=None, ge=1, description=(
        "The call's number among the battle's calls (from 1, as the battle page numbers them); None in older files."))
    api: str = Field(description="The API, `app.api`.")
    kind: str = Field(description="error | rate_limit | timeout | empty | malformed | lost_response.")
    silent: bool = Field(default=False, description=(
        "The agent was not told: the answer arrived as a success (an empty page; a cut-off answer in tools mode)."))
    recovered: bool = Field(description=(
        "The agent made the same call again (same API, same arguments) and it succeeded; for `lost_response`, whose "
        "call reached the world, that it did NOT make it again (`green_agent.trajectory.faults`)."))
    repeated: bool = Field(default=False, description="`lost_response`: the agent repeated the write blindly.")


class TrajectoryMetrics(BaseModel):
    """Metrics the Green computes itself from the gateway's call records of one battle/task."""

    schema_version: Literal[1] = Field(default=TRAJECTORY_SCHEMA_VERSION, description="Record format version.")
    log_path: str = Field(description="The call log that was read.")
    log_found: bool = Field(description="False if the log file did not exist (all counts are then zero).")
    battle_id: str | None = Field(default=None, description="Battle filter applied (None: no battle filter).")
    task_id: str | None = Field(default=None, description="Task filter applied (None: no task filter).")
    lines_scanned: int = Field(default=0, ge=0, description="Lines read from the log, all battles included.")
    malformed_lines: int = Field(
        default=0, ge=0, description="Candidate lines skipped as unreadable (bad JSON/UTF-8, not a record, oversized).")

    total_calls: int = Field(default=0, ge=0, description="Call records selected by the filters.")
    successful_calls: int = Field(default=0, ge=0, description="Selected records with success=true.")
    failed_calls: int = Field(default=0, ge=0, description=(
        "Selected records with success=false, except the faults the gateway injected (not the agent's errors)."))
    error_rate: float | None = Field(
        default=None, description="failed_calls / total_calls (0..1); None with zero calls.")
    avg_duration_ms: float | None = Field(
        default=None, description="Mean duration_ms of the selected calls; None with zero calls.")
    p50_duration_ms: float | None = Field(
        default=None, description="Nearest-rank 50th percentile of duration_ms; None with zero calls.")
    p95_duration_ms: float | None = Field(
        default=None, description="Nearest-rank 95th percentile of duration_ms; None with zero calls.")
    calls_per_minute: float | None = Field(
        default=None, description="total_calls / minutes between first and last call start; None if that span is 0.")
    first_call_at: datetime | None = Field(default=None, description="Earliest call start (UTC); None with zero calls.")
    last_call_at: datetime | None = Field(default=None, description="Latest call start (UTC); None with zero calls.")

    unique_tools: int = Field(default=0, ge=0, description="Distinct tool names called (any outcome).")
    calls_per_tool: dict[str, int] = Field(default_factory=dict, description="Calls per tool name (any outcome).")
    failed_calls_per_tool: dict[str, int] = Field(
        default_factory=dict, description="Failed calls per tool name (tools with failures only).")
    retry_count: int = Field(default=0, ge=0, description=(
        "Retries: calls that repeat a call (same API, same arguments) whose last attempt failed "
        "(`green_agent.trajectory.accumulator`)."))
    retries_after_fault: int = Field(default=0, ge=0, description=(
        "Of those, the ones whose last attempt was a fault injected on purpose (a reliability run)."))
    out_of_scope_calls: int = Field(
        default=0, ge=0, description="Selected records the gateway marked in_scope=false (refused under enforce, "
                                     "served under advise).")
    out_of_scope_tools: list[str] = Field(
        default_factory=list, description="Distinct tool names of those records, sorted.")
    upstream_faults: int = Field(
        default=0, ge=0, description="Selected records where an APIs-server fault reached the caller (upstream_fault).")
    first_upstream_fault: str | None = Field(
        default=None, description="`<tool> at <time>: <fault>` of the first such record; None if there was none.")

    pagination_sequences: int = Field(
        default=0, ge=0, description="Seed metric: runs of >=2 consecutive calls of one list/search/library tool.")
    pagination: dict[str, PaginationReport] = Field(
        default_factory=dict, description="Per paginated `app.api` called: how far Blue paged.")
    pagination_complete_apis: list[str] = Field(
        default_factory=list, description="Paginated APIs with status complete, sorted.")
    pagination_incomplete_apis: list[str] = Field(
        default_factory=list, description="Paginated APIs with status incomplete, sorted.")

    called_apis: list[str] = Field(
        default_factory=list, description="Sorted `app.api` names called successfully (api_docs app excluded).")
    gold_apis: list[str] | None = Field(
        default=None, description="The task's gold required APIs, sorted; None if unknown.")
    api_precision: float | None = Field(
        default=None, description="|called ∩ gold| / |called|; None if gold unknown or nothing called.")
    api_recall: float | None = Field(
        default=None, description="|called ∩ gold| / |gold|; None if gold unknown or empty.")
    api_f1: float | None = Field(
        default=None, description="Harmonic mean of api_precision and api_recall; 0 if both 0; None if either is None.")
    missing_gold_apis: list[str] = Field(
        default_factory=list, description="gold − called, sorted (empty if gold unknown).")
    extra_apis: list[str] = Field(default_factory=list, description="called − gold, sorted (empty if gold unknown).")
    scope_size: int | None = Field(
        default=None, description="Number of APIs in the predicted scope; None if no scope given.")
    scope_recall: float | None = Field(
        default=None, description="|gold ∩ scope| / |gold|; None if gold or scope unknown, or gold empty.")
    submitted_answer: str | None = Field(
        default=None, description="The `answer` argument of the Blue's last successful supervisor.complete_task call "
        "(a non-string answer as JSON); None when it gave none (Blue-derived text: data). Added without a version "
        "bump: older records load with None.")
    faults_injected: dict[str, int] = Field(default_factory=dict, description=(
        "A reliability run: faults the gateway injected that reached the agent, by kind (empty without faults)."))
    faults_recovered: dict[str, int] = Field(default_factory=dict, description=(
        "Of those, by kind, the ones whose API later answered without a fault and succeeded."))
    faults_undelivered: int = Field(default=0, ge=0, description=(
        "Injected faults that never reached the agent (its battle ended while one waited): not counted above."))
    faults_retry_after_ignored: int = Field(default=0, ge=0, description=(
        "Calls made within a delivered 429's retry-after, answered 429 again (tools mode): not new faults."))
    faulted_calls: list[FaultedCall] = Field(default_factory=list, description="Each injected fault, in call order.")
    code: CodeMetrics | None = Field(default=None, description=(
        "Code mode only: the executions' metrics (`CodeMetrics`). Added without a version bump: older records "
        "load with None."))
