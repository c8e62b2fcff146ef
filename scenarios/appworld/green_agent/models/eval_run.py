"""Records of a split evaluation (`appworld-green eval`): manifest, rows, aggregates, results files.

Written by `green_agent.batch` under the run directory:
- `run.json` (`RunManifest`): what the run is (config fingerprint, task set) so `--resume` can refuse
  to mix two different runs;
- `tasks/<task_id>/task.json` (`TaskInfo`): the task as the world describes it (for the report);
- `results.json` (`EvalResults`): one `EvalRow` per battle plus `EvalAggregates`;
- `agentbeats_results.json` (`AgentBeatsResults`): the leaderboard shape `{status, participants, results}`;
- `run.lock` (`RunLockHolder`): the pid and start time of the process writing the directory.

No secrets and no task content go into `results.json` or `agentbeats_results.json` (instructions
stay in the per-task `task.json`, which the HTML report reads).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from green_agent.models.cost import CostFigures
from green_agent.models.provenance import Provenance
from green_agent.models.result import BattleOutcome, BattleStatus
from green_agent.models.trajectory import FaultedCall
from kernel.fault_spec import FaultSpec
from kernel.paraphrase_set import ParaphraseChoice, ParaphraseSpec
from kernel.settings import Interaction, ScopePolicy

EVAL_SCHEMA_VERSION = 3
"""2: outcome `scope_error`, `aggregates.scope_errors`, `config.scope_policy`, `rows[].missed_gold`.
3: outcome `blue_error`; the headline `aggregates.tgc`/`sgc` are over the whole task set (unjudged = not passed),
with `tgc_judged`, `sgc_judged` and `incomplete` beside them."""

RunStatus = Literal["completed", "incomplete", "interrupted"]
"""completed: every battle judged; incomplete: some battles ended as infra errors; interrupted: stopped early."""


class RunConfig(BaseModel):
    """The choices that define a run (what the fingerprint covers, `workers` excepted)."""

    blue: str = Field(description="Blue under test: reference | noop | llm | an A2A URL.")
    predictor: str = Field(description="Scope predictor asked for.")
    scope_policy: ScopePolicy = Field(default="advise", description="advise | enforce.")
    interaction: Interaction = Field(default="tools", description="tools | code (Python in a sandboxed REPL).")
    split: str | None = Field(default=None, description="Split evaluated (None when task ids were given).")
    trials: int = Field(default=1, ge=1, description="Battles per task.")
    deadline_s: float = Field(gt=0, description="Seconds Blue may work per battle.")
    workers: int = Field(default=1, ge=1, description="World slots run in parallel (not fingerprinted).")
    max_infra_retries: int = Field(default=2, ge=0, description="Retries of a battle that ended in infra_error.")
    executor: Literal["local", "ray"] = Field(default="local", description=(
        "Where battles ran in the latest invocation: local slot pool or Ray slot actors (not fingerprinted)."))
    faults: FaultSpec | None = Field(default=None, description=(
        "A reliability run's fault spec (None: no faults); fingerprinted, so `--resume` keeps the plan."))
    paraphrase: ParaphraseSpec | None = Field(default=None, description=(
        "A paraphrase arm's setting (None: the original wording); fingerprinted, so `--resume` keeps the wordings."))
    paraphrase_set_digest: str | None = Field(default=None, description=(
        "SHA-256 of the paraphrase set the run drew from; fingerprinted: a resume against a changed set is refused."))


class RunNode(BaseModel):
    """A machine that ran battles of the run (one entry per executor and node, over every invocation)."""

    executor: Literal["local", "ray"] = Field(description="The executor that used the node.")
    node_id: str = Field(description="Ray's node id, or `local`.")
    address: str = Field(description="The node's IP address as Ray reports it (127.0.0.1 for the local pool).")
    hostname: str = Field(description="The node's host name.")


class RunManifest(BaseModel):
    """`run.json`: identifies a run so that a resume continues the same one."""

    schema_version: Literal[2, 3] = Field(default=EVAL_SCHEMA_VERSION, description="Record format version.")
    run_id: str = Field(description="Id of the run (prefix of its battle ids).")
    fingerprint: str = Field(description="sha256 of the fingerprinted config and the task set.")
    task_set_digest: str = Field(description="sha256 of the ordered task ids.")
    config: RunConfig = Field(description="The run's config.")
    task_ids: list[str] = Field(description="Tasks evaluated, in order.")
    appworld_root: str = Field(description="World the run used.")
    task_digests: dict[str, str] = Field(default_factory=dict, description=(
        "Task id -> digest of its folder in the world (`batch.world_digest.task_digests`), so `compare` can tell "
        "two worlds apart; empty in files written before it existed."))
    versions: dict[str, str | None] = Field(default_factory=dict, description="Versions of the parts involved.")
    isolation: str | None = Field(default=None, description=(
        "Code mode: the isolation agent code runs under on the machine that started the run (each battle's "
        "result.json names its own)."))
    created_at: datetime = Field(description="When the run was first started (UTC).")
    nodes: list[RunNode] = Field(default_factory=list, description=(
        "Machines that ran the run's battles, in first-use order (empty in files written before it existed)."))
    provenance: Provenance | None = Field(default=None, description=(
        "What the run's numbers rest on, gathered when it started (`green_agent.models.provenance`); None in files "
        "written before it existed."))
    fault_salt: str | None = Field(default=None, description=(
        "A reliability run's secret the fault plan drew on, published once the run is over (its commitment, in "
        "`config.faults`, was recorded when it started); None while the run goes on, and without faults "
        "(`green_agent.batch.fault_secret`)."))


class RunLockHolder(BaseModel):
    """`run.lock`: who holds the run directory's writer lock (the `fcntl` lock is on the same file)."""

    pid: int = Field(description="Process id of the writer.")
    started_at: datetime = Field(description="When the writer took the lock (UTC).")
    command: str | None = Field(default=None, description="What the writer runs (e.g. `eval`), for the message.")


