"""`result.json`: the record of one battle, written by the battle engine (`green_agent.engine.sequencer`), read by batch and reports.

No secrets: credentials never enter this record (errors quote URLs and ids, not arguments).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from green_agent.models.bridge import BridgeReport
from green_agent.models.scope import ScopeUsage
from kernel.fault_spec import FaultSpec
from kernel.paraphrase_set import ParaphraseChoice
from kernel.settings import Interaction, ScopePolicy
from green_agent.models.trajectory import TrajectoryMetrics

RESULT_SCHEMA_VERSION = 6
"""2: `outcome` may be `scope_error`; `scope` gained missed_gold, policy, out_of_scope_calls, refused_gold.
3: `trajectory`, `archive` and `scope.usage` are typed records (TrajectoryMetrics, ArchiveRecord, ScopeUsage)
where 2 declared plain dicts; the JSON is the same shape, so version-2 files still load.
4: status and outcome may be `blue_error` (the Blue's own fault after it was given the task: judged, charged),
with `blue_fault` naming it; older files still load.
5: `instruction` (the task's instruction, from step 2) so a verdict can be explained from the record alone
(`green_agent.models.explanation`); `trajectory.submitted_answer` (the Blue's answer); older files still load.
6: `explanation` (the verdict in plain words: its headline and the failed requirements), so a script reading
result.json gets what the CLI prints; older files still load."""

BattleStatus = Literal["completed", "timeout", "blue_error", "infra_error"]
BattleOutcome = Literal["passed", "partial", "collateral_damage", "failed", "timeout", "blue_error", "scope_error",
                        "infra_error"]
BlueFaultKind = Literal["error_reply", "http_error", "connection_dropped", "malformed_reply", "task_failed",
                        "turn_timeout", "max_steps"]
"""How a Blue failed after it was given the task: an A2A/JSON-RPC error, an HTTP error status, the connection
dropped (the Blue crashed or closed it), a reply that is not JSON-RPC, an A2A task that ended failed/rejected/
canceled; and, for a purple behind the in-band bridge, a turn it did not answer in time or its steps used up
(`green_agent.models.bridge`). Each is the Blue's own fault (see `green_agent.steps.dispatch`)."""
BattleWinner = Literal["blue_agent", "green_agent"]


class EvalTestRecord(BaseModel):
    """One AppWorld test as reported."""

    requirement: str = Field(description="What the test checks.")
    label: str | None = Field(default=None, description="no_op_fail | no_op_pass.")
    trace: str | None = Field(default=None, description="Failure trace (failures only).")


class EvaluationRecord(BaseModel):
    """AppWorld's evaluation of the end state."""

    success: bool = Field(description="Every test passed.")
    num_tests: int = Field(description="Number of tests.")
    passes: list[EvalTestRecord] = Field(default_factory=list, description="Passed tests.")
    failures: list[EvalTestRecord] = Field(default_factory=list, description="Failed tests.")
    difficulty: int | None = Field(default=None, description="1-3.")


class ScopeRecord(BaseModel):
    """The APIs Blue was given and how they were chosen."""

    predictor: str = Field(description="Predictor that produced the scope (after any fallback); none = unscoped.")
    requested: str | None = Field(default=None, description="Predictor asked for.")
    apis: list[str] | None = Field(default=None, description="`app.api` names; None = every tool exposed.")
    fallback_reason: str | None = Field(default=None, description="Why the requested predictor was not used.")
    gold_apis: list[str] | None = Field(default=None, description="The task's gold required APIs, when known.")
    recall: float | None = Field(default=None, description="|gold ∩ apis| / |gold|; None if unknown.")
    missed_gold: list[str] | None = Field(default=None, description="Gold APIs not in the scope (a scope miss), "
                                          "sorted; [] when unscoped or complete; None when gold is unknown.")
    policy: ScopePolicy = Field(default="advise", description="advise: out-of-scope APIs stay callable (logged "
                                "in_scope false); enforce: the gateway refuses them.")
    out_of_scope_calls: int | None = Field(default=None, description="Blue's calls outside the scope (from the "
                                           "call log); None when not counted.")
    refused_gold: list[str] = Field(default_factory=list, description="Gold APIs the gateway refused Blue "
                                    "(enforce only): the reason for a scope_error.")
    usage: ScopeUsage | None = Field(default=None, description="Tokens/cost of an LLM prediction.")
    cached: bool | None = Field(default=None, description="Prediction came from the cache.")
    model: str | None = Field(default=None, description="Model of an LLM predictor.")


class CompletionRecord(BaseModel):
    """How the wait for Blue ended."""

    completed: bool = Field(description="Blue called complete_task before the deadline.")
    ended_by: str = Field(description="completed | deadline | blue_replied | blue_error.")
    detected_via: str | None = Field(default=None, description="gateway | task_completed.")
    waited_s: float = Field(description="Seconds waited.")
    deadline_s: float = Field(description="Deadline given to Blue.")
    blue_reply: str | None = Field(default=None, description="pending | replied | error at the end of the wait.")
    detection_latency_s: float | None = Field(default=None, description="complete_task (gateway clock) to detection.")
    bridge_report: BridgeReport | None = Field(default=None, description=(
        "How the in-band bridge's conversation with the purple ended and whose fault it was (A2A assessments only)."))


class BlueFaultRecord(BaseModel):
    """The Blue's own fault that ended its work before it completed the task (it is charged for it)."""

    kind: BlueFaultKind = Field(description="error_reply | http_error | connection_dropped | malformed_reply | "
                                "task_failed.")
    message: str = Field(description="What the Blue sent or how the connection ended (Blue-derived text: data).")
    after_s: float = Field(description="Seconds after the task was dispatched.")


class ErrorRecord(BaseModel):
    """Why a battle could not be judged."""

    type: str = Field(description="Error class (e.g. AppWorldUnavailableError).")
    message: str = Field(description="What happened and what to do.")
    step: str = Field(description="Plan step that failed.")


class CleanupRecord(BaseModel):
    """What the cleanup step managed to do."""

    ok: bool = Field(description="Every cleanup action succeeded (or had nothing to do).")
    closed: bool | None = Field(default=None, description="/close succeeded; None if no world was opened.")
    gateway_released: bool | None = Field(default=None, description="DELETE /control/battle succeeded; None if unused.")
    refused_calls: dict[str, int] = Field(default_factory=dict, description=(
        "Calls the gateway refused while the battle ran because they did not belong to it (no token, a wrong or "
        "revoked one), by reason; never attributed to the battle."))
    errors: list[str] = Field(default_factory=list, description="Cleanup problems.")


class ArchiveRecord(BaseModel):
    """What step 7 archived into the run directory."""

    state_persisted: bool = Field(description="The B5 `pass` execute ran.")
    logs_saved: bool = Field(description="/save_logs succeeded.")
    outputs_dir: str | None = Field(default=None, description="Copy of AppWorld's task outputs, if made.")
    call_log: str | None = Field(default=None, description="This battle's call records, if any log existed.")
    call_records: int = Field(default=0, description="Number of this battle's call records.")
    executions_log: str | None = Field(default=None, description="Code mode: this battle's execution records.")
    appworld_version: str | None = Field(default=None, description="From the outputs' version/code.txt.")
    dbs_digest: str | None = Field(default=None, description="sha256 of the archived end state (`appworld/dbs`, as "
                                   "saved: `steps.archive.state_digest`), which `rejudge` checks.")
    problems: list[str] = Field(default_factory=list, description="Evidence that could not be archived.")
    call_log_problem: str | None = Field(default=None, description="Why the gateway's call log could not be read "
                                         "(then `call_log` is None: no trajectory, never a silent zero).")


class VersionsRecord(BaseModel):
    """Versions of what took part."""

    appworld_green: str = Field(description="This project.")
    appworld: str | None = Field(default=None, description="AppWorld package of the env server.")
    agentbeats: str | None = Field(default=None, description="AgentBeats SDK.")


class ExplanationRecord(BaseModel):
    """The verdict explained, as `appworld-green battle` prints it (without the expected answer)."""

    headline: str = Field(description="The outcome in one plain sentence, starting with who won.")
    failed_requirements: list[str] = Field(default_factory=list, description=(
        "What each failed AppWorld test checked, in AppWorld's words, with the kind of check (at most 10)."))


class BattleResult(BaseModel):
    """One battle, judged or not."""

    schema_version: Literal[2, 3, 4, 5, 6] = Field(default=RESULT_SCHEMA_VERSION, description="Record format version.")
    battle_id: str = Field(description="Battle id (also in the call log records).")
    task_id: str | None = Field(default=None, description="AppWorld task id (None if it could not be read).")
    instruction: str | None = Field(default=None, description="The task's instruction (None before step 2 ran).")
    blue: str = Field(description="Blue under test: reference | noop | llm | its URL.")
    blue_agent_name: str | None = Field(default=None, description="Name on Blue's agent card.")
    interaction: Interaction = Field(default="tools", description="tools (MCP tool per API) | code (Python REPL).")
    isolation: str | None = Field(default=None, description=(
        "Code mode: the isolation the agent's code ran under (a bubblewrap sandbox, the landlock fallback where "
        "namespaces are not allowed, or NO sandbox when the operator passed --unsafe-code-in-process)."))
    faults: FaultSpec | None = Field(default=None, description=(
        "A reliability run's fault spec the gateway applied to this battle (None: no faults; docs/reliability.md): "
        "its public parameters and the commitment to the run's secret, never the secret."))
    paraphrase: ParaphraseChoice | None = Field(default=None, description=(
        "The wording the agent was asked in, when not the original (a reliability run's paraphrase arm)."))
    fault_salt: str | None = Field(default=None, description=(
        "The run's secret the plan drew on, published here when the battle was the whole run (`battle`, a v1 "
        "session) and it is over; an eval's battles leave it to results.json, written once the run is over."))
    status: BattleStatus = Field(description="completed | timeout | infra_error.")
    winner: BattleWinner | None = Field(default=None, description="None when the battle could not be judged.")
    outcome: BattleOutcome = Field(description="Graded outcome (see green_agent.steps.judge).")
    reason: str | None = Field(default=None, description="One line explaining the verdict.")
    explanation: ExplanationRecord | None = Field(default=None, description=(
        "The verdict in plain words (`green_agent.models.explanation`, never the expected answer); filled whenever "
        "the record is built or written."))
    difficulty: int | None = Field(default=None, description="Task difficulty 1-3, when known.")
    experiment_name: str | None = Field(default=None, description="AppWorld experiment of this battle's outputs.")
    evaluation: EvaluationRecord | None = Field(default=None, description="AppWorld's evaluation (None if not reached).")
    scope: ScopeRecord | None = Field(default=None, description="The scope given to Blue.")
    completion: CompletionRecord | None = Field(default=None, description="How the wait ended.")
    trajectory: TrajectoryMetrics | None = Field(default=None, description="Trajectory metrics of this battle.")
    trajectory_error: str | None = Field(default=None, description="Why the trajectory is missing.")
    archive: ArchiveRecord | None = Field(default=None, description="What was archived into the run directory.")
    report_problems: list[str] = Field(default_factory=list, description="What this result could not report: "
                                       "reporters (e.g. the AgentBeats backend) that failed to take it, and evidence "
                                       "that could not be read (the gateway's call log); the verdict still stands.")
    timings: dict[str, float] = Field(default_factory=dict, description="Wall seconds per plan step that ran.")
    error: ErrorRecord | None = Field(default=None, description="The infrastructure error, if any.")
    blue_fault: BlueFaultRecord | None = Field(default=None, description="The Blue's own fault after it was given "
                                               "the task (outcome blue_error), if any.")
    cleanup: CleanupRecord | None = Field(default=None, description="Cleanup outcome.")
    versions: VersionsRecord = Field(description="Versions.")
    run_dir: str | None = Field(default=None, description="Directory holding result.json and the evidence.")
    traceparent: str | None = Field(default=None, description=(
        "The battle's W3C trace context (`00-<trace id>-<root span id>-01`), made when it started and sent to the "
        "agent with the task: its OpenTelemetry spans (`export --format otlp`, the live export) carry these ids; None "
        "in results written before it existed (their ids are derived from the battle id)."))
    started_at: datetime = Field(description="Battle start (UTC).")
    finished_at: datetime | None = Field(default=None, description="Battle end (UTC).")
