"""Unit tests of the careful Blue's policy (`blue_agent.careful_policy`), its table of checks against the world's
API docs (`blue_agent.careful_checks`), its code-mode text against AppWorld's safety guard, and its wiring.

The policy is tried against `ScriptedApis`, which stands for the gateway's answers as a solution's `apis` sees
them (the contract): an API's JSON is returned; a fault raises in its mode's words, code mode's
`Exception("Response status code is <code>:\\n{"message": ...}")` (AppWorld's requester, as the REPL raises it)
or tools mode's `AppWorldApiError(tool, message)` (the MCP shim over the gateway's API-error payload); an answer
cut short raises `JSONDecodeError` (code mode) or, in tools mode, arrives as text that `decoded` turns into
`UndecodableAnswerError`. The checks are tried against the real world in tests/test_careful_blue_e2e.py.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from blue_agent import careful_checks, careful_policy
from blue_agent.careful_policy import MAX_FAILURES, CarefulApis, failure_of, kind_of
from blue_agent.errors import AppWorldApiError, UndecodableAnswerError
from blue_agent.purple.code_mode import CodeReferencePlayer
from blue_agent.replay_policy import BLUE_POLICIES, careful_solution_code, replay_tools, solution_code_for
from green_agent.batch.live import BLUES_WITHOUT_GATEWAY
from green_agent.commands.a2a import PURPLE_KINDS
from green_agent.local_battle import BUILTIN_BLUES
from kernel.settings import Settings
from kernel.world_data import WorldData
from mcp_gateway.tools import build_tool_specs

TIMEOUT = "Gateway timeout (HTTP 504): the notes service did not answer within 1 seconds. Try again."
LIMITED = "Too many requests (HTTP 429): the notes service's rate limit was exceeded. Retry after 1 second(s)."
UNAVAILABLE = ("Service temporarily unavailable (HTTP 503): the notes service could not handle the request right "
               "now. Try again.")


def code_fault(status: int, message: str) -> Exception:
    """What the REPL's `apis` raises for a faulted call (AppWorld's requester's words)."""
    return Exception(f"Response status code is {status}:\n" + json.dumps({"message": message}, separators=(",", ":")))


def tools_fault(message: str) -> AppWorldApiError:
    """What the MCP shim raises for the gateway's API-error payload."""
    return AppWorldApiError("notes__x", message)


def cut_short() -> Exception:
    try:
        json.loads('[{"')
    except json.JSONDecodeError as error:
        return error
    raise AssertionError("unreachable")


class ScriptedApis:
    """`apis` whose `<app>.<api>` answers come from a script, one per call, in order (module docstring)."""

    def __init__(self, script: dict[str, list[Any]]) -> None:
        self.script = {name: list(answers) for name, answers in script.items()}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, app: str) -> Any:
        scripted = self

        class App:
            def __getattr__(self, api: str) -> Any:
                def call(**kwargs: Any) -> Any:
                    scripted.calls.append((f"{app}.{api}", kwargs))
                    answer = scripted.script[f"{app}.{api}"].pop(0)
                    if isinstance(answer, Exception):
                        raise answer
                    return answer
                return call
        return App()

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


def careful(apis: ScriptedApis, checks: dict[str, Any] | None = None, slept: list[float] | None = None
            ) -> CarefulApis:
    return CarefulApis(apis, checks or {}, None if slept is None else slept.append)


# --- the policy ----------------------------------------------------------------------------------------------------

def test_a_429_is_waited_for_then_retried_in_tools_mode_and_at_once_in_code_mode() -> None:
    tools = ScriptedApis({"notes.search_notes": [tools_fault(LIMITED), [{"note_id": 1}]]})
    slept: list[float] = []
    assert careful(tools, slept=slept).notes.search_notes(query="x") == [{"note_id": 1}]
    assert slept == [1.0 + careful_policy.RETRY_AFTER_MARGIN_S] and tools.names() == ["notes.search_notes"] * 2
    code = ScriptedApis({"notes.create_note": [code_fault(429, LIMITED), {"note_id": 2}]})
    assert careful(code).notes.create_note(title="t") == {"note_id": 2}  # no sleep in code mode: at once
    assert code.names() == ["notes.create_note"] * 2  # a 429 never reached the world: no check needed


