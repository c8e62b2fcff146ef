"""Differential test: AppWorld's own REPL is the oracle for ours.

The same code runs (a) through AppWorld's `POST /execute` on a world initialised with `remote_apis_url`, as
AppWorld's own agents run, and (b) through our sandboxed REPL via the gateway's core (`Gateway.call_tool`
of `execute`, the per-battle forwarding path, the real APIs server) on an identical fresh world of the same
slot. Compared, per case: every output string (byte for byte, after the documented normalisations in
`normalised`); the end state as AppWorld's evaluator judges it (success, passed and failed requirements);
and the DB change log itself (`tests/change_log_support.py`): per app DB (the task's allowed apps, admin,
supervisor), the SQL statements with their parameters, in order, that the case appended to the start
state's log, compared exactly. Both logs are read from the files the environment server writes at
`/initialize` (start) and at `persist_state` (end), so no round trip is added; the start logs of the two
fresh worlds are compared too. Changes AppWorld made in an execution listed in KNOWN are excised from its
log first (ours refuses that execution). Each side's outputs dir is removed after its case.

Corpus: every reference solution of the pack (run as `solution(apis, requester)`), and snippets that
print, raise, mistype, loop past a short timeout (`TIMEOUT_S` on both sides), use datetime, define and reuse
variables, call a missing API, call with a wrong argument, call complete_task twice in two executions (the
second time with another answer, which AppWorld writes over the first and we refuse: docs/quirks.md, B6).
Work after `complete_task` in the same execution (AppWorld's step is the execution, ours too): reads after
it, a second completion with another answer, and, for a task of each split, an early `complete_task()`
followed by the whole reference solution (its writes and its own completion with the real answer). The match counts
(outputs, verdicts, change logs) are printed (`-s`) and asserted; the known differences are documented in
docs/quirks.md and listed in KNOWN. `test_a_different_db_change_is_caught` shows the change-log comparison
fails when the two sides change the DB differently.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from green_agent.appworld_client import AppWorldClient
from green_agent.runtime.slot import SlotSpec, WorldSlot
from green_agent.steps.archive import outputs_path
from kernel.ports import free_port
from kernel.settings import Settings, load_settings
from kernel.world_data import WorldData
from mcp_gateway.code.sandbox import SandboxLimits
from mcp_gateway.code_mode import CodeRunner
from mcp_gateway.gateway import Gateway
from mcp_gateway.models import BattleScope, GatewayConfig
from mcp_gateway.server import build_gateway

from sandbox_support import unprivileged_python
from change_log_support import ChangeLog, agent_changes, count, diff_change_logs, excise, read_change_log

pytestmark = pytest.mark.e2e
TIMEOUT_S = 10
"""Both REPLs' execution timeout: short for the looping snippet, long enough that a loaded machine times out
neither side's real work (at 2 s, AppWorld's own REPL timed out logins and reference solutions at load 13)."""
TOKEN = "t" * 40
RUN = uuid.uuid4().hex[:8]  # experiment names of this run: a concurrent run of this test uses others
SNIPPETS = [
    "x = 20",
    "print(x * 2 + 2)",
    "print('a', 1, [1, 2], {'k': None})",
    "print([{'a': 1}] * 12)",
    "raise ValueError('bad value')",
    "def f(:\n    pass",
    "1 + 'a'",
    "undefined_name",
    "import datetime\nprint(datetime.datetime.now(), datetime.date.today())",
    "print(DateTime.now())",
    "while True:\n    pass",
    "print(x)",
    "",
    "apis.spotify.no_such_api()",
    "apis.no_such_app.login()",
    "print(apis.supervisor.show_profile()['email'])",
    "apis.spotify.login(username='nobody@example.com', password='wrong')",
    "apis.spotify.login(user='a')",
    "print(apis.spotify.show_song(song_id='not-a-number'))",
    "import subprocess",
    "open('/etc/hostname')",
    "apis.supervisor.complete_task()",
    "apis.supervisor.complete_task(answer='overwritten')",
]
KNOWN = {
    "apis.supervisor.complete_task(answer='overwritten')": "the gateway ends the "
        "episode at the first complete_task and refuses later executions; AppWorld runs it and UPDATEs the task's "
        "answer, so that statement is in its change log only (docs/quirks.md, B6)",
}


class Run(NamedTuple):
    """One side's case: the outputs, the evaluator's verdict, the start change log and what the case changed."""

    outputs: list[str]
    verdict: tuple[bool, int, int]
    start: ChangeLog
    changes: ChangeLog
    excised: int = 0  # AppWorld's statements of KNOWN executions, left out of `changes`


@pytest.fixture(scope="module")
def diff_settings(tmp_path_factory: pytest.TempPathFactory, appworld_root: Path) -> Settings:
    tmp = tmp_path_factory.mktemp("differential")
    return load_settings().model_copy(update={"appworld_root": appworld_root, "runs_dir": tmp,
                                             "agentbeats_mcp_log_path": tmp / "calls.jsonl"})


@pytest.fixture(scope="module")
def world(diff_settings: Settings) -> Iterator[tuple[AppWorldClient, Gateway, str]]:
    settings = diff_settings
    spec = SlotSpec(env_port=free_port(), apis_port=free_port(), gateway_port=free_port())
    tmp = settings.runs_dir
    with WorldSlot(spec, appworld_root=settings.appworld_root, appworld_python=settings.appworld_python,
                   log_dir=tmp / "logs", mcp_log_path=tmp / "calls.jsonl", lock_dir=tmp / "locks",
                   with_gateway=False) as slot:
        config = GatewayConfig(remote_apis_url=slot.urls.apis_url, appworld_root=settings.appworld_root,
                               log_path=tmp / "calls.jsonl")
        gateway = build_gateway(config, slot.credentials)
        python = settings.appworld_python
        if settings.code_sandbox == "landlock":  # CODE_SANDBOX=landlock (bench/bench_code_load.py): a python it can run
            unprivileged = Path(tempfile.mkdtemp(prefix="appworld-unprivileged-"))  # pytest's tmp dirs are 0700
            unprivileged.chmod(0o755)
            python = unprivileged_python(unprivileged)
        gateway.code = CodeRunner(gateway.specs, config.log_path, python,
                                  limits=SandboxLimits(timeout_s=TIMEOUT_S), sandbox=settings.code_sandbox)
        client = AppWorldClient(slot.urls.env_url, credentials=slot.credentials)
        yield client, gateway, slot.urls.apis_url
        gateway.code.shutdown()
        gateway.forwarder.close()
        if python != settings.appworld_python:
            shutil.rmtree(python.parent.parent.parent, ignore_errors=True)


def initialize(client: AppWorldClient, apis_url: str, task_id: str, name: str) -> str:
    """A fresh world of `task_id` in remote-APIs mode, AppWorld's REPL timing out after TIMEOUT_S; its datetime."""
    body = {"task_id": task_id, "experiment_name": name, "timeout_seconds": TIMEOUT_S,
            "remote_apis_url": client.credentials.guarded_url(apis_url)}
    return client._request("POST", "/initialize", body, timeout_s=120)["datetime"]


