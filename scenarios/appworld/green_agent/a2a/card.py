"""The Green's agent card as plain data, built without a2a-sdk (so it can be served before a2a-sdk is imported).

`card_data(url)` is exactly the JSON a2a-sdk 0.3.6 serves for `AgentCard.model_validate(card_data(url))`
(`model_dump(exclude_none=True, by_alias=True)`); `tests/test_a2a_units.py` holds the two equal, so the
card answered at start-up (`card_first`) and the card the a2a-sdk app answers afterwards are one card.
"""

from __future__ import annotations

from typing import Any

from green_agent import __version__
from kernel.a2a_tools import PROTOCOL

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
"""Where the card is served (a2a-sdk 0.3's path, and the deprecated one it still serves)."""
NAME = "AppWorld Green"
DESCRIPTION = (f"Evaluates an agent on AppWorld tasks (real AppWorld servers, AppWorld's own tests). The agent gets "
               f"the task's tools in the conversation ({PROTOCOL}: OpenAI function schemas in, one JSON tool call "
               "per reply) and is scored by TGC/SGC.")


def card_data(url: str) -> dict[str, Any]:
    """The card's JSON (camelCase, as served): absolute `url` (a trailing slash added), streaming, one skill."""
    return {
        "name": NAME, "description": DESCRIPTION, "url": url if url.endswith("/") else url + "/",
        "version": __version__, "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": True}, "defaultInputModes": ["text"], "defaultOutputModes": ["text", "data"],
        "skills": [{
            "id": "appworld_assessment", "name": "AppWorld assessment",
            "description": ('Send {"participants": {"agent": URL}, "config": {"split": "dev", "num_shards": 1, ...}}; '
                            "get TGC, SGC and per-task rows."),
            "tags": ["appworld", "green_agent", "benchmark"],
            "examples": ['{"participants": {"agent": "http://127.0.0.1:9019"}, "config": {"split": "dev"}}'],
        }],
    }
