"""Typed client for the AppWorld 0.1.3 environment server.

Every call to the env server goes through `AppWorldClient`, the one place where transport
errors and AppWorld's 500s become our errors (naming the URL and the task id):

- B1: a 500 from any call but `/initialize` means "wrong or no active task" -> `WrongActiveTaskError`;
  a 500 from `GET /tasks/{id}` means the task does not exist -> `UnknownTaskError`.
- B2: `/evaluate` always sends `suppress_errors: true`.
- B3: `ground_truth_mode` is never sent.
- B5: `persist_state()` (one `/execute` of `pass`) must run before the single `/evaluate`.
- The env server is guarded (`world/serve.py`): with the slot's `SlotCredentials` every request
  carries the guard header, and `/initialize` hands the env server a `remote_apis_url` with the guard
  as path prefix (its own calls to the APIs server cannot send headers).
- Connection errors are retried (bounded, with backoff) only for idempotent calls
  (GET, `/task_completed`, `/evaluate`, `/close`, `/save_logs`); `/initialize` and `/execute` never.

The HTTP seam is an injectable `requests.Session`, so unit tests mock the endpoints.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import requests
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kernel.errors import AppWorldUnavailableError, UnknownTaskError, WorldChangedError, WrongActiveTaskError
from green_agent.http_sessions import session_for
from green_agent.models.result import EvaluationRecord
from kernel.slot_credentials import SlotCredentials

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 30.0
INITIALIZE_TIMEOUT_S = 120.0
"""The first `/initialize` in a fresh process takes ~5 s on the tiny world, far more on the real one."""
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF_S = 0.5
DEFAULT_MAX_INTERACTIONS = 300
"""Cap on `/execute` calls per world; the Green itself uses one (the B5 `pass`)."""


class Supervisor(BaseModel):
    """The task's supervisor (the user on whose behalf Blue acts)."""

    model_config = ConfigDict(extra="allow")

    first_name: str = Field(default="", description="Given name.")
    last_name: str = Field(default="", description="Family name.")
    email: str = Field(default="", description="E-mail address (the login of most apps).")
    phone_number: str = Field(default="", description="Phone number (the login of the phone app).")


class TaskInfo(BaseModel):
    """`/initialize` and `GET /tasks/{id}` output."""

    task_id: str = Field(description="AppWorld task id.")
    instruction: str = Field(description="What the supervisor asks for.")
    supervisor: Supervisor = Field(description="Whose accounts Blue uses.")
    datetime: str = Field(description="The task's frozen date and time (ISO 8601).")