def appworld_run(client: AppWorldClient, apis_url: str, root: Path, task_id: str, codes: list[str],
                 case: str) -> Run:
    name = f"diff-{RUN}-appworld-{case}"
    initialize(client, apis_url, task_id, name)
    dbs = outputs_path(root, name, task_id) / "dbs"
    try:
        start, outputs, known = read_change_log(dbs), [], []
        assert {"admin", "supervisor"} <= set(start), f"AppWorld logged only {sorted(start)}: not its change log?"
        for key, code in zip(case_keys(codes), codes):
            before = read_change_log(dbs) if key in KNOWN else None  # AppWorld saves the log after every execute
            outputs.append(client.execute(task_id, code))
            if before is not None:
                known.append((before, read_change_log(dbs)))
        result = verdict(client, task_id)
        end = read_change_log(dbs)
        for before, after in reversed(known):
            end = excise(end, before, after)
        excised = sum(count(agent_changes(before, after)) for before, after in known)
        return Run(outputs, result, start, agent_changes(start, end), excised)
    finally:
        close(client, root, task_id, name)


def our_run(client: AppWorldClient, gateway: Gateway, apis_url: str, root: Path, task_id: str,
            codes: list[str], case: str) -> Run:
    name = f"diff-{RUN}-ours-{case}"
    when = initialize(client, apis_url, task_id, name)
    dbs = outputs_path(root, name, task_id) / "dbs"
    try:
        start = read_change_log(dbs)
        state = gateway.scope.set_battle(BattleScope(battle_id=f"diff-{task_id}", token=TOKEN, task_id=task_id,
                                                     interaction="code", task_datetime=when))
        gateway.code.start(state)
        outputs = [asyncio.run(_execute(gateway, code)) for code in codes]
        gateway.code.stop()
        gateway.scope.clear_battle()
        result = verdict(client, task_id)
        return Run(outputs, result, start, agent_changes(start, read_change_log(dbs)))
    finally:
        close(client, root, task_id, name)


