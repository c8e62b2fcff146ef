"""The careful Blue's policy: an `apis` wrapper that retries what is passing and never repeats a write that happened.

Self-contained on purpose: this file's text is also sent as code (`blue_agent.replay_policy`), prepended to the
reference solution and run in code mode's REPL, so it imports only `re` (a module AppWorld's safety guard allows),
names no package of ours and never calls `time.sleep` (the guard refuses it): waiting is the `sleep` it is given,
`time.sleep` in tools mode, None in code mode (the REPL's clock is frozen: it retries at once).

`CarefulApis(apis, checks, sleep)` stands where the solution's `apis` stood; `apis.<app>.<api>(**kwargs)` is one
call under this policy, which gives up when the API has failed `MAX_FAILURES` times (since its last answer):
- HTTP 429: wait the retry-after the message gives (`Retry after N second(s)`, plus `RETRY_AFTER_MARGIN_S`), then
  call again. HTTP 503: wait `UNAVAILABLE_WAIT_S`, then call again. Nothing reached the world either way.
- HTTP 504 or an answer cut short (undecodable): the call may or may not have reached the world. A read or a login
  is called again. A write (`kind_of`) is called again only if its check (`checks["<app>.<api>"]`, the table in
  `blue_agent.careful_checks`) reads the app's state and finds that the write did not happen; if it did, the
  check's success-like answer is returned and the write is not repeated. A write without a check is repeated
  once, blindly; a second such failure is raised.
- A read answering an empty list (`[]`): read once more (an empty page may be a page that came back empty). Only
  once: a list that is really empty (every pagination loop's last page) costs one more call; the price is that a
  re-read faulted `empty` again (the gateway allows `max_consecutive` faults of an API in a row) is believed.
- Any other failure (the agent's own wrong arguments, a refusal) is raised at once, as without the policy; so is
  the last failure when the tries run out.

Failures are recognised in both modes' words: code mode's `Response status code is <code>:` exception (AppWorld's
requester), tools mode's `AppWorldApiError` whose message starts `<Reason> (HTTP <code>)` (the gateway's fault
texts), and an undecodable answer: `JSONDecodeError` (code mode) or `UndecodableAnswerError` (tools mode).
"""

import re

MAX_FAILURES = 4
"""Failures of one call (counted since its last answer: an empty page's re-read starts again) at which it gives up.
The gateway never faults the same API more than `max_consecutive` (2 by default) times in a row, so the third try
gets through."""
UNAVAILABLE_WAIT_S = 0.2
RETRY_AFTER_MARGIN_S = 0.05
"""Waited beyond a 429's retry-after: the gateway refuses another call of the API until it has passed."""
MAX_WAIT_S = 10.0
READ_PREFIXES = ("show_", "search_", "get_", "list_")
READ_SUFFIXES = ("_exists",)
CUT_OFF_ERRORS = ("JSONDecodeError", "UndecodableAnswerError")
"""Class names of an answer that could not be decoded: code mode's `json.loads`, tools mode's `blue_agent.errors`."""
_STATUS = re.compile(r"(?:Response status code is (\d{3}):|[A-Z][A-Za-z ]{0,60} \(HTTP (\d{3})\):)")
_RETRY_AFTER = re.compile(r"Retry after (\d+(?:\.\d+)?) ?s", re.IGNORECASE)
_PASSING = {"429": "rate_limit", "503": "unavailable", "504": "no_answer"}


def failure_of(error):
    """What a failed call's exception says: "rate_limit" (429), "unavailable" (503), "no_answer" (504), "cut" (an
    answer cut short), or None: not a passing failure (the agent's own, or a refusal)."""
    if type(error).__name__ in CUT_OFF_ERRORS:
        return "cut"
    found = _STATUS.match(message_of(error))
    return _PASSING.get(found.group(1) or found.group(2)) if found else None


def message_of(error):
    """The API's message: tools mode's `AppWorldApiError.api_message`, code mode's exception text."""
    return str(getattr(error, "api_message", None) or error)


def retry_after_s(error):
    """The retry-after a 429's message gives, in seconds (1 if it gives none)."""
    found = _RETRY_AFTER.search(message_of(error))
    return float(found.group(1)) if found else 1.0


def kind_of(api):
    """"login", "read" or "write", from the API's name: AppWorld names its reads show_/search_/get_/list_..., and
    *_exists (tests/test_careful_blue.py holds the rule against every API's HTTP method in the world's docs)."""
    if api == "login":
        return "login"
    if api.startswith(READ_PREFIXES) or api.endswith(READ_SUFFIXES):
        return "read"
    return "write"


class CarefulApis:
    """`apis` under the policy (module docstring). `read` and `look` are the checks' way to read state."""

    def __init__(self, apis, checks, sleep=None):
        self._apis, self._checks, self._sleep = apis, checks, sleep

    def __getattr__(self, app):
        if app.startswith("_"):
            raise AttributeError(app)
        return _CarefulApp(self, app)

    def read(self, app, api, **kwargs):
        """A read under the policy (retried, an empty page re-read)."""
        return self.call(app, api, kwargs)

    def look(self, app, api, **kwargs):
        """A read, or None when the app answers that the thing is not there (a failure that is not passing)."""
        try:
            return self.call(app, api, kwargs)
        except Exception as error:
            if failure_of(error) is not None:
                raise
            return None

    def call(self, app, api, kwargs):
        """`apis.<app>.<api>(**kwargs)` under the policy."""
        kind = kind_of(api)
        check = self._checks.get(app + "." + api) if kind == "write" else None
        before = check[0](self, kwargs) if check is not None and check[0] is not None else None
        repeated_blindly = reread = False
        failures = 0
        while True:
            try:
                answer = getattr(getattr(self._apis, app), api)(**kwargs)
            except Exception as error:
                failure = failure_of(error)
                failures += 1
                if failure is None or failures == MAX_FAILURES:
                    raise
                if failure == "rate_limit":
                    self._wait(retry_after_s(error) + RETRY_AFTER_MARGIN_S)
                elif failure == "unavailable":
                    self._wait(UNAVAILABLE_WAIT_S)
                elif kind == "write" and check is None:
                    if repeated_blindly:
                        raise
                    repeated_blindly = True
                elif kind == "write":
                    done = check[1](self, kwargs, before)
                    if done is not None:
                        return done
                continue
            if kind == "read" and isinstance(answer, list) and not answer and not reread:
                reread, failures = True, 0
                continue
            return answer

    def _wait(self, seconds):
        if self._sleep is not None:
            self._sleep(min(seconds, MAX_WAIT_S))


class _CarefulApp:
    def __init__(self, careful, app):
        self._careful, self._app = careful, app

    def __getattr__(self, api):
        if api.startswith("_"):
            raise AttributeError(api)
        careful, app = self._careful, self._app

        def call(**kwargs):
            return careful.call(app, api, kwargs)
        return call
