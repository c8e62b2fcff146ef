"""Report a battle to the AgentBeats backend: progress events and the one final result.

Contract: `POST {backend}/battles/{battle_id}` answers 204;
progress is `{is_result: false, message, reported_by, timestamp, [detail], [markdown_content]}`;
the result is `{is_result: true, message, winner, reported_by, timestamp, detail, markdown_content}`,
reported under its verdict's name (`result_post.verdict_reporter`: the collapsed page's last group
header then says who won), and is refused with 400 once the battle is `finished` (e.g. after its battle_timeout).

Winner values: `blue_agent` / `green_agent` as judged; `draw` when the battle could not be judged
(infrastructure error: Blue is not charged). `detail` is a compact summary and the markdown
reads first (`result_post`); every event passes `outbound.prepare` (no secrets, no local paths);
messages are one line (`kernel.untrusted.one_line`), markdown is escaped by its renderer.
Progress never raises (the UI is best effort); `report` is idempotent and raises
`InfrastructureError` when the backend refuses or cannot be reached, so the plan records it.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timezone
from typing import Any

import requests

from green_agent.agentbeats import outbound, result_post
from green_agent.models.result import BattleResult
from kernel.errors import InfrastructureError
from kernel.untrusted import markdown_text, one_line

log = logging.getLogger(__name__)

REPORTED_BY = "green_agent"
POST_TIMEOUT_S = 10.0
MAX_MESSAGE = 300


def timestamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"


class BackendReporter:
    """Posts one battle's events; implements the engine's `Reporter` protocol (`report(result)`)."""

    def __init__(self, battle_id: str, backend_url: str, reported_by: str = REPORTED_BY,
                 session: requests.Session | None = None, timeout_s: float = POST_TIMEOUT_S) -> None:
        self.battle_id = battle_id
        self.url = f"{backend_url.rstrip('/')}/battles/{battle_id}"
        self.reported_by = reported_by
        self.session = session or requests.Session()
        self.timeout_s = timeout_s
        self.result_posted = False
        self.progress_failures = 0
        self._lock = threading.Lock()

    def progress(self, message: str, detail: dict[str, Any] | None = None, markdown: str | None = None,
                 reported_by: str | None = None) -> bool:
        """Post a progress event; False (logged, never raised) if the backend did not take it.

        After the result the backend refuses events (the battle is `finished`), so none are sent.
        `reported_by` overrides the reporter's own name (the Blue's calls, posted by the Green).
        """
        if self.result_posted:
            return False
        event: dict[str, Any] = {"is_result": False, "message": one_line(message, MAX_MESSAGE),
                                 "reported_by": reported_by or self.reported_by,
                                 "timestamp": timestamp()}
        if detail:
            event["detail"] = detail
        if markdown:
            event["markdown_content"] = markdown
        try:
            self._post(event)
        except InfrastructureError as exc:
            self.progress_failures += 1
            log.warning("progress event not recorded: %s", exc)
            return False
        return True

    def report(self, result: BattleResult) -> None:
        """Post the final result once; later calls do nothing. Raises InfrastructureError on failure."""
        with self._lock:
            if self.result_posted:
                return
            shown = outbound.prepare_result(result)  # scrubbed before the renderers escape it
            winner = result_post.winner_of(shown)
            self._post({"is_result": True, "message": result_post.result_message(shown), "winner": winner,
                        "reported_by": result_post.verdict_reporter(winner), "timestamp": timestamp(),
                        "detail": result_post.compact_detail(shown),
                        "markdown_content": result_post.render_markdown(shown)})
            self.result_posted = True

    def report_unjudged(self, message: str, detail: dict[str, Any]) -> None:
        """Final result for a battle that never produced a BattleResult (bad input): a draw."""
        with self._lock:
            if self.result_posted:
                return
            message = outbound.prepare({"m": message})["m"]
            self._post({"is_result": True, "message": one_line(message, MAX_MESSAGE), "winner": "draw",
                        "reported_by": result_post.verdict_reporter("draw"), "timestamp": timestamp(), "detail": detail,
                        "markdown_content": f"## AppWorld battle not run\n\n{markdown_text(message, 2000)}\n"})
            self.result_posted = True

    def _post(self, event: dict[str, Any]) -> None:
        try:
            response = self.session.post(self.url, json=outbound.prepare(event), timeout=self.timeout_s)
        except requests.RequestException as exc:
            raise InfrastructureError(f"AgentBeats backend at {self.url} is unreachable ({type(exc).__name__}); "
                                      "the result is still in the run directory") from exc
        if response.status_code >= 300:
            hint = " (the battle is already finished, e.g. its battle_timeout passed)" if response.status_code == 400 else ""
            raise InfrastructureError(f"AgentBeats backend refused the event for battle {self.battle_id}: "
                                      f"HTTP {response.status_code}{hint}: {response.text[:200]!r}")
