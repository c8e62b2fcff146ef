"""Replay a battle's recorded API calls into a fresh world of its task (runs in `.venv-appworld` only).

`replay(job)` is the `replay` job of `rejudge.py`. The job (built by `green_agent.rejudge.calls`) holds the
battle's forwarded calls in order, each as the HTTP request the gateway's forwarder sent AppWorld's APIs
server: `{"method", "url" (path and query), "headers", "body" (base64), "recorded" (the HTTP status the call
log records), "tool", "app", "login", "logout", "username", "tokens": {marker: app}, "password": marker|None}`.

The world is AppWorld's own `AppWorld(task_id, experiment_name)` in local mode: the task's DBs loaded in
memory, time frozen at the task's datetime and the random seed set, as the environment server's
`/initialize` does for a battle; the requests go to AppWorld's own API app (`world.requester.client`, the
same FastAPI app `appworld serve apis` serves). Logged-out tokens of an earlier world in this process are
forgotten first, so each replay starts from a fresh world.

Secrets the call log redacted are re-derived here, never read from the run folder:
- a token marker becomes the access token the replay's own latest successful login of that app returned
  (removed again by a successful logout with it); without one, a token no app accepts;
- a login's password marker becomes the password the world stores for that account when the log records the
  login as answered 2xx, else a password no account has, so the replayed login fails as the recorded one did.
Markers are letters and digits only (the same in a URL, a form and JSON); a password goes into a form body,
so it is form-encoded there. After the last call the end state is saved with `AppWorld.save_state(state_id)`
(the change-log format of a battle's `dbs`). The answer is `{"replayed": N, "mismatch_count": K,
"mismatches": [{"call", "tool", "recorded", "replayed"}, ... at most MAX_MISMATCHES]}`: calls whose replayed
HTTP status is not the recorded one.
"""

from __future__ import annotations

import base64
import re
import urllib.parse
from typing import Any

MAX_MISMATCHES = 10
NO_TOKEN = "replay-no-token"
"""What a token marker becomes when the replay holds no token of that app (AppWorld answers 401)."""
WRONG_PASSWORD = "[REDACTED]"
"""A login the log records as failed is replayed with this password, which no account of the world has."""
_TOKEN = re.compile(r"[A-Za-z0-9._-]{1,4096}")


def replay(job: dict[str, Any]) -> dict[str, Any]:
    """Replay `job["calls"]` into a fresh world of `job["task_id"]`; save its state as `job["state_id"]`."""
    from appworld.environment import AppWorld

    _forget_logouts()
    world = AppWorld(task_id=str(job["task_id"]), experiment_name=str(job["experiment"]))
    try:
        tokens: dict[str, list[str]] = {}
        mismatches: list[dict[str, Any]] = []
        count = 0
        for number, call in enumerate(job["calls"], start=1):
            status = _send(world.requester.client, call, tokens)
            if status != call["recorded"]:
                count += 1
                if len(mismatches) < MAX_MISMATCHES:
                    mismatches.append({"call": number, "tool": call["tool"], "recorded": call["recorded"],
                                       "replayed": status})
        world.save_state(str(job["state_id"]))
    finally:
        world.close()
    return {"replayed": len(job["calls"]), "mismatch_count": count, "mismatches": mismatches}


def _send(client: Any, call: dict[str, Any], tokens: dict[str, list[str]]) -> int:
    """One call: markers replaced, the request sent, the replay's tokens kept; returns the HTTP status."""
    url, body = call["url"], base64.b64decode(call["body"])
    headers = dict(call["headers"])
    secrets = {marker: (tokens.get(app) or [NO_TOKEN])[-1] for marker, app in call["tokens"].items()}
    if call.get("password"):
        body = body.replace(call["password"].encode(), urllib.parse.quote_plus(_password(call)).encode())
    for marker, value in secrets.items():
        url, body = url.replace(marker, value), body.replace(marker.encode(), value.encode())
        headers = {name: text.replace(marker, value) for name, text in headers.items()}
    response = client.request(call["method"], url, content=body or None, headers=headers)
    if 200 <= response.status_code < 300:
        _keep_token(call, response, headers, tokens)
    return response.status_code


def _password(call: dict[str, Any]) -> str:
    """The password the world stores for the login's account, if the log says the login succeeded."""
    if not 200 <= call["recorded"] < 300:
        return WRONG_PASSWORD
    from appworld.common.utils import import_apis_module

    user = import_apis_module(call["app"]).load_user(call.get("username"))
    password = getattr(user, "password", None) if user else None
    return password if isinstance(password, str) else WRONG_PASSWORD


def _keep_token(call: dict[str, Any], response: Any, headers: dict[str, str], tokens: dict[str, list[str]]) -> None:
    app = call["app"]
    if call.get("login"):
        try:
            token = response.json().get("access_token")
        except (ValueError, AttributeError):
            return
        if isinstance(token, str) and _TOKEN.fullmatch(token):
            tokens.setdefault(app, []).append(token)
    elif call.get("logout"):
        used = headers.get("Authorization", "").removeprefix("Bearer ")
        if used in tokens.get(app, []):
            tokens[app].remove(used)


def _forget_logouts() -> None:
    """AppWorld keeps logged-out tokens per app module, for the life of the process: a fresh world has none."""
    from appworld.apps import get_all_apps
    from appworld.common.utils import import_apis_module

    for app in get_all_apps():
        manager = getattr(import_apis_module(app), "logging_manager", None)
        blacklist = getattr(manager, "blacklisted_tokens", None)
        if isinstance(blacklist, set):
            blacklist.clear()