class TaskInfo(BaseModel):
    """`tasks/<task_id>/task.json`: the task as the world describes it."""

    task_id: str = Field(description="AppWorld task id.")
    scenario_id: str = Field(description="Task id before '_' (AppWorld's scenario).")
    difficulty: int | None = Field(default=None, description="1-3, when the ground truth says.")
    instruction: str | None = Field(default=None, description="The task's instruction.")
    gold_apis: list[str] = Field(default_factory=list, description="Gold required APIs (`app.api`).")
    num_tests: int | None = Field(default=None, description="Number of AppWorld tests.")


class RowFaults(BaseModel):
    """A battle's injected faults (a reliability run; `green_agent.trajectory.faults`)."""

    injected: int = Field(ge=0, description="Faults that reached the agent.")
    recovered: int = Field(ge=0, description=(
        "Of which recovered: the same call redone and succeeded (a lost answer: not repeated; "
        "`green_agent.trajectory.faults`)."))
    undelivered: int = Field(default=0, ge=0, description="Faults that never reached the agent (not counted).")
    retry_after_ignored: int = Field(default=0, ge=0, description=(
        "Calls within a 429's retry-after, answered 429 again (tools mode): not counted as faults."))
    retries_after_fault: int = Field(default=0, ge=0, description="Repeats of a call whose last attempt was faulted.")
    calls: list[FaultedCall] = Field(default_factory=list, description="Each injected fault: position, API, kind, "
                                     "silent or loud, recovered or not.")


class KindFaults(BaseModel):
    """Injected and recovered faults of one kind over a run."""

    injected: int = Field(ge=0, description="Faults of this kind that reached the agent.")
    recovered: int = Field(ge=0, description="Of which recovered.")
    silent: int = Field(default=0, ge=0, description="Of which the agent was not told (the answer looked a success).")


class FaultAggregates(BaseModel):
    """A reliability run's faults over its judged battles (`green_agent.reliability.faults`)."""

    injected: int = Field(ge=0, description="Faults that reached the agent.")
    recovered: int = Field(ge=0, description="Of which recovered.")
    undelivered: int = Field(default=0, ge=0, description="Faults that never reached the agent (not counted).")
    retry_after_ignored: int = Field(default=0, ge=0, description=(
        "Calls within a 429's retry-after, answered 429 again (tools mode): not counted as faults."))
    by_kind: dict[str, KindFaults] = Field(default_factory=dict, description="The same per kind.")
    loud: KindFaults | None = Field(default=None, description=(
        "The faults the agent was told of (an error, an exception in its code); None in older files."))
    silent: KindFaults | None = Field(default=None, description=(
        "The faults the agent was not told of (an empty page; a cut-off answer in tools mode); None in older files."))


