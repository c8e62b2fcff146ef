"""The battle trace end to end: real servers, gateway, sandbox and Blues via `appworld-green eval` (MCP path).

Each battle's folder must hold `trace.jsonl` and `trace.html`: the exact task message (its MCP token
scrubbed), every call with its arguments and the result returned (as many as the call log, same `seq`),
in code mode every execution's code and the exact output the agent saw (as many as the executions log),
refusals, the end, the verdict with each test, and the world's changes; `report.html` links each row to
the page, `trace` prints it verdict first, and no secret is in any of these files.
"""

from __future__ import annotations

import json
import re
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from code_llm_script import API_KEY, RAISES, SOLVES, TASK, ScriptedRun, last_user_message
from green_agent.models.eval_run import EvalResults
from green_agent.trace.reader import read_trace
from kernel.settings import load_settings
from shared_evals import SharedEval
from test_batch_e2e import CLI, cli_env
from test_scope_policy_e2e import result_of, run_eval

pytestmark = pytest.mark.e2e
PARSE_IO = ("import json, sys\nfrom appworld.environment import AppWorld\n"
            "print(json.dumps(AppWorld.parse_environment_io_log(file_path=sys.argv[1])))")
LEAKS = [re.compile(r"/b/(?!\[REDACTED\])[A-Za-z0-9_-]{8,}"),  # a gateway token URL
         re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # a JWT (AppWorld's access tokens)
         re.compile(r'\\?"(?:password|access_token)\\?":\s*\\?"(?!\[REDACTED\])'),  # a credential value
         re.compile(re.escape(API_KEY))]


def battle_dir(out: Path, results: EvalResults, task_id: str) -> Path:
    return out / Path(next(r for r in results.rows if r.task_id == task_id).result_path).parent


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


def assert_no_secret(*files: Path) -> None:
    for file in files:
        text = file.read_text()
        for leak in LEAKS:
            assert not leak.search(text), f"{file.name}: {leak.pattern} -> {leak.search(text).group(0)[:80]!r}"


def assert_story(folder: Path, task_id: str) -> list:
    """What every traced battle holds; returns its records."""
    records = read_trace(folder / "trace.jsonl")
    kinds = [r.kind for r in records]
    result = json.loads((folder / "result.json").read_text())
    message = next(r for r in records if r.kind == "task_message")
    assert f"AppWorld task id: {task_id}" in message.text and result["instruction"] in message.text
    assert "/b/[REDACTED]/mcp" in message.text
    calls = jsonl(folder / "mcp_calls.jsonl")
    traced = [r for r in records if r.kind == "tool_call"]
    assert [r.seq for r in traced] == [c["seq"] for c in calls] and [r.tool for r in traced] == [
        c["tool_name"] for c in calls]
    assert all(r.result for r in traced)
    verdict = next(r for r in records if r.kind == "verdict")
    evaluation = result["evaluation"]
    assert (verdict.winner, verdict.outcome) == (result["winner"], result["outcome"])
    assert len(verdict.tests) == evaluation["num_tests"]
    assert sum(t.passed for t in verdict.tests) == len(evaluation["passes"])
    assert kinds.index("task_message") < kinds.index("end") < kinds.index("verdict")
    assert "world_changes" in kinds and "end" in kinds
    page = (folder / "trace.html").read_text()
    assert page.index('id="verdict"') < page.index('id="timeline"') and "<script" not in page
    assert_no_secret(folder / "trace.jsonl", folder / "trace.html")
    return records


def test_a_tools_battle_keeps_its_story_and_the_report_links_it(tmp_path: Path, appworld_root: Path) -> None:
    out = tmp_path / "tools"
    results = run_eval(appworld_root, tmp_path, "tools", ["f0a1c01_1"])
    folder = battle_dir(out, results, "f0a1c01_1")
    records = assert_story(folder, "f0a1c01_1")
    login = next(r for r in records if r.tool == "simple_note__login")
    assert login.arguments["password"] == "[REDACTED]" and "[REDACTED]" in login.result
    answer = next(r for r in records if r.tool == "supervisor__complete_task")
    assert answer.arguments == {"answer": 13} and answer.ok
    reply = next(r for r in records if r.kind == "agent_reply")
    assert "complete_task was called" in reply.text
    changes = next(r for r in records if r.kind == "world_changes").changes
    # a question changes nothing but the task's own row (complete_task)
    assert [(c.app, c.table, c.changed) for c in changes] == [("supervisor", "tasks", 1)]
    assert 'href="tasks/f0a1c01_1/trace.html"' in (out / "report.html").read_text()
    printed = subprocess.run([CLI, "trace", str(folder)], capture_output=True, text=True, timeout=120,
                             env={**cli_env(appworld_root, tmp_path), "COLUMNS": "140"})
    assert printed.returncode == 0, printed.stderr[-2000:]
    assert printed.stdout.index("The agent under test won") < printed.stdout.index("simple_note__login")
    assert_no_secret(out / "report.html")


def test_a_code_battle_keeps_each_executions_code_and_output(scripted_code_eval: ScriptedRun) -> None:
    out, requests = scripted_code_eval.out, scripted_code_eval.chat_bodies
    results = EvalResults.model_validate_json((out / "results.json").read_text())
    folder = battle_dir(out, results, TASK)
    records = assert_story(folder, TASK)
    executions = [r for r in records if r.kind == "execution"]
    assert len(executions) == len(jsonl(folder / "mcp_executions.jsonl")) == 2
    failed, solved = executions
    assert failed.text.strip() in RAISES and solved.text.strip() in SOLVES  # the code as the agent wrote it
    seen = last_user_message(requests[1])  # what the agent was fed back after its first execution
    assert not failed.ok and seen == f"Output:\n{failed.result}" and "KeyError: 'e_mail'" in failed.result
    assert solved.ok and solved.api_calls == sum(r.kind == "tool_call" and solved.at <= r.at for r in records)
    for execution in executions:  # its calls fall in its own time (from when its REPL was ready), as the page nests them
        ends = execution.at + timedelta(milliseconds=execution.duration_ms or 0)
        assert execution.api_calls == sum(r.kind == "tool_call" and execution.at <= r.at <= ends for r in records)
    page = (folder / "trace.html").read_text()
    assert "KeyError: &#x27;e_mail&#x27;" in page and "apis.simple_note.search_notes" in page
    parsed = subprocess.run([str(load_settings().appworld_python), "-c", PARSE_IO, str(folder / "appworld" / "logs"
                                                                                     / "environment_io.md")],
                            capture_output=True, text=True, timeout=120)  # AppWorld's own reader of its log
    assert parsed.returncode == 0, parsed.stderr[-2000:]
    assert json.loads(parsed.stdout) == [{"input": e.text.strip(), "output": e.result} for e in executions]


def test_an_enforced_scope_refusal_inside_code_is_in_the_trace(enforced_code_eval: SharedEval) -> None:
    out, results = enforced_code_eval  # shared with tests/test_code_mode_e2e.py (conftest), read only
    result = result_of(results, out, "f0f4d44_2")
    assert result.outcome == "scope_error"
    records = assert_story(battle_dir(out, results, "f0f4d44_2"), "f0f4d44_2")
    refused = [r for r in records if r.kind == "tool_call" and r.in_scope is False]
    assert refused and all("outside this battle's scope" in r.error for r in refused)
    assert any("outside this battle's scope" in (r.result or "") for r in records if r.kind == "execution")