def test_a_503_is_retried_after_a_short_wait() -> None:
    apis = ScriptedApis({"notes.create_note": [tools_fault(UNAVAILABLE), code_fault(503, UNAVAILABLE), {"id": 3}]})
    slept: list[float] = []
    assert careful(apis, slept=slept).notes.create_note(title="t") == {"id": 3}
    assert slept == [careful_policy.UNAVAILABLE_WAIT_S] * 2


def note_check(seen: list[Any], happened: bool) -> dict[str, Any]:
    """A check of `notes.create_note` that counts its snapshot and answers `happened`."""
    def snapshot(apis: CarefulApis, kwargs: dict[str, Any]) -> str:
        seen.append(("snapshot", kwargs["title"]))
        return "before"

    def found(apis: CarefulApis, kwargs: dict[str, Any], before: Any) -> dict[str, Any] | None:
        seen.append(("found", before))
        return {"message": "Note created.", "note_id": 7} if happened else None

    return {"notes.create_note": (snapshot, found)}


@pytest.mark.parametrize("fault", [code_fault(504, TIMEOUT), tools_fault(TIMEOUT)], ids=["code", "tools"])
def test_a_504_on_a_write_whose_check_finds_it_is_not_repeated(fault: Exception) -> None:
    apis, seen = ScriptedApis({"notes.create_note": [fault]}), []
    answer = careful(apis, note_check(seen, happened=True)).notes.create_note(title="Groceries")
    assert answer == {"message": "Note created.", "note_id": 7} and apis.names() == ["notes.create_note"]
    assert seen == [("snapshot", "Groceries"), ("found", "before")]  # the snapshot came before the write


@pytest.mark.parametrize("fault", [code_fault(504, TIMEOUT), tools_fault(TIMEOUT), cut_short()],
                         ids=["code", "tools", "cut"])
def test_a_504_on_a_write_whose_check_does_not_find_it_is_repeated_once(fault: Exception) -> None:
    apis, seen = ScriptedApis({"notes.create_note": [fault, {"note_id": 8}]}), []
    assert careful(apis, note_check(seen, happened=False)).notes.create_note(title="G") == {"note_id": 8}
    assert apis.names() == ["notes.create_note"] * 2 and seen == [("snapshot", "G"), ("found", "before")]


def test_a_write_without_a_check_is_repeated_once_blindly() -> None:
    apis = ScriptedApis({"notes.archive_note": [code_fault(504, TIMEOUT), {"ok": 1}]})
    assert careful(apis).notes.archive_note(note_id=1) == {"ok": 1}
    twice = ScriptedApis({"notes.archive_note": [code_fault(504, TIMEOUT), code_fault(504, TIMEOUT), {"ok": 1}]})
    with pytest.raises(Exception, match="Response status code is 504"):
        careful(twice).notes.archive_note(note_id=1)
    assert twice.names() == ["notes.archive_note"] * 2


def test_a_504_on_a_read_or_a_login_is_retried() -> None:
    apis = ScriptedApis({"notes.show_note": [code_fault(504, TIMEOUT), {"note_id": 1}],
                         "notes.login": [tools_fault(TIMEOUT), {"access_token": "t"}]})
    assert careful(apis).notes.show_note(note_id=1) == {"note_id": 1}
    assert careful(apis).notes.login(username="u", password="p") == {"access_token": "t"}