class EvalRow(BaseModel):
    """One battle of the run (one task, one trial), flattened from its `result.json`."""

    task_id: str = Field(description="AppWorld task id.")
    trial: int = Field(default=1, ge=1, description="Trial number, 1-based.")
    scenario_id: str = Field(description="Task id before '_'.")
    difficulty: int | None = Field(default=None, description="1-3, when known.")
    battle_id: str = Field(description="Battle id of the final attempt.")
    status: BattleStatus = Field(description="completed | timeout | blue_error | infra_error.")
    outcome: BattleOutcome = Field(
        description="passed | partial | collateral_damage | failed | timeout | blue_error | scope_error | infra_error.")
    passed: bool = Field(description="AppWorld's evaluation said success.")
    tests_passed: int | None = Field(default=None, description="Tests passed (None if not evaluated).")
    tests_total: int | None = Field(default=None, description="Tests of the task (None if not evaluated).")
    calls: int | None = Field(default=None, description="Tool calls through the gateway.")
    failed_calls: int | None = Field(default=None, description="Tool calls that failed.")
    error_rate: float | None = Field(default=None, description="failed_calls / calls.")
    p50_latency_ms: float | None = Field(default=None, description="Median call duration in the gateway.")
    p95_latency_ms: float | None = Field(default=None, description="95th percentile call duration.")
    scope_size: int | None = Field(default=None, description="APIs in the scope (None: every tool).")
    scope_recall: float | None = Field(default=None, description="Gold APIs covered by the scope.")
    missed_gold: list[str] = Field(default_factory=list, description="Gold APIs not in the scope (a scope miss).")
    refused_gold: list[str] = Field(default_factory=list, description="Gold APIs the enforced scope refused Blue.")
    api_precision: float | None = Field(default=None, description="Called APIs that are gold.")
    api_recall: float | None = Field(default=None, description="Gold APIs called.")
    api_f1: float | None = Field(default=None, description="F1 of called vs gold APIs.")
    duration_s: float | None = Field(default=None, description="Battle wall time (start to result).")
    attempts: int = Field(default=1, ge=1, description="Attempts made (infra retries + 1).")
    input_tokens: int | None = Field(default=None, description="LLM prompt tokens the Green spent (scoping).")
    output_tokens: int | None = Field(default=None, description="LLM completion tokens the Green spent.")
    cost_usd: float | None = Field(default=None, description="Approximate LLM cost of the Green's scoping.")
    purple_cost_usd: float | None = Field(default=None, description="The purple's reported cost of the battle "
                                          "(`batch.cost`; None: unknown, never 0).")
    purple_input_tokens: int | None = Field(default=None, description="Input tokens the purple reported.")
    purple_output_tokens: int | None = Field(default=None, description="Output tokens the purple reported.")
    purple_usage_note: str | None = Field(default=None, description="Why the purple's cost is unknown, or how priced.")
    faults: RowFaults | None = Field(default=None, description="A reliability run: the battle's injected faults.")
    paraphrase: ParaphraseChoice | None = Field(default=None, description=(
        "A reliability run's paraphrase arm: the wording the battle's agent was asked in."))
    error_type: str | None = Field(default=None, description="Infrastructure error class, if any.")
    error_step: str | None = Field(default=None, description="Plan step that failed, if any.")
    result_path: str = Field(description="result.json, relative to the run directory.")

    def reason(self) -> str:
        """Why this battle ended as it did, in a few words (for tables; the full why is in its result.json)."""
        if self.error_type:
            return f"not judged: {self.error_type}" + (f" in step {self.error_step}" if self.error_step else "")
        if self.tests_total is not None:
            return f"{self.tests_passed or 0}/{self.tests_total} tests passed"
        return self.outcome.replace("_", " ")


