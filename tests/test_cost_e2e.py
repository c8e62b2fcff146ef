"""Cost per task end to end: the `llm` purple on the scripted OpenAI stand-in reports the API's token counts, the
Green prices and sums them with its own, and cost per task and per solved task reach result.json, results.json,
the report, `compare` and the artifact; a purple reporting hostile usage keeps its verdict and gets "unknown".

Real processes on loopback: `appworld-green serve`, the `llm` purple (tests/fake_openai.py as its model, the
OpenAI API's `usage` in every completion) and tests/mixed_purple.py (the reference solution, a chosen `usage`).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from a2a_support import CLI, Server, env, green  # noqa: F401 - fixtures
from fake_openai import FakeOpenAI, FakeReply
from green_agent.a2a.local_runner import AgentEntry, Scenario, send_request
from green_agent.runtime.processes import ManagedProcess
from green_agent.scoping.pricing import approximate_cost_usd
from kernel.ports import free_port
from kernel.settings import REPO_ROOT
from kernel.world_data import WorldData

pytestmark = pytest.mark.e2e


def started(argv: list[str], env: dict[str, str], log: Path) -> tuple[ManagedProcess, str]:
    port = free_port()
    return ManagedProcess(argv[0], [*argv, "--port", str(port)], log, env=env), f"http://127.0.0.1:{port}"


def assess(green: str, purple: str, tasks: list[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    scenario = Scenario(green_agent=AgentEntry(endpoint=green),
                        participants=[AgentEntry(endpoint=purple, role="agent")],
                        config={"task_ids": tasks, "workers": 1, "predictor": "ground_truth"})
    state, results = asyncio.run(send_request(scenario))
    assert state == "completed"
    data = results[0]
    return data, json.loads((Path(data["run_dir"]) / "results.json").read_text())["rows"]


def test_the_llm_purples_cost_per_solved_task_reaches_every_output(green: Server, env: dict[str, str], mini_tasks:
                                                                    tuple[str, str], appworld_root: Path,
                                                                    tmp_path: Path) -> None:
    action, question = mini_tasks
    answer = json.loads((WorldData(appworld_root).task_dir(question) / "ground_truth" / "answer.json").read_text())
    script = [FakeReply(tool_call=("supervisor__complete_task", {"answer": answer})),  # the question: solved
              FakeReply(tool_call=("supervisor__show_profile", {})),                     # the action task: not
              FakeReply(tool_call=("supervisor__complete_task", {"status": "success"}))]
    with FakeOpenAI(chat_replies=script) as fake:
        llm_env = {**env, "OPENAI_API_KEY": "sk-test-cost", "OPENAI_BASE_URL": fake.base_url}
        process, url = started([CLI, "purple", "--kind", "llm", "--model", "gpt-4o-mini"], llm_env, tmp_path / "l.log")
        with process.running(f"{url}/.well-known/agent-card.json", timeout_s=60):
            data, rows = assess(green.url, url, [question, action])
    assert data["score"] == 1 and data["task_rewards"] == {question: 1, action: 0}
    assert all(r["purple_usage_note"] == "priced by the Green at gpt-4o-mini's list price" for r in rows)
    expected = sum(approximate_cost_usd("gpt-4o-mini", r["purple_input_tokens"], r["purple_output_tokens"])
                   for r in rows)
    assert all(r["purple_input_tokens"] > 0 for r in rows)
    cost = data["cost"]
    assert cost["purple_cost_usd"] == pytest.approx(expected, abs=1e-6) and cost["purple_cost_usd"] > 0
    assert cost["total_cost_usd"] == pytest.approx(cost["purple_cost_usd"] + cost["green_cost_usd"], abs=1e-6)
    assert cost["cost_per_solved_task_usd"] == pytest.approx(cost["total_cost_usd"], abs=1e-6)  # one task solved
    assert cost["cost_per_task_usd"] == pytest.approx(cost["total_cost_usd"] / 2, abs=1e-6)
    run = Path(data["run_dir"])
    result = json.loads((run / "tasks" / question / "result.json").read_text())
    usage = result["completion"]["bridge_report"]["usage"]
    assert usage["model"] == "gpt-4o-mini" and usage["replies"] == usage["reported"] == 1
    report = (run / "report.html").read_text()
    assert 'id="headline-cost-per-solved-task"' in report and f"${cost['cost_per_solved_task_usd']:.4f}" in report
    # compare: the same run on both sides shows its cost per solved task
    done = subprocess.run([CLI, "compare", str(run), str(run)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"${cost['cost_per_solved_task_usd']:.4f}/solved task" in done.stdout


def test_hostile_usage_never_changes_a_verdict_and_leaves_the_cost_unknown(green: Server, env: dict[str, str],
                                                                          appworld_root: Path, tmp_path: Path) -> None:
    tasks = WorldData(appworld_root).split("dev")[:3]
    hostile = dict(zip(tasks, ({"input_tokens": -5, "cost_usd": -1.0}, {"output_tokens": 10**15, "cost_usd": 1e12},
                               {"input_tokens": "all of them", "cost_usd": "free"})))
    process, url = started([sys.executable, str(REPO_ROOT / "tests" / "mixed_purple.py"), "--solve", ",".join(tasks),
                            "--usage-by-task", json.dumps(hostile)], env, tmp_path / "m.log")
    with process.running(f"{url}/.well-known/agent-card.json", timeout_s=60):
        data, rows = assess(green.url, url, tasks)
    assert data["tgc"] == 100.0 and data["score"] == 3  # the reference solution passes whatever it reports
    assert data["cost"]["total_cost_usd"] is None and data["cost"]["cost_per_solved_task_usd"] is None
    assert data["cost"]["unknown_because"].startswith("3 of 3 battle(s) without a known purple cost")
    notes = [r["purple_usage_note"] for r in rows]
    assert notes == ["usage refused: `usage.input_tokens` is out of bounds (negative or too large)",
                     "usage refused: `usage.output_tokens` is out of bounds (negative or too large)",
                     "usage refused: `usage.input_tokens` is not a finite number"]
    assert all(r["purple_cost_usd"] is None and r["outcome"] == "passed" for r in rows)
    assert all(t["cost_usd"] is None for t in data["task_results"])
