"""Keep the shipped LLM Blue's tool calls out of the battle log: the Green reports them.

agentbeats 1.2.6 posts `Calling tool <name>` for every native tool call of an SDK agent, as
`blue_agent (agentbeats sdk toolcall hooks)`. The Green already posts the Blue's calls from the
gateway's call log (the trusted record) under the Blue's name; these extra entries, under another
name, would split the Blue's group on the battle page. `silence()` replaces the one name the
hooks call (`agentbeats.agent_executor.update_battle_process`) with a function that posts nothing.
A third-party SDK Blue keeps its own entries: they show as a separate group.
"""

from __future__ import annotations

from typing import Any


def _posts_nothing(*args: Any, **kwargs: Any) -> None:
    return None


def silence() -> None:
    """Stop this process's SDK tool-call hooks from posting (idempotent)."""
    from agentbeats import agent_executor

    agent_executor.update_battle_process = _posts_nothing