class Interval(BaseModel):
    """A confidence interval for one figure, in the figure's own unit (points 0-100, or a ratio 0-1)."""

    low: float = Field(description="Lower bound.")
    high: float = Field(description="Upper bound.")
    level: float = Field(description="Confidence level, e.g. 0.95.")
    method: str = Field(description="How it was computed (e.g. `wilson with a scenario design effect over 7 scenarios (...)`).")


class DifficultyStat(BaseModel):
    """TGC of the battles of one difficulty (an unjudged battle counts as not passed)."""

    battles: int = Field(description="Battles of this difficulty with a result.")
    passed: int = Field(description="Of which passed.")
    tgc: float | None = Field(description="100 * passed / battles; None if there are none.")
    ci: Interval | None = Field(default=None, description="TGC's interval: scenario-aware (None with one scenario).")
    wilson: Interval | None = Field(default=None, description="TGC's Wilson interval (battles taken as independent).")


class Stability(BaseModel):
    """How much a run's verdicts move between trials of the same task (runs with --trials >= 2)."""

    tasks: int = Field(description="Tasks with at least two judged trials (the flip rate's denominator).")
    flip_rate: float | None = Field(description="% of those tasks whose verdict differs between trials.")
    flip_rate_ci: Interval | None = Field(default=None, description="Its interval (scenario-aware).")
    flaky_tasks: list[str] = Field(default_factory=list, description="Tasks passed in some trials, not all.")
    pass_rate_histogram: dict[str, int] = Field(
        default_factory=dict, description="`c/n` (trials passed / judged) -> number of tasks, by n then c.")
    tgc_by_trial: dict[str, float | None] = Field(default_factory=dict, description=(
        "Headline TGC of each trial alone (over the task set)."))
    tgc_spread_mean: float | None = Field(
        default=None, description="Expected |TGC difference| in points between two single runs of this agent.")
    tgc_spread_p95: float | None = Field(
        default=None, description="95% of pairs of single runs differ by at most this many points.")


class EvalAggregates(BaseModel):
    """The run's numbers. The headline TGC/SGC are over the whole task set (`green_agent.batch.aggregate`)."""

    battles: int = Field(description="Battles in the run (tasks x trials) with a result on disk.")
    expected_battles: int = Field(description="Battles the run should have (tasks x trials).")
    judged: int = Field(description="Battles judged (not infra_error, not scope_error).")
    infra_errors: int = Field(description="Battles that ended in infra_error (after retries).")
    scope_errors: int = Field(default=0, description="Battles lost to an enforced scope that refused a gold API "
                              "(not in TGC/SGC).")
    missing: int = Field(description="Battles with no result yet (interrupted run).")
    passed: int = Field(description="Judged battles that passed.")
    tgc: float | None = Field(description="Task goal completion over the task set: % of tasks x trials that "
                              "passed (an unjudged one is not passed; see `incomplete`).")
    confidence_level: float | None = Field(default=None, description="Level of every interval below (None: "
                                           "a file written before intervals existed).")
    tgc_ci: Interval | None = Field(default=None, description="TGC's interval: scenario-aware (None with one scenario), over "
                                    "every task-trial of the task set.")
    tgc_wilson: Interval | None = Field(default=None, description="TGC's Wilson interval, for reference.")
    tgc_judged: float | None = Field(default=None, description="TGC over the judged battles only (not the headline).")
    incomplete: bool = Field(default=False, description="Some task-trial of the task set was not judged (infra "
                             "or scope error after retries, or no result): TGC/SGC count it as not passed.")
    scenarios: int = Field(description="Scenario-trials of the task set.")
    scenarios_passed: int = Field(description="Of which every task passed.")
    scenarios_unjudged: int = Field(description="Scenario-trials with a task not judged (counted as not passed).")
    sgc: float | None = Field(description="Scenario goal completion over every scenario-trial of the task set.")
    sgc_ci: Interval | None = Field(default=None, description="SGC's scenario-aware interval over those scenario-trials (None with one scenario).")
    sgc_judged: float | None = Field(default=None, description="SGC over complete scenario-trials only.")
    scenario_status: dict[str, Literal["passed", "failed", "incomplete"]] = Field(
        default_factory=dict, description="Scenario id -> passed | failed | incomplete (a task unjudged or "
        "without result in some trial), over every trial. Empty in files written before it existed.")
    scenarios_incomplete: list[str] = Field(
        default_factory=list, description="Scenario ids whose status is incomplete (never counted as passed).")
    tgc_by_difficulty: dict[str, DifficultyStat] = Field(description="Per difficulty ('1'..'3', 'unknown').")
    outcome_counts: dict[str, int] = Field(description="Battles per outcome, infra_error included.")
    trials: int = Field(description="Trials per task.")
    pass_hat_k: dict[str, float] | None = Field(
        default=None, description="pass^k for k=1..trials: mean over tasks of C(c,k)/C(n,k) (all k pass).")
    pass_at_k: dict[str, float] | None = Field(
        default=None, description="pass@k for k=1..trials: mean over tasks of 1-C(n-c,k)/C(n,k) (any pass).")
    pass_hat_k_ci: dict[str, Interval] | None = Field(default=None, description="pass^k intervals (scenario-aware).")
    pass_at_k_ci: dict[str, Interval] | None = Field(default=None, description="pass@k intervals (scenario-aware).")
    stability: Stability | None = Field(default=None, description="Run-to-run stability (trials >= 2).")
    mean_trajectory: dict[str, float | None] = Field(description="Means over judged battles (None: no values).")
    total_calls: int = Field(description="Tool calls over all judged battles.")
    total_duration_s: float = Field(description="Sum of battle durations (judged and not).")
    input_tokens: int = Field(default=0, description="Green's LLM prompt tokens over the run.")
    output_tokens: int = Field(default=0, description="Green's LLM completion tokens over the run.")
    cost_usd: float = Field(default=0.0, description="Green's approximate LLM cost over the run.")
    cost: CostFigures | None = Field(default=None, description="The purple's reported cost plus the Green's, per task "
                                     "and per solved task (`green_agent.models.cost`; None in older files).")
    faults: FaultAggregates | None = Field(default=None, description=(
        "A reliability run: faults injected and recovered over the judged battles, by kind (None without faults)."))