def test_an_empty_page_is_read_once_more() -> None:
    emptied = ScriptedApis({"notes.search_notes": [[], [{"note_id": 1}]]})
    assert careful(emptied).notes.search_notes(page_index=0) == [{"note_id": 1}]
    really = ScriptedApis({"notes.search_notes": [[], []]})
    assert careful(really).notes.search_notes(page_index=3) == [] and len(really.calls) == 2
    # the re-read is a new call: its own failures are retried (the gateway may fault it)
    faulted = ScriptedApis({"notes.search_notes": [code_fault(504, TIMEOUT)] * 3 + [[]] + [code_fault(504, TIMEOUT)]
                           * 3 + [[{"note_id": 2}]]})
    assert careful(faulted).notes.search_notes(page_index=0) == [{"note_id": 2}] and len(faulted.calls) == 8


def test_a_cut_off_answer_is_asked_again_in_both_modes() -> None:
    code = ScriptedApis({"notes.show_note": [cut_short(), {"note_id": 1}]})
    assert careful(code).notes.show_note(note_id=1) == {"note_id": 1}
    answers = [{"response": '{"response": {"'}, {"response": {"note_id": 1}}]  # what GatewaySession.call_tool gives
    calls: list[str] = []

    def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        calls.append(name)
        if name == "supervisor__complete_task":
            assert arguments == {"answer": 1}
            return {"response": {"message": "done"}}
        return answers.pop(0)

    source = ('def solution(apis, requester):\n    note = apis.simple_note.show_note(note_id=1)\n'
              '    apis.supervisor.complete_task(answer=note["note_id"])\n')
    replay_tools(source, call_tool, "careful", sleep=lambda s: None)
    assert calls == ["simple_note__show_note", "simple_note__show_note", "supervisor__complete_task"]


def test_failures_that_are_not_passing_are_raised_at_once() -> None:
    for error in (code_fault(422, "Invalid page_limit."), tools_fault("Invalid credentials."),
                  tools_fault("No note titled 'Service down (HTTP 503): x'."), ValueError("boom"),
                  code_fault(500, "Internal error")):
        apis = ScriptedApis({"notes.create_note": [error, {"never": "reached"}]})
        with pytest.raises(type(error)):
            careful(apis).notes.create_note(title="t")
        assert len(apis.calls) == 1 and failure_of(error) is None
    assert failure_of(UndecodableAnswerError("x")) == failure_of(cut_short()) == "cut"
    assert [failure_of(e) for e in (code_fault(429, LIMITED), tools_fault(UNAVAILABLE), code_fault(504, TIMEOUT))] \
        == ["rate_limit", "unavailable", "no_answer"]


def test_the_failures_of_one_call_are_bounded() -> None:
    apis = ScriptedApis({"notes.show_note": [code_fault(503, UNAVAILABLE)] * 10})
    with pytest.raises(Exception, match="status code is 503"):
        careful(apis, slept=[]).notes.show_note(note_id=1)
    assert len(apis.calls) == MAX_FAILURES


# --- the table, against the world's API docs -------------------------------------------------------------------------

def solution_apis(root: Path) -> set[str]:
    """Every `app.api` the built world's reference solutions call."""
    return {name for path in (root / "data" / "tasks").glob("*/ground_truth/solution.py")
            for name in re.findall(r"apis\.(\w+\.\w+)\(", path.read_text())}


def test_the_read_and_write_rule_matches_every_api_the_pack_calls_and_every_write_has_a_check(
        appworld_root: Path) -> None:
    world = WorldData(appworld_root)
    specs = {spec.name.replace("__", "."): spec for spec in build_tool_specs(world, list(world.api_docs)).values()}
    called = solution_apis(appworld_root)
    assert len(called) > 50 and called <= set(specs)

    def by_docs(name: str) -> str:
        spec = specs[name]
        return "login" if spec.is_login else "read" if spec.method == "GET" else "write"

    assert {name: kind_of(name.split(".")[1]) for name in called} == {name: by_docs(name) for name in called}
    writes = {name for name in called if by_docs(name) == "write" and not name.startswith("supervisor.")}
    assert writes == set(careful_checks.CHECKS)  # every state-changing API the pack calls, and no other
    # over all of AppWorld's APIs the name rule is a guess; where it is wrong, a 504 on a GET that downloads is
    # repeated once, blindly, and on a POST that computes a balance retried as a read: both harmless
    wrong = sorted(name for name in specs if kind_of(name.split(".")[1]) != by_docs(name))
    assert [name for name in wrong if not name.split(".")[1].startswith("download_")] == [
        "splitwise.show_people_balance", "splitwise.show_person_balance"]
    assert all(by_docs(name) == "read" for name in wrong if name.split(".")[1].startswith("download_"))


