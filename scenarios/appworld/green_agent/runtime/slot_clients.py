"""The Green's clients of one world slot's servers, built with the slot's credentials.

Both drivers (the CLI/`eval` battle builder and the AgentBeats session) build their clients here, so
every battle talks to the guarded AppWorld servers and the gateway's control listener the same way.
"""

from __future__ import annotations

from green_agent.appworld_client import AppWorldClient
from green_agent.gateway_client import GatewayClient
from kernel.slot_credentials import load_credentials


def slot_env_client(env_url: str, apis_url: str) -> AppWorldClient:
    """The env server's client; guarded when this user has the slot's credentials (else a plain client,
    for AppWorld servers someone runs unguarded, e.g. `appworld serve`)."""
    return AppWorldClient(env_url, credentials=load_credentials(apis_url))


def slot_gateway(gateway_url: str | None, apis_url: str) -> GatewayClient | None:
    """The gateway's control client, or None when the battle runs without a gateway."""
    return GatewayClient.for_slot(gateway_url, apis_url) if gateway_url else None