class EvalResults(BaseModel):
    """`results.json`: the run, its rows and its numbers."""

    schema_version: Literal[2, 3] = Field(default=EVAL_SCHEMA_VERSION, description="Record format version.")
    status: RunStatus = Field(description="completed | incomplete | interrupted.")
    manifest: RunManifest = Field(description="The run's manifest.")
    rows: list[EvalRow] = Field(description="One row per battle with a result, in task then trial order.")
    aggregates: EvalAggregates = Field(description="The run's numbers.")
    faults: FaultSpec | None = Field(default=None, description=(
        "The fault spec of a reliability run (docs/reliability.md); None when the gateway forwarded every call."))
    fault_salt: str | None = Field(default=None, description=(
        "The fault plan's secret, published once the run is over: with `faults` it reproduces the plan "
        "(`--faults <faults>,salt=<fault_salt>`); None while the run goes on."))
    standard: bool | None = Field(default=None, description=(
        "True when the run used the defaults that make its numbers comparable (`green_agent.batch.standard`); "
        "None in files written before it existed."))
    custom: list[str] = Field(default_factory=list, description="How the run differs from a standard one, in words "
                              "([] when standard).")
    provenance: Provenance | None = Field(default=None, description="The manifest's provenance, with the command "
                                          "that re-judges the run.")
    otlp_spans_dropped: int | None = Field(default=None, description=(
        "Spans of the run's battles the live OpenTelemetry export did not deliver (OTEL_EXPORTER_OTLP_ENDPOINT set: "
        "a collector that failed or could not keep up; the battles ran as ever), summed from each battle's "
        "otlp_export.json; None when no battle was exported live."))
    generated_at: datetime = Field(description="When this file was written (UTC).")


class AgentBeatsResults(BaseModel):
    """`agentbeats_results.json`: what AgentBeats leaderboards read (queried with DuckDB)."""

    status: Literal["completed", "failed"] = Field(description="completed when the run judged every battle.")
    participants: dict[str, str] = Field(description="Role -> agent (blue_agent -> the Blue under test).")
    results: list[dict[str, Any]] = Field(description="One summary record, then one numeric record per battle.")
