"""The Green's side of the MCP gateway's control API (the gateway itself lives in `mcp_gateway`).

The control routes are served on a listener apart from the Blue-facing one (127.0.0.1, its port in
the slot's credentials file) and need the slot's control secret as a bearer token:
- `GET /control/health` -> 200 when ready.
- `PUT /control/battle {"battle_id", "task_id", "scope": [tool names] | null, "token",
  "launch_url_allowed", "secrets"}`: attribute calls and restrict the tool list for one battle; the battle's
  Blue reaches it at `<public_url>/b/<token>` (`start_battle` returns that URL). `secrets`: the values this
  process registered for the battle (`kernel.scrubber`: the supervisor's passwords), for the gateway to scrub.
- `DELETE /control/battle`: end it (its token is revoked); answers its refusal counts.
- `GET /control/completion?battle_id=B&wait=S` (S <= 60): long-poll; answers
  `{"completed": bool, "at": ts | null, "status": "success" | "fail" | null}` as soon as Blue calls
  `supervisor__complete_task`, else after S seconds.
"""

from __future__ import annotations

from typing import Any

import requests
from pydantic import ValidationError

from mcp_gateway.models import COMPLETING_WAIT_S, DRAIN_TIMEOUT_S, CompletionReply, EpisodeEndedReply
from kernel.errors import GatewayError
from kernel.fault_spec import FaultSpec
from kernel.scrubber import battle_secrets, register_secrets
from green_agent.http_sessions import session_for
from kernel.slot_credentials import SlotCredentials, new_secret, require_credentials

CONTROL_TIMEOUT_S = 10.0
MAX_LONG_POLL_S = 60.0


class GatewayClient:
    """Control endpoints of one gateway.

    Args:
        base_url: the Blue-facing base URL (what the Blue's MCP URLs are built on).
        control_url: the control listener; `control_secret` its bearer secret.
    """

    def __init__(self, base_url: str, control_url: str, control_secret: str,
                 session: requests.Session | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.control_url = control_url.rstrip("/")
        self.session = session or session_for(self.control_url)
        self._headers = {"Authorization": f"Bearer {control_secret}"}
        self.isolation: str | None = None
        """The isolation of the last code-mode battle set (the gateway says which)."""

    @classmethod
    def for_slot(cls, gateway_url: str, apis_url: str, credentials: SlotCredentials | None = None) -> "GatewayClient":
        """The client of the gateway serving the slot whose APIs server is `apis_url` (its credentials file)."""
        credentials = credentials or require_credentials(apis_url)
        if credentials.control_url is None:
            raise GatewayError(f"the MCP gateway at {gateway_url} has not published its control listener; "
                               "is it running (and started after its slot's AppWorld servers)?")
        return cls(gateway_url, credentials.control_url, credentials.control_secret.get_secret_value())

    def health(self) -> None:
        self._call("GET", "/control/health")

    def start_battle(self, battle_id: str, task_id: str, scope: list[str] | None, policy: str = "advise",
                     launch_url_allowed: bool = False, interaction: str = "tools",
                     task_datetime: str | None = None, faults: FaultSpec | None = None, trial: int = 1,
                     instruction: str | None = None) -> str:
        """Set the battle with a new token: its scope (`app__api` tools; None = every tool) under `policy`
        (advise | enforce), a reliability run's fault spec (`faults`, planned per `trial`) and a paraphrase arm's
        wording (`instruction`: what `supervisor.show_active_task` answers). Returns the Blue's MCP base URL for it
        (`<base_url>/b/<token>`)."""
        token = new_secret()
        register_secrets([token])  # the Blue's key to its battle: scrubbed from every file and output of ours
        state = self._call("PUT", "/control/battle", json={"battle_id": battle_id, "task_id": task_id, "scope": scope,
                                                   "policy": policy, "token": token,
                                                   "launch_url_allowed": launch_url_allowed,
                                                   "interaction": interaction, "task_datetime": task_datetime,
                                                   "secrets": battle_secrets(battle_id),
                                                   "faults": faults.wire() if faults else None,
                                                   "trial": trial, "instruction": instruction})
        self.isolation = state.get("isolation") if isinstance(state, dict) else None
        return f"{self.base_url}/b/{token}"

    def end_battle(self) -> dict[str, int]:
        """Clear the battle (revoking its token); return the calls refused while it ran, by reason."""
        body = self._call("DELETE", "/control/battle")
        battle = body.get("battle") if isinstance(body, dict) else None
        refused = battle.get("refused") if isinstance(battle, dict) else None
        return {str(k): int(v) for k, v in refused.items()} if isinstance(refused, dict) else {}

    def end_episode(self, battle_id: str, completed: bool = False) -> EpisodeEndedReply:
        """End the battle's episode: its later calls are refused; returns once its calls in flight settled.

        `completed`: the task was completed, so in code mode the execution running now (the one that completed
        it: AppWorld's step) may finish, within its timeout, before the REPL is stopped."""
        params = {"battle_id": battle_id, **({"completed": "1"} if completed else {})}
        body = self._call("POST", "/control/battle/end", params=params,
                          timeout_s=DRAIN_TIMEOUT_S + CONTROL_TIMEOUT_S + (COMPLETING_WAIT_S if completed else 0))
        try:
            return EpisodeEndedReply.model_validate(body)
        except ValidationError as exc:
            raise GatewayError(f"MCP gateway at {self.base_url} returned an unexpected episode answer: {body!r:.200}") from exc

    def completion(self, battle_id: str, wait_s: float) -> CompletionReply:
        wait_s = max(0.0, min(wait_s, MAX_LONG_POLL_S))
        body = self._call("GET", "/control/completion", params={"battle_id": battle_id, "wait": round(wait_s, 3)},
                          timeout_s=wait_s + CONTROL_TIMEOUT_S)
        try:
            return CompletionReply.model_validate(body)
        except ValidationError as exc:
            raise GatewayError(f"MCP gateway at {self.base_url} returned an unexpected completion answer: {body!r:.200}") from exc

    def _call(self, method: str, path: str, timeout_s: float = CONTROL_TIMEOUT_S, **kwargs: Any) -> Any:
        url = self.control_url + path
        try:
            response = self.session.request(method, url, timeout=timeout_s, headers=self._headers, **kwargs)
        except requests.RequestException as exc:
            raise GatewayError(f"MCP gateway at {url} is unreachable ({type(exc).__name__}); is it running?") from exc
        if response.status_code >= 300:
            raise GatewayError(f"MCP gateway at {url} answered HTTP {response.status_code}: {response.text[:800]!r}")
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            return response.text