def close(client: AppWorldClient, root: Path, task_id: str, name: str) -> None:
    client.close(task_id)
    shutil.rmtree(outputs_path(root, name, task_id).parent.parent, ignore_errors=True)


async def _execute(gateway: Gateway, code: str) -> str:
    result = await gateway.call_tool("execute", {"code": code}, TOKEN)
    structured = result.structured_content or {}
    return structured["output"] if "output" in structured else result.content[0].text  # a refusal: its text


def verdict(client: AppWorldClient, task_id: str) -> tuple[bool, int, int]:
    client.persist_state(task_id)
    evaluation = client.evaluate(task_id)
    return evaluation.success, len(evaluation.passes), len(evaluation.failures)


def normalised(output: str) -> str:
    """Documented normalisations only: none are needed today (tracebacks name `<python-input>` on both sides)."""
    return re.sub(r"\s+$", "", output)


def case_keys(codes: list[str]) -> list[str]:
    """Each code's key in KNOWN: the code, with `#n` on its n-th repeat."""
    seen: dict[str, int] = {}
    keys = []
    for code in codes:
        seen[code] = seen.get(code, 0) + 1
        keys.append(code if seen[code] == 1 else f"{code}#{seen[code]}")
    return keys


class Differences(NamedTuple):
    """Where one case differs from AppWorld's REPL, by what was compared (each a readable message)."""

    outputs: list[str]
    verdict: list[str]
    changes: list[str]


def compare(label: str, codes: list[str], ours: Run, theirs: Run) -> Differences:
    outputs = [f"{label} {key!r}:\n  ours:     {mine[:300]!r}\n  appworld: {oracle[:300]!r}"
               for key, mine, oracle in zip(case_keys(codes), ours.outputs, theirs.outputs)
               if normalised(mine) != normalised(oracle) and key not in KNOWN]
    verdicts = ([] if ours.verdict == theirs.verdict
                else [f"{label} verdict (success, passed, failed): ours {ours.verdict}, appworld {theirs.verdict}"])
    changes = (diff_change_logs(f"{label} start", ours.start, theirs.start)
               + diff_change_logs(label, ours.changes, theirs.changes))
    return Differences(outputs, verdicts, changes)


def test_snippets_match_appworlds_repl(world: tuple[AppWorldClient, Gateway, str], diff_settings: Settings) -> None:
    client, gateway, apis_url = world
    root = diff_settings.appworld_root
    task_id = WorldData(root).split("dev")[0]
    theirs = appworld_run(client, apis_url, root, task_id, SNIPPETS, "snippets")
    ours = our_run(client, gateway, apis_url, root, task_id, SNIPPETS, "snippets")
    assert len(ours.outputs) == len(theirs.outputs) == len(SNIPPETS)
    assert theirs.outputs[1] == "42\n"
    assert f"timed out after {TIMEOUT_S} seconds" in theirs.outputs[SNIPPETS.index("while True:\n    pass")]
    assert theirs.changes["supervisor"], "complete_task left no change in AppWorld's log: the log reader reads nothing"
    assert theirs.excised == 1, "AppWorld's second complete_task no longer overwrites the answer (B6): revisit KNOWN"
    found = compare("snippet", SNIPPETS, ours, theirs)
    print(f"\nsnippets: {len(SNIPPETS) - len(found.outputs)}/{len(SNIPPETS)} outputs match AppWorld's REPL "
          f"({len(KNOWN)} documented difference(s)); verdict {'matches' if not found.verdict else 'DIFFERS'}; "
          f"DB change log {'matches' if not found.changes else 'DIFFERS'} ({count(ours.changes)} statement(s); "
          f"{theirs.excised} of AppWorld's excised, from the documented difference)")
    assert not any(found), "\n".join(found.outputs + found.verdict + found.changes)


