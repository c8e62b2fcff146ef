"""The Green's side of the MCP gateway's control API (the gateway itself lives in `mcp_gateway`).

Contract (127.0.0.1 only):
- `GET /health` -> 200 when ready.
- `PUT /control/battle {"battle_id", "task_id", "scope": [tool names] | null}`: attribute calls and
  restrict the tool list for one battle.
- `DELETE /control/battle`: end it.
- `GET /control/completion?battle_id=B&wait=S` (S <= 60): long-poll; answers
  `{"completed": bool, "at": ts | null, "status": "success" | "fail" | null}` as soon as Blue calls
  `supervisor__complete_task`, else after S seconds.
"""

from __future__ import annotations

from typing import Any

import requests
from pydantic import BaseModel, Field, ValidationError

from green_agent.errors import GatewayError
from green_agent.http_sessions import session_for

CONTROL_TIMEOUT_S = 10.0
MAX_LONG_POLL_S = 60.0


class GatewayCompletion(BaseModel):
    """`GET /control/completion` answer."""

    completed: bool = Field(description="True once Blue called supervisor__complete_task in this battle.")
    at: Any = Field(default=None, description="When it did (gateway's timestamp), or None.")
    status: str | None = Field(default=None, description="success | fail | None.")


class GatewayClient:
    """Control endpoints of one gateway."""

    def __init__(self, base_url: str, session: requests.Session | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = session or session_for(self.base_url)

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/mcp"

    @property
    def sse_url(self) -> str:
        return f"{self.base_url}/sse"

    def health(self) -> None:
        self._call("GET", "/health")

    def start_battle(self, battle_id: str, task_id: str, scope: list[str] | None, policy: str = "advise") -> None:
        """Set the active battle: its scope (`app__api` tools; None = every tool) under `policy` (advise | enforce)."""
        self._call("PUT", "/control/battle",
                   json={"battle_id": battle_id, "task_id": task_id, "scope": scope, "policy": policy})

    def end_battle(self) -> None:
        self._call("DELETE", "/control/battle")

    def completion(self, battle_id: str, wait_s: float) -> GatewayCompletion:
        wait_s = max(0.0, min(wait_s, MAX_LONG_POLL_S))
        body = self._call("GET", "/control/completion", params={"battle_id": battle_id, "wait": round(wait_s, 3)},
                          timeout_s=wait_s + CONTROL_TIMEOUT_S)
        try:
            return GatewayCompletion.model_validate(body)
        except ValidationError as exc:
            raise GatewayError(f"MCP gateway at {self.base_url} returned an unexpected completion answer: {body!r:.200}") from exc

    def _call(self, method: str, path: str, timeout_s: float = CONTROL_TIMEOUT_S, **kwargs: Any) -> Any:
        url = self.base_url + path
        try:
            response = self.session.request(method, url, timeout=timeout_s, **kwargs)
        except requests.RequestException as exc:
            raise GatewayError(f"MCP gateway at {url} is unreachable ({type(exc).__name__}); is it running?") from exc
        if response.status_code >= 300:
            raise GatewayError(f"MCP gateway at {url} answered HTTP {response.status_code}: {response.text[:200]!r}")
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            return response.text