def test_the_solutions_use_a_writes_answer_only_for_an_id_the_check_gives_back(appworld_root: Path) -> None:
    """A write the check found is not repeated and its answer is the check's: the pack's solutions ignore writes'
    answers but one, `create_playlist`'s `playlist_id` (f0c3e03_3), which the check gives (tried against the real
    world's own answer in tests/test_careful_blue_e2e.py)."""
    used = set()
    for path in (appworld_root / "data" / "tasks").glob("*/ground_truth/solution.py"):
        source = path.read_text()
        for name in careful_checks.CHECKS:
            for match in re.finditer(r"(\S*)\s*apis\." + re.escape(name) + r"\(", source):
                end = source.index(")", match.end())  # the solutions' writes hold no nested call
                after = source[end + 1:end + 40].strip()
                if match.group(1) == "=" or after.startswith("["):
                    used.add((name, re.match(r'\[\s*"(\w+)"', after).group(1) if after.startswith("[") else None))
    assert used == {("spotify.create_playlist", "playlist_id")}


# --- code mode: the text runs in AppWorld's REPL ----------------------------------------------------------------------

def test_the_code_mode_text_passes_appworlds_safety_guard(settings: Settings) -> None:
    """The guard the REPL applies to every execution (`mcp_gateway/code/child.py`) lets the careful code run, and
    would refuse it had it called `time.sleep`."""
    code = careful_solution_code("def solution(apis, requester):\n    apis.supervisor.complete_task()\n")
    probe = ("import json, sys\nfrom appworld.common.safety_guard import SafetyGuard\n"
             "print(json.dumps([SafetyGuard().is_syntax_safe(c) for c in json.load(sys.stdin)]))\n")
    done = subprocess.run([str(settings.appworld_python), "-c", probe], capture_output=True, text=True, timeout=120,
                          input=json.dumps([code, code.replace("self._sleep(min(", "time.sleep(min(")]))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [[True, ""], [False, "Usage of the following function is not allowed: "
                                                          "time.sleep."]]


def test_the_code_mode_text_runs_the_solution_under_the_policy() -> None:
    """Run as the REPL runs it: one namespace holding `apis` and `requester`, the text executed in it."""
    source = ("def solution(apis, requester):\n    page = apis.simple_note.search_notes(query='x')\n"
              "    apis.supervisor.complete_task(answer=len(page))\n")
    apis = ScriptedApis({"simple_note.search_notes": [code_fault(504, TIMEOUT), [], [{"note_id": 1}]],
                         "supervisor.complete_task": [{"message": "ok"}]})
    exec(compile(careful_solution_code(source), "<careful>", "exec"), {"apis": apis, "requester": None})  # noqa: S102
    assert apis.names() == ["simple_note.search_notes"] * 3 + ["supervisor.complete_task"]
    assert apis.calls[-1][1] == {"answer": 1}


# --- wiring --------------------------------------------------------------------------------------------------------

def test_reference_careful_is_shipped_wherever_reference_retry_is() -> None:
    for kinds in (BUILTIN_BLUES, BLUES_WITHOUT_GATEWAY, PURPLE_KINDS, tuple(BLUE_POLICIES)):
        assert "reference-retry" in kinds and "reference-careful" in kinds
    assert BLUE_POLICIES["reference-careful"] == "careful"
    source = "def solution(apis, requester):\n    pass\n"
    assert solution_code_for(source, "careful") == careful_solution_code(source)
    reply = asyncio.run(CodeReferencePlayer(source, "careful").turn("the task"))
    assert reply.startswith("```python\n") and "solution(CarefulApis(apis, CHECKS), requester)" in reply
