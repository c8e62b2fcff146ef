"""No free re-roll by a 500: calls that make AppWorld's APIs server raise are the agent's API errors, end to end.

`amazon.show_product(product_id=10**30)` makes the real APIs server raise (SQLite's integer overflow), so uvicorn
answers 500 and then closes the keep-alive connection. The forwarder's health probe once rode that closing
pooled connection, read "no answer", and charged the 500 to us: the battle became an infrastructure error and
was retried, a second attempt for an agent that was losing (22 of 40 such calls over MCP). Here a real A2A Blue
makes 40 such calls in tools mode (MCP tools) and in code mode (`apis` in the sandboxed REPL), then gives up
without an answer, through `appworld-green eval` on its own slot: the battle is judged the Blue's loss in one
attempt, and the call log holds 40 calls answered 500 with no `upstream_fault`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import requests

from faults_support import MCP_HEADERS, blue_server, complete_through_gateway, first_task, mcp_call
from green_agent.models.eval_run import EvalResults
from test_batch_e2e import CLI, assert_nothing_left, cli_env, slot_ports

pytestmark = pytest.mark.e2e
CALLS = 40
TOO_LARGE_ID = 10**30
"""Beyond SQLite's 64-bit INTEGER: AppWorld's show_product raises ("Python int too large to convert to SQLite INTEGER")
and answers HTTP 500 "Internal Server Error"; ids up to 2**63 - 1 are answered 409 (no such product)."""
CODE = f"""errors = []
for _ in range({CALLS}):
    try:
        apis.amazon.show_product(product_id={TOO_LARGE_ID})
    except Exception as exc:
        errors.append(str(exc))
print(len(errors), len(set(errors)), errors[0])"""


def _mcp_url(text: str) -> str:
    prefix = "MCP endpoint (Streamable HTTP): "
    return next(line.removeprefix(prefix) for line in text.splitlines() if line.startswith(prefix))


def _call(url: str, i: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return requests.post(url, json=mcp_call(i, name, arguments), headers=MCP_HEADERS, timeout=60).json()


def _tools_blue(seen: list[dict[str, Any]]) -> Any:
    async def blue(text: str) -> str:
        url = _mcp_url(text)
        for i in range(CALLS):
            seen.append(await asyncio.to_thread(_call, url, i, "amazon__show_product", {"product_id": TOO_LARGE_ID}))
        await asyncio.to_thread(complete_through_gateway, text)  # gives up: no answer
        return "done"
    return blue


def _code_blue(seen: list[dict[str, Any]]) -> Any:
    async def blue(text: str) -> str:
        url = _mcp_url(text)
        seen.append(await asyncio.to_thread(_call, url, 1, "execute", {"code": CODE}))
        await asyncio.to_thread(_call, url, 2, "execute", {"code": "apis.supervisor.complete_task()"})
        return "done"
    return blue


def run_eval(appworld_root: Path, tmp_path: Path, interaction: str) -> tuple[EvalResults, list[dict[str, Any]],
                                                                             list[dict[str, Any]], Path]:
    """One battle of the 40-call Blue through `appworld-green eval` on a slot of its own: the results, what the
    Blue was answered, and the battle's call records."""
    out, (ports_arg, ports), seen, battles = tmp_path / "run", slot_ports(1), [], []
    make = _tools_blue if interaction == "tools" else _code_blue
    inner = make(seen)

    async def counted(text: str) -> str:
        battles.append(text)
        return await inner(text)

    with blue_server(f"500s Blue ({interaction})", counted) as server:
        argv = [CLI, "eval", "--task-ids", first_task(appworld_root), "--blue", server.url, "--predictor", "none",
                "--interaction", interaction, "--workers", "1", "--out", str(out), "--slot-ports", ports_arg,
                "--deadline", "60"]
        done = subprocess.run(argv, env=cli_env(appworld_root, tmp_path), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(battles) == 1, "the battle was retried"
    assert_nothing_left(ports)
    results = EvalResults.model_validate_json((out / "results.json").read_text())
    calls = [json.loads(line) for path in out.rglob("mcp_calls.jsonl") for line in path.read_text().splitlines()]
    return results, seen, [c for c in calls if c.get("tool_name") == "amazon__show_product"], out


def assert_charged_to_the_agent(results: EvalResults, calls: list[dict[str, Any]]) -> None:
    row = results.rows[0]
    assert (row.outcome, row.attempts, results.aggregates.infra_errors) == ("failed", 1, 0), row.reason()
    assert [(c["status_code"], c.get("upstream_fault")) for c in calls] == [(500, None)] * CALLS, calls[:3]


def test_40_calls_appworld_answers_500_are_the_agents_in_tools_mode(appworld_root: Path, tmp_path: Path) -> None:
    results, seen, calls, _ = run_eval(appworld_root, tmp_path, "tools")
    assert_charged_to_the_agent(results, calls)
    responses = [reply["result"]["structuredContent"]["response"] for reply in seen]
    assert responses == [{"message": "Internal Server Error", "is_error": True}] * CALLS, responses[:3]


def test_40_calls_appworld_answers_500_are_the_agents_in_code_mode(appworld_root: Path, tmp_path: Path) -> None:
    results, seen, calls, _ = run_eval(appworld_root, tmp_path, "code")
    assert_charged_to_the_agent(results, calls)
    output = seen[0]["result"]["structuredContent"]["output"]
    # every call raised AppWorld's requester's exception for a 500, the same each time
    assert output == f'{CALLS} 1 Response status code is 500:\n{{"message":"Internal Server Error"}}\n', output
