"""Fold the SDK's tool-call log entries into the Green's own entries.

agentbeats 1.2.6 posts `Calling tool <name>` for every native tool call of an SDK agent, with
`reported_by` = `<agent> (agentbeats sdk toolcall hooks)` (`AgentBeatsExecutor._wrap_tool_with_logging`).
The SDK has no setting for it; the battle page starts a new group whenever `reported_by` changes,
so these entries, alternating with the Green's step entries, split the Green into one group per
step. `install()` replaces the one name those hooks call, `agentbeats.agent_executor.update_battle_process`,
with `post_folded`: the same entry, `reported_by` the agent's own name (the suffix dropped), sent
through the Green's reporter (so it is scrubbed like every other event: no secrets, no local
paths). We fold rather than silence: in llm mode the entries show which tool the model chose when.
"""

from __future__ import annotations

from typing import Any

from green_agent.agentbeats.reporter import BackendReporter

SDK_SUFFIX = " (agentbeats sdk toolcall hooks)"
_MARK = "_appworld_green_folded"


def folded_name(reported_by: str) -> str:
    """`green_agent (agentbeats sdk toolcall hooks)` -> `green_agent`."""
    return reported_by[: -len(SDK_SUFFIX)] if reported_by.endswith(SDK_SUFFIX) else reported_by


def post_folded(battle_id: str, backend_url: str, message: str, detail: dict | None = None,
                markdown_content: str | None = None, terminal_input: str | None = None,
                terminal_output: str | None = None, asciinema_url: str | None = None,
                reported_by: str = "agentbeats_sdk") -> Any:
    """`update_battle_process` with the SDK's signature: returns None, or False if not recorded."""
    reporter = BackendReporter(battle_id, backend_url, reported_by=folded_name(reported_by))
    return None if reporter.progress(message, detail, markdown_content) else False


def install() -> bool:
    """Point the SDK executor's tool-call hooks at `post_folded` (once per process)."""
    from agentbeats import agent_executor

    if getattr(agent_executor, _MARK, False):
        return False
    agent_executor.update_battle_process = post_folded
    setattr(agent_executor, _MARK, True)
    return True
