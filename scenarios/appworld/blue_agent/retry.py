"""Retrying a failed API call the way a careful client does, for the `reference-retry` Blue and purple.

Only a failure that says it is passing is retried: the message names HTTP 429, 503 or 504, a service that is
temporarily unavailable, a rate limit or a request that timed out. The client waits the retry-after the
message gives (`Retry after N second(s)`), else `DEFAULT_WAIT_S`, and tries again, up to `MAX_RETRIES` times;
any other failure (the agent's own wrong arguments, a refusal) is returned or raised at once, as without
retries. The Blue knows nothing of the referee: it reads the failure's text, as any agent would.

Tools mode wraps the tool caller (`retrying`); code mode sends the solution with a wrapper of `apis` in front of
it (`retrying_solution_code`). AppWorld's REPL refuses `time.sleep` (its safety guard), so code mode retries
at once.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from blue_agent.apis_shim import ToolCaller

MAX_RETRIES = 3
DEFAULT_WAIT_S = 0.2
MAX_WAIT_S = 10.0
TRANSIENT = re.compile(r"HTTP (?:429|503|504)|temporarily unavailable|rate limit|timed out|did not answer",
                       re.IGNORECASE)
RETRY_AFTER = re.compile(r"retry after (\d+(?:\.\d+)?) ?s", re.IGNORECASE)


def transient_message(payload: Any) -> str | None:
    """The failure message of a gateway payload when it says the failure is passing, else None."""
    response = payload.get("response") if isinstance(payload, dict) else None
    if not (isinstance(response, dict) and response.get("is_error") is True):
        return None
    message = str(response.get("message", ""))
    return message if TRANSIENT.search(message) else None


def wait_for(message: str) -> float:
    """The retry-after the message gives, else the default, at most `MAX_WAIT_S`."""
    found = RETRY_AFTER.search(message)
    return min(float(found.group(1)), MAX_WAIT_S) if found else DEFAULT_WAIT_S


def retrying(call: ToolCaller, sleep: Callable[[float], None] = time.sleep) -> ToolCaller:
    """`call`, retrying a passing failure up to `MAX_RETRIES` times after its retry-after."""

    def call_with_retries(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        payload = call(name, arguments)
        for _ in range(MAX_RETRIES):
            message = transient_message(payload)
            if message is None:
                return payload
            sleep(wait_for(message))
            payload = call(name, arguments)
        return payload

    return call_with_retries


def _repeating_apis(name: str, retries: int, retry_when: str) -> str:
    """The source of an `apis` wrapper for code mode whose calls are made again (at once: AppWorld's REPL refuses
    `time.sleep`) up to `retries` times while the Python expression `retry_when` holds of the `error` raised."""
    return f'''
class _{name}App:
    def __init__(self, app):
        self._app = app

    def __getattr__(self, api):
        function = getattr(self._app, api)

        def call(*args, **kwargs):
            for attempt in range({retries + 1}):
                try:
                    return function(*args, **kwargs)
                except Exception as error:
                    if attempt == {retries} or not ({retry_when}):
                        raise
        return call


class _{name}Apis:
    def __init__(self, apis):
        self._apis = apis

    def __getattr__(self, app):
        return _{name}App(getattr(self._apis, app))
'''


RETRYING_APIS = '''
def _passing(error):
    return str(error).startswith(("Response status code is 429", "Response status code is 503",
                                  "Response status code is 504"))
''' + _repeating_apis("Retrying", MAX_RETRIES, "_passing(error)")


def retrying_solution_code(source: str) -> str:
    """A reference solution's source and its call with a retrying `apis`, as one execution."""
    return RETRYING_APIS + "\n\n" + source.rstrip() + "\n\nsolution(_RetryingApis(apis), requester)\n"


RECKLESS_RETRIES = 10
"""The reckless policy's bound: far past any careful client's, so it stands for "without limit" in a battle."""


def reckless(call: ToolCaller) -> ToolCaller:
    """`call`, repeating any failed call at once (no wait, whatever the failure), up to `RECKLESS_RETRIES` times:
    the `reference-reckless` Blue, the far end of the reliability curve (docs/reliability.md)."""

    def call_again(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        payload = call(name, arguments)
        for _ in range(RECKLESS_RETRIES):
            response = payload.get("response") if isinstance(payload, dict) else None
            if not (isinstance(response, dict) and response.get("is_error") is True):
                return payload
            payload = call(name, arguments)
        return payload

    return call_again


RECKLESS_APIS = _repeating_apis("Reckless", RECKLESS_RETRIES, "True")


def reckless_solution_code(source: str) -> str:
    """A reference solution's source and its call with a reckless `apis`, as one execution."""
    return RECKLESS_APIS + "\n\n" + source.rstrip() + "\n\nsolution(_RecklessApis(apis), requester)\n"
