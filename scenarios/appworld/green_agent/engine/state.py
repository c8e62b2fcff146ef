"""What the steps of one battle have produced so far (the engine's working memory)."""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_gateway.models import EpisodeEndedReply
from green_agent.models.result import ArchiveRecord, CleanupRecord, ErrorRecord, ScopeRecord
from green_agent.steps.dispatch import DispatchHandle
from green_agent.steps.judge import Judgement
from green_agent.steps.metrics import MetricsResult
from green_agent.steps.setup import SetupResult
from green_agent.steps.task_message import TaskMessage
from green_agent.steps.wait import CompletionResult
from green_agent.steps.wording import BattleWording
from kernel.task_ids import TaskRef


@dataclass
class BattleState:
    """Filled in step by step; `step` is the one running (or the last that ran)."""

    step: str = "task_id"
    timings: dict[str, float] = field(default_factory=dict)
    ref: TaskRef | None = None
    wording: BattleWording | None = None
    """A paraphrase arm's wording of the task (step 1): what the agent reads instead of the instruction."""
    setup: SetupResult | None = None
    initialize_attempted: bool = False
    gateway_set: bool = False
    episode: EpisodeEndedReply | None = None
    """The gateway's answer when the episode ended (step 6): later calls refused, calls in flight settled."""
    mcp_base_url: str | None = None
    isolation: str | None = None
    """The Blue's MCP base URL for this battle (the gateway's token URL), once the gateway knows the battle."""
    log_marks: dict[str, int] = field(default_factory=dict)
    """The shared logs' sizes before the gateway was given the battle: its records are read from there on."""
    scope: ScopeRecord | None = None
    message: TaskMessage | None = None
    handle: DispatchHandle | None = None
    completion: CompletionResult | None = None
    archive: ArchiveRecord | None = None
    metrics: MetricsResult | None = None
    judgement: Judgement | None = None
    error: ErrorRecord | None = None
    cleanup: CleanupRecord | None = None
    report_problems: list[str] = field(default_factory=list)
    traceparent: str | None = None
    """The battle's W3C trace context, made when it started (`kernel.trace_context`); sent with the task."""
