"""Differential test: AppWorld's own REPL is the oracle for ours.

The same code runs (a) through AppWorld's `POST /execute` on a world initialised with `remote_apis_url`, as
AppWorld's own agents run, and (b) through our sandboxed REPL via the gateway's core (`Gateway.call_tool`
of `execute`, the per-battle forwarding path, the real APIs server) on an identical fresh world of the same
slot. Compared: every output string (byte for byte, after the documented normalisations in
`normalised`), and the end state as AppWorld's evaluator judges it (success, passed and failed
requirements: the evaluator compares the DB changes against the expected ones).

Corpus: every reference solution of the pack (run as `solution(apis, requester)`), and snippets that
print, raise, mistype, loop past a short timeout (2 s on both sides), use datetime, define and reuse
variables, call a missing API, call with a wrong argument, call complete_task twice. The match count is
printed (`-s`) and asserted; the known differences are documented in docs/quirks.md and listed in KNOWN.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from green_agent.appworld_client import AppWorldClient
from green_agent.runtime.slot import SlotSpec, WorldSlot
from kernel.ports import free_port
from kernel.settings import Settings, load_settings
from kernel.world_data import WorldData
from mcp_gateway.code.sandbox import SandboxLimits
from mcp_gateway.code_mode import CodeRunner
from mcp_gateway.gateway import Gateway
from mcp_gateway.models import BattleScope, GatewayConfig
from mcp_gateway.server import build_gateway

pytestmark = pytest.mark.e2e
TIMEOUT_S = 2
TOKEN = "t" * 40
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
    "apis.supervisor.complete_task()",
]
KNOWN = {
    "apis.supervisor.complete_task()#2": "the gateway ends the episode at the first complete_task: later executions "
                                         "are refused (docs/quirks.md)",
}


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
        gateway.code = CodeRunner(gateway.specs, config.log_path, settings.appworld_python,
                                  limits=SandboxLimits(timeout_s=TIMEOUT_S))
        client = AppWorldClient(slot.urls.env_url, credentials=slot.credentials)
        yield client, gateway, slot.urls.apis_url
        gateway.code.shutdown()
        gateway.forwarder.close()


def initialize(client: AppWorldClient, apis_url: str, task_id: str, name: str) -> str:
    """A fresh world of `task_id` in remote-APIs mode, AppWorld's REPL timing out after TIMEOUT_S; its datetime."""
    body = {"task_id": task_id, "experiment_name": name, "timeout_seconds": TIMEOUT_S,
            "remote_apis_url": client.credentials.guarded_url(apis_url)}
    return client._request("POST", "/initialize", body, timeout_s=120)["datetime"]


def appworld_run(client: AppWorldClient, apis_url: str, task_id: str, codes: list[str]) -> tuple[list[str], tuple]:
    initialize(client, apis_url, task_id, f"diff-appworld-{task_id}")
    try:
        outputs = [client.execute(task_id, code) for code in codes]
        return outputs, verdict(client, task_id)
    finally:
        client.close(task_id)


def our_run(client: AppWorldClient, gateway: Gateway, apis_url: str, task_id: str,
            codes: list[str]) -> tuple[list[str], tuple]:
    when = initialize(client, apis_url, task_id, f"diff-ours-{task_id}")
    try:
        state = gateway.scope.set_battle(BattleScope(battle_id=f"diff-{task_id}", token=TOKEN, task_id=task_id,
                                                     interaction="code", task_datetime=when))
        gateway.code.start(state)
        outputs = [asyncio.run(_execute(gateway, code)) for code in codes]
        gateway.code.stop()
        gateway.scope.clear_battle()
        return outputs, verdict(client, task_id)
    finally:
        client.close(task_id)


async def _execute(gateway: Gateway, code: str) -> str:
    result = await gateway.call_tool("execute", {"code": code}, TOKEN)
    structured = result.structured_content or {}
    return structured["output"] if "output" in structured else result.content[0].text  # a refusal: its text


def verdict(client: AppWorldClient, task_id: str) -> tuple:
    client.persist_state(task_id)
    evaluation = client.evaluate(task_id)
    return evaluation.success, len(evaluation.passes), len(evaluation.failures)


def normalised(output: str) -> str:
    """Documented normalisations only: none are needed today (tracebacks name `<python-input>` on both sides)."""
    return re.sub(r"\s+$", "", output)


def compare(label: str, ours: list[str], theirs: list[str], codes: list[str]) -> list[str]:
    differences = []
    seen: dict[str, int] = {}
    for code, mine, oracle in zip(codes, ours, theirs):
        seen[code] = seen.get(code, 0) + 1
        key = code if seen[code] == 1 else f"{code}#{seen[code]}"
        if normalised(mine) != normalised(oracle) and key not in KNOWN:
            differences.append(f"{label} {key!r}:\n  ours:     {mine[:300]!r}\n  appworld: {oracle[:300]!r}")
    return differences


def test_snippets_match_appworlds_repl(world: tuple[AppWorldClient, Gateway, str], diff_settings: Settings) -> None:
    client, gateway, apis_url = world
    task_id = WorldData(diff_settings.appworld_root).split("dev")[0]
    theirs, their_verdict = appworld_run(client, apis_url, task_id, SNIPPETS)
    ours, our_verdict = our_run(client, gateway, apis_url, task_id, SNIPPETS)
    assert len(ours) == len(theirs) == len(SNIPPETS)
    assert theirs[1] == "42\n" and "timed out after 2 seconds" in theirs[SNIPPETS.index("while True:\n    pass")]
    differences = compare("snippet", ours, theirs, SNIPPETS)
    print(f"\nsnippets: {len(SNIPPETS) - len(differences)}/{len(SNIPPETS)} outputs match AppWorld's REPL "
          f"({len(KNOWN)} documented difference(s))")
    assert not differences, "\n".join(differences)
    assert our_verdict == their_verdict


def test_every_reference_solution_matches_appworlds_repl(world: tuple[AppWorldClient, Gateway, str],
                                                         diff_settings: Settings) -> None:
    client, gateway, apis_url = world
    data = WorldData(diff_settings.appworld_root)
    task_ids = sorted({t for split in data.splits() for t in data.split(split)})
    matches, problems = 0, []
    for task_id in task_ids:
        code = [data.solution_source(task_id).rstrip() + "\n\nsolution(apis, requester)\n"]
        theirs, their_verdict = appworld_run(client, apis_url, task_id, code)
        ours, our_verdict = our_run(client, gateway, apis_url, task_id, code)
        assert len(ours) == len(theirs) == 1
        found = compare(task_id, ours, theirs, code)
        if our_verdict != their_verdict:
            found.append(f"{task_id} verdict: ours {our_verdict}, appworld {their_verdict}")
        problems += found
        matches += not found
    print(f"\nreference solutions: {matches}/{len(task_ids)} match AppWorld's REPL (output and verdict)")
    assert not problems, "\n".join(problems)
