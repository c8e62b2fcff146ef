"""The sandboxed REPL (`mcp_gateway.code`) with real processes: AppWorld's output semantics and its limits.

The relay is a stand-in for the gateway's per-battle path; its contract: it gets each `ApiCall` the code
makes and answers with the API's status and JSON body (or a refusal `error`), as the gateway does.
One session is shared by the semantic tests (state persisting across them is itself under test).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_gateway.code.sandbox import Isolation, SandboxLimits, default_python, require_isolation
from mcp_gateway.code.session import ApiAnswer, ApiCall, CodeSession

pytestmark = pytest.mark.e2e
TASK_DATETIME = "2023-05-18T12:00:00"
APIS = {"spotify": ["login", "show_song", "fail"], "supervisor": ["complete_task"]}


class StandInRelay:
    """Answers as the gateway would: 200 with an echo, or 401 for the `fail` API; records every call."""

    def __init__(self) -> None:
        self.calls: list[ApiCall] = []

    def __call__(self, call: ApiCall) -> ApiAnswer:
        self.calls.append(call)
        if call.api == "fail":
            return ApiAnswer(status_code=401, body={"message": "Wrong password."})
        return ApiAnswer(status_code=200, body={"app": call.app, "api": call.api, "arguments": call.arguments})


@pytest.fixture(scope="module")
def isolation() -> Isolation:
    return require_isolation(default_python())


def new_session(isolation: Isolation, relay: StandInRelay, **limits: int) -> CodeSession:
    return CodeSession(python=default_python(), isolation=isolation, task_datetime=TASK_DATETIME, apis=APIS,
                       relay=relay, limits=SandboxLimits(**limits))


@pytest.fixture(scope="module")
def repl(isolation: Isolation) -> Iterator[tuple[CodeSession, StandInRelay]]:
    relay = StandInRelay()
    with new_session(isolation, relay) as session:
        yield session, relay


def test_the_machine_has_a_real_sandbox(isolation: Isolation) -> None:
    assert isolation.mechanism == "bubblewrap", isolation.summary()


def test_start_is_fast_and_measured(repl: tuple[CodeSession, StandInRelay]) -> None:
    session, _ = repl
    session.execute("pass")
    assert session.spawn_s is not None and session.spawn_s < 5  # a fork and exec: ~20 ms quiet, 0.5 s at load 20
    assert session.ready_s is not None and session.ready_s < 30


@pytest.mark.parametrize(("code", "expected"), [
    ("x = 41", "Execution successful."),
    ("print(x + 1)", "42\n"),
    ("print([1, 2])", "[1, 2]\n"),
    ("", "No code available to execute."),
    ("def f(:", "Execution failed. Traceback:\nSyntax error in line:\ndef f(:\nMessage: invalid syntax"),
    ("1/0", 'Execution failed. Traceback:\n  File "<python-input>", line 1, in <module>\n    1/0\n    ~^~\n'
            "ZeroDivisionError: division by zero"),
    ("import datetime; print(datetime.datetime.now())", f"{TASK_DATETIME.replace('T', ' ')}\n"),
    ("apis.spotify.fail()", 'Execution failed. Traceback:\n  File "<python-input>", line 1, in <module>\n'
                            "    apis.spotify.fail()\nException: Response status code is 401:\n"
                            '{"message":"Wrong password."}'),
    ("open('/etc/hostname')", "Execution failed. Traceback:\nUsage of the following function is not allowed: "
                              "builtins.open."),
])
def test_appworld_output_strings(repl: tuple[CodeSession, StandInRelay], code: str, expected: str) -> None:
    session, _ = repl
    assert session.execute(code).output == expected


@pytest.mark.parametrize(("code", "message"), [
    ("apis.spotify.nothere()", "Exception: No API named 'nothere' found in the spotify app."),
    ("apis.nope.x()", "Exception: No app named 'nope' found."),
    ("requester.get('/x')", "Exception: requester is not available here"),
    ("input('?')", "Exception: input(..) is not allowed."),
])
def test_unknown_apis_and_requester_fail_inside_the_code(repl: tuple[CodeSession, StandInRelay], code: str,
                                                        message: str) -> None:
    session, _ = repl
    outcome = session.execute(code)
    assert outcome.failed and message in outcome.output and outcome.api_calls == 0


def test_api_calls_are_relayed_and_return_json(repl: tuple[CodeSession, StandInRelay]) -> None:
    session, relay = repl
    outcome = session.execute("r = apis.spotify.show_song(song_id=7)\nprint(r['arguments']['song_id'] + 1)")
    assert outcome.output == "8\n" and outcome.api_calls == 1 and not outcome.failed
    assert relay.calls[-1] == ApiCall(app="spotify", api="show_song", arguments={"song_id": 7})


def test_state_persists_across_executions(repl: tuple[CodeSession, StandInRelay]) -> None:
    session, _ = repl
    session.execute("def double(v):\n    return 2 * v\nkept = double(21)")
    assert session.execute("print(kept, double(1))").output == "42 2\n"


def test_output_is_bounded_with_a_note(repl: tuple[CodeSession, StandInRelay]) -> None:
    session, _ = repl
    output = session.execute("print('y' * 50_000)").output
    assert output.startswith("y" * 20_000) and "[output cut:" in output and len(output) < 20_200


def test_max_interactions_fails_like_appworld(isolation: Isolation) -> None:
    with new_session(isolation, StandInRelay(), max_interactions=2) as session:
        assert session.execute("a = 1").output == "Execution successful."
        assert session.execute("print(a)").output == "1\n"
        assert "Exception: Maximum number of executions (2) reached." in session.execute("print(a)").output


def test_timeout_fails_the_execution_and_keeps_the_repl(isolation: Isolation) -> None:
    with new_session(isolation, StandInRelay(), timeout_s=1) as session:
        session.execute("kept = 5")
        outcome = session.execute("while True:\n    pass")
        assert outcome.timed_out and outcome.failed and outcome.killed is None
        assert "Exception: Execution timed out after 1 seconds." in outcome.output
        assert session.execute("print(kept)").output == "5\n"


def test_code_that_blocks_the_alarm_is_killed_and_the_next_execution_starts_fresh(isolation: Isolation) -> None:
    with new_session(isolation, StandInRelay(), timeout_s=1) as session:
        session.execute("kept = 5")
        outcome = session.execute("signal = __import__('sig' + 'nal')\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})"
                                  "\nwhile True:\n    pass")
        assert outcome.timed_out and outcome.killed and "variables are gone" in outcome.output
        assert outcome.output.startswith("Execution failed. Traceback:\nExecution timed out after 1 seconds.")
        after = session.execute("print(kept)")
        assert "NameError" in after.output
        assert session.execute("print('fresh')").output == "fresh\n"


def test_a_relay_that_raises_fails_that_call_inside_the_code_and_never_says_the_battle_ended(
        isolation: Isolation) -> None:
    """The relay stands for a gateway that raised on one call (issue 50: `requests`' ChunkedEncodingError, an
    OSError, escaped it): the code gets AppWorld's failed-request form naming what happened; the REPL goes on."""
    def relay(call: ApiCall) -> ApiAnswer:
        raise OSError("connection reset")

    with new_session(isolation, StandInRelay()) as session:
        session.execute("kept = 5")
        session.relay = relay
        outcome = session.execute("apis.spotify.show_song(song_id=1)")
        assert (outcome.killed, outcome.fault, outcome.failed) == (None, None, True), outcome
        assert "battle ended" not in outcome.output and "variables are gone" not in outcome.output
        assert outcome.output.endswith("Exception: The call apis.spotify.show_song failed before an answer came back "
                                       "(OSError)."), outcome.output
        assert session.execute("print(kept)").output == "5\n"
