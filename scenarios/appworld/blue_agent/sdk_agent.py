"""The offline Blues (reference, no-op) as AgentBeats SDK agents, so a scenario can launch them.

A scenario's agents are started by the SDK's launcher (`agentbeats run card --tool file`), which
runs `AgentBeatsExecutor`. A tool file that calls `install("reference")` replaces the executor's
model call with the Blue's handler from `blue_agent.<kind>` (battle_info is still answered by the
SDK itself); no model is ever built, so no API key is needed.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

from kernel.errors import BadInputError
from kernel.settings import REPO_ROOT, load_settings

log = logging.getLogger(__name__)

KINDS = ("reference", "noop")
_MARK = "_appworld_offline_blue"


def install(kind: str) -> bool:
    """Patch the SDK executor of this process to run the `kind` Blue. False if already installed."""
    if kind not in KINDS:
        raise BadInputError(f"unknown offline Blue {kind!r}: use one of {', '.join(KINDS)}")
    from agentbeats.agent_executor import AgentBeatsExecutor

    if getattr(AgentBeatsExecutor, _MARK, None):
        return False
    handler: list[Any] = []

    async def invoke_agent(self: Any, context: Any) -> str:
        if not handler:
            module = importlib.import_module(f"blue_agent.{kind}")
            handler.append(module.make_handler(load_settings(env_file=REPO_ROOT / ".env")))
        try:
            return await handler[0](context.get_user_input())
        except Exception as exc:  # a Blue's failure is its answer, not a transport error
            log.exception("offline %s Blue failed", kind)
            return f"error: {type(exc).__name__}: {str(exc)[:300]}"

    AgentBeatsExecutor.invoke_agent = invoke_agent
    setattr(AgentBeatsExecutor, _MARK, kind)
    return True