def test_every_reference_solution_matches_appworlds_repl(world: tuple[AppWorldClient, Gateway, str],
                                                         diff_settings: Settings) -> None:
    client, gateway, apis_url = world
    root = diff_settings.appworld_root
    data = WorldData(root)
    task_ids = sorted({t for split in data.splits() for t in data.split(split)})
    matched, problems, statements = Counter(), [], 0
    for task_id in task_ids:
        code = [data.solution_source(task_id).rstrip() + "\n\nsolution(apis, requester)\n"]
        theirs = appworld_run(client, apis_url, root, task_id, code, task_id)
        ours = our_run(client, gateway, apis_url, root, task_id, code, task_id)
        assert len(ours.outputs) == len(theirs.outputs) == 1
        assert count(theirs.changes), f"{task_id}: the reference solution left no change in AppWorld's log"
        found = compare(task_id, code, ours, theirs)
        matched.update({field: not differences for field, differences in found._asdict().items()})
        matched["all"] += not any(found)
        problems += found.outputs + found.verdict + found.changes
        statements += count(theirs.changes)
    total = len(task_ids)
    print(f"\nreference solutions: {matched['all']}/{total} match AppWorld's REPL "
          f"(outputs {matched['outputs']}/{total}, verdicts {matched['verdict']}/{total}, "
          f"DB change logs {matched['changes']}/{total}: {statements} statement(s) compared)")
    assert not problems, "\n".join(problems)


AFTER_COMPLETION = {
    "work after completion": "apis.supervisor.complete_task()\nprint(apis.supervisor.show_profile()['email'])\n"
                             "print(len(apis.supervisor.show_account_passwords()))",
    "a second completion with another answer": "apis.supervisor.complete_task(answer='first')\n"
                                               "apis.supervisor.complete_task(answer='second')\nprint('after')",
}
"""Executions that go on after `complete_task` (AppWorld's step is the execution: they act and are judged)."""


def completed_first(solution: str) -> str:
    """Both in one execution: complete the task first (no answer), then do its work, which ends with a second
    complete_task carrying the real answer (the reference solution's own)."""
    return "apis.supervisor.complete_task()\n" + solution.rstrip() + "\n\nsolution(apis, requester)\nprint('done')\n"


def test_work_after_complete_task_in_one_execution_matches_appworlds_repl(
        world: tuple[AppWorldClient, Gateway, str], diff_settings: Settings) -> None:
    client, gateway, apis_url = world
    root = diff_settings.appworld_root
    data = WorldData(root)
    cases = [(label, data.split("dev")[0], code) for label, code in AFTER_COMPLETION.items()]
    cases += [(f"completed first, then the work of {task_id}", task_id, completed_first(data.solution_source(task_id)))
              for task_id in sorted({data.split(split)[0] for split in ("dev", "test", "train")})]
    problems, matched, passed = [], 0, 0
    for number, (label, task_id, code) in enumerate(cases):
        theirs = appworld_run(client, apis_url, root, task_id, [code], f"after-{number}")
        ours = our_run(client, gateway, apis_url, root, task_id, [code], f"after-{number}")
        found = compare(label, [code], ours, theirs)
        problems += found.outputs + found.verdict + found.changes
        matched += not any(found)
        passed += theirs.verdict[0]
        assert theirs.changes.get("supervisor"), f"{label}: AppWorld's change log shows no completion"
    print(f"\nwork after complete_task in one execution: {matched}/{len(cases)} cases match AppWorld's REPL "
          f"(outputs, verdict, DB change log); AppWorld passed {passed} of them")
    assert not problems, "\n".join(problems)
    assert passed >= 2, "the solutions run after an early complete_task no longer pass in AppWorld: revisit the cases"


def test_a_different_db_change_is_caught(world: tuple[AppWorldClient, Gateway, str], diff_settings: Settings) -> None:
    """The change-log comparison can fail: the two sides deliberately complete the task with different answers."""
    client, gateway, apis_url = world
    root = diff_settings.appworld_root
    task_id = WorldData(root).split("dev")[0]
    theirs = appworld_run(client, apis_url, root, task_id, ["apis.supervisor.complete_task(answer='from-appworld')"],
                          "negative")
    ours = our_run(client, gateway, apis_url, root, task_id, ["apis.supervisor.complete_task(answer='from-ours')"],
                   "negative")
    found = compare("negative", ["complete_task"], ours, theirs)
    assert not found.outputs and not found.verdict  # both "Execution successful.", both judged the same
    assert len(found.changes) == 1 and "negative change log of supervisor" in found.changes[0], found.changes
    assert "\n  -" in found.changes[0] and "from-appworld" in found.changes[0]
    assert "\n  +" in found.changes[0] and "from-ours" in found.changes[0]