class AppWorldClient:
    """The environment server of one world slot."""

    def __init__(self, base_url: str, session: requests.Session | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 retries: int = DEFAULT_RETRIES, backoff_s: float = DEFAULT_BACKOFF_S,
                 credentials: SlotCredentials | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.credentials = credentials
        self._headers = credentials.guard_headers() if credentials else {}
        self.session = session or session_for(self.base_url)
        self.timeout_s = timeout_s
        self.retries = max(1, retries)
        self.backoff_s = backoff_s
        self.active_task_id: str | None = None
        """Task whose world we initialized and have not closed (tracked client-side, B1)."""

    # -- endpoints -------------------------------------------------------------------------
    def health(self) -> str:
        """`GET /`: the welcome message. Raises AppWorldUnavailableError if the server is down."""
        body = self._request("GET", "/", idempotent=True, unwrap=False)
        return str(body.get("message", "")) if isinstance(body, dict) else str(body)

    def get_task(self, task_id: str) -> TaskInfo:
        """`GET /tasks/{id}`: task lookup that needs no active world. Unknown id -> UnknownTaskError."""
        try:
            output = self._request("GET", f"/tasks/{task_id}", idempotent=True)
        except WrongActiveTaskError as exc:
            raise UnknownTaskError(
                f"unknown task id {task_id!r}: the AppWorld env server at {self.base_url} has no such task; "
                "check the id against the world's splits"
            ) from exc
        return self._parse(TaskInfo, output, "/tasks")

    def has_task(self, task_id: str) -> bool:
        """True iff `GET /tasks/{id}` knows the (already validated) task id."""
        try:
            self.get_task(task_id)
        except UnknownTaskError:
            return False
        return True

    def initialize(self, task_id: str, experiment_name: str, remote_apis_url: str | None,
                   max_interactions: int = DEFAULT_MAX_INTERACTIONS) -> TaskInfo:
        """`POST /initialize` (never retried; `ground_truth_mode` never sent, B3)."""
        body: dict[str, Any] = {"task_id": task_id, "experiment_name": experiment_name,
                                "max_interactions": max_interactions}
        if remote_apis_url:
            body["remote_apis_url"] = (self.credentials.guarded_url(remote_apis_url) if self.credentials
                                       else remote_apis_url)
        output = self._request("POST", "/initialize", body, timeout_s=INITIALIZE_TIMEOUT_S)
        info = self._parse(TaskInfo, output, "/initialize")
        self.active_task_id = task_id
        return info

    def execute(self, task_id: str, code: str) -> str:
        """`POST /execute`: run code in the task world (never retried: it changes state)."""
        return str(self._request("POST", "/execute", {"task_id": task_id, "code": code}, task_id=task_id))

    def persist_state(self, task_id: str) -> None:
        """Persist DB state to the outputs dir (B5) with one `/execute` of `pass`."""
        output = self.execute(task_id, "pass")
        if output.startswith("Execution failed"):
            raise AppWorldUnavailableError(
                f"AppWorld env server at {self.base_url} could not persist the state of task {task_id}: {output[:300]}"
            )

    def task_completed(self, task_id: str) -> bool:
        """`POST /task_completed`: true iff the supervisor task's status is success or fail."""
        output = self._request("POST", "/task_completed", {"task_id": task_id}, task_id=task_id, idempotent=True)
        if not isinstance(output, bool):
            raise AppWorldUnavailableError(f"/task_completed at {self.base_url} returned {output!r}, expected a boolean")
        return output

    def evaluate(self, task_id: str) -> EvaluationRecord:
        """`POST /evaluate` with `suppress_errors: true` (B2). Call `persist_state` first (B5)."""
        body = {"task_id": task_id, "suppress_errors": True, "report": False}
        output = self._request("POST", "/evaluate", body, task_id=task_id, idempotent=True, timeout_s=INITIALIZE_TIMEOUT_S)
        return self._parse(EvaluationRecord, output, "/evaluate")

    def save_state(self, task_id: str, state_id: str) -> str:
        """`POST /save_state`: a checkpoint under the outputs dir (never `/load_state`, B4)."""
        return str(self._request("POST", "/save_state", {"task_id": task_id, "state_id": state_id}, task_id=task_id))

    def save_logs(self, task_id: str) -> None:
        """`POST /save_logs`: flush `logs/` to the outputs dir."""
        self._request("POST", "/save_logs", {"task_id": task_id}, task_id=task_id, idempotent=True)

    def close(self, task_id: str) -> None:
        """`POST /close`: end the task world. Safe to repeat once the world was initialized."""
        self._request("POST", "/close", {"task_id": task_id}, task_id=task_id, idempotent=True)
        if self.active_task_id == task_id:
            self.active_task_id = None

    def api_docs(self) -> dict[str, dict[str, Any]]:
        """`GET /api_docs`: `{app: {api: doc}}`."""
        body = self._request("GET", "/api_docs", idempotent=True, unwrap=False)
        if not isinstance(body, dict):
            raise AppWorldUnavailableError(f"/api_docs at {self.base_url} did not return an object")
        return body

    # -- transport -------------------------------------------------------------------------
    def _request(self, method: str, path: str, body: dict[str, Any] | None = None, *, task_id: str | None = None,
                 idempotent: bool = False, unwrap: bool = True, timeout_s: float | None = None) -> Any:
        url = self.base_url + path
        attempts = self.retries if idempotent else 1
        for attempt in range(1, attempts + 1):
            try:
                response = self.session.request(method, url, json=body, headers=self._headers,
                                                timeout=timeout_s or self.timeout_s)
                break
            except requests.Timeout as exc:
                if isinstance(exc, requests.ConnectTimeout) and attempt < attempts:
                    time.sleep(self.backoff_s * 2 ** (attempt - 1))
                    continue
                raise AppWorldUnavailableError(
                    f"AppWorld env server at {url} did not answer within {timeout_s or self.timeout_s:.0f} s"
                    f"{_for_task(task_id)}; it may be stuck on a long /execute: check its log"
                ) from exc
            except requests.ConnectionError as exc:
                if attempt < attempts:
                    log.debug("connection to %s failed (attempt %d/%d), retrying", url, attempt, attempts)
                    time.sleep(self.backoff_s * 2 ** (attempt - 1))
                    continue
                raise AppWorldUnavailableError(
                    f"AppWorld env server at {url} is unreachable ({type(exc).__name__}){_for_task(task_id)}: "
                    "start it (`appworld-green world up`) or fix --env-url"
                ) from exc
            except requests.RequestException as exc:
                raise AppWorldUnavailableError(f"request to AppWorld env server at {url} failed: {exc}") from exc
        return self._decode(response, path, task_id, unwrap)

    def _decode(self, response: requests.Response, path: str, task_id: str | None, unwrap: bool) -> Any:
        url = response.request.url if response.request is not None else self.base_url + path
        if response.status_code == 500 and task_id is not None and task_id == self.active_task_id:
            raise WorldChangedError(
                f"the world of task {task_id} that this Green opened is gone from the AppWorld env server at "
                f"{self.base_url} ({path} answered 500): it was closed or re-initialized behind the Green's back "
                "(by nothing the Blue can reach: check what else uses this world slot), or a server of the slot "
                "failed; the battle is not scored")
        if response.status_code == 500 and not path.startswith("/initialize"):
            raise WrongActiveTaskError(
                f"AppWorld env server at {url} answered 500 for task {task_id or _task_in_path(path)!r}: "
                f"no active world for this task (0.1.3 answers 500 for a wrong or absent active task; "
                f"active task as far as we know: {self.active_task_id!r})"
            )
        if response.status_code == 404 and not self.credentials:
            raise AppWorldUnavailableError(
                f"AppWorld env server at {url} answered 404: it is guarded and this Green has no credentials "
                "for its slot; start the slot with `appworld-green world up` (or let `battle` start one)")
        if response.status_code != 200:
            raise AppWorldUnavailableError(
                f"AppWorld env server at {url} answered HTTP {response.status_code}{_for_task(task_id)}: "
                f"{response.text[:200]!r}; see the env server's log"
            )
        try:
            body = response.json()
        except ValueError as exc:
            raise AppWorldUnavailableError(
                f"AppWorld env server at {url} returned malformed JSON{_for_task(task_id)}: {response.text[:120]!r}"
            ) from exc
        if not unwrap:
            return body
        if not isinstance(body, dict) or "output" not in body:
            raise AppWorldUnavailableError(f"AppWorld env server at {url} returned no 'output' field: {str(body)[:120]!r}")
        return body["output"]

    def _parse(self, model: type[BaseModel], output: Any, path: str) -> Any:
        try:
            return model.model_validate(output)
        except ValidationError as exc:
            raise AppWorldUnavailableError(
                f"AppWorld env server at {self.base_url}{path} returned an unexpected {model.__name__}: "
                f"{exc.error_count()} validation error(s), first: {exc.errors()[0]['msg']}"
            ) from exc


def _for_task(task_id: str | None) -> str:
    return f" (task {task_id})" if task_id else ""


def _task_in_path(path: str) -> str:
    match = re.match(r"/tasks/(.+)", path)
    return match.group(1) if match else "?"
