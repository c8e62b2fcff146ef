"""Code mode end to end: `appworld-green eval --interaction code` with the real servers, gateway, sandbox and Blues.

The reference Blue sends each task's reference solution as one execution to the gateway's `execute` tool;
the calls its code makes are the gateway's records like any tool call's. The no-op Blue only calls
`apis.supervisor.complete_task()`. Under `enforce`, an API outside the scope fails inside the code (on
f0f4d44_2 the lexical predictor leaves out gold APIs), as an AppWorld API error would. The `llm` Blue, against
the scripted OpenAI-compatible stand-in, reads the traceback of its first code, is corrected once, and wins.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blue_agent.code_react import NO_CODE, SYSTEM_PROMPT
from code_llm_script import TASK, ScriptedRun, last_user_message
from green_agent.models.eval_run import EvalResults
from shared_evals import SharedEval
from test_scope_policy_e2e import result_of, run_eval

pytestmark = pytest.mark.e2e


def executions(out: Path, results: EvalResults) -> list[dict]:
    """The executions log lines of the run's battles (beside the slots' call logs)."""
    ids = {r.battle_id for r in results.rows}
    lines = [json.loads(line) for path in out.rglob("*.executions.jsonl") for line in path.read_text().splitlines()]
    return [line for line in lines if line["battle_id"] in ids]


def test_reference_solutions_win_as_code_and_their_calls_are_logged(tmp_path: Path, appworld_root: Path) -> None:
    results = run_eval(appworld_root, tmp_path, "ref", ["f0a1c01_1", "f0f4d44_2"], "--interaction", "code")
    assert results.aggregates.tgc == 100.0 and results.manifest.config.interaction == "code"
    result = result_of(results, tmp_path / "ref", "f0a1c01_1")
    assert result.interaction == "code" and result.isolation and result.isolation.startswith("bubblewrap")
    calls = [json.loads(line) for line in (tmp_path / "ref" / Path(results.rows[0].result_path).parent
                                           / "mcp_calls.jsonl").read_text().splitlines()]
    names = [c["tool_name"] for c in calls]
    assert "execute" not in names and names[-1] == "supervisor__complete_task" and len(names) >= 4
    assert all(c["battle_id"] == result.battle_id for c in calls)
    code = result.trajectory.code
    assert code is not None and (code.executions, code.failed_executions, code.api_calls) == (1, 0, len(names))


def test_the_noop_blue_loses_in_code_mode(tmp_path: Path, appworld_root: Path) -> None:
    out = tmp_path / "noop"
    results = run_eval(appworld_root, tmp_path, "noop", ["f0a1c01_1"], "--interaction", "code", "--blue", "noop")
    assert results.aggregates.tgc == 0.0
    result = result_of(results, out, "f0a1c01_1")
    assert (result.outcome, result.winner, result.interaction) == ("failed", "green_agent", "code")
    assert result.trajectory is not None and result.trajectory.total_calls == 1


def test_an_enforced_scope_fails_inside_the_code(enforced_code_eval: SharedEval) -> None:
    out, results = enforced_code_eval
    result = result_of(results, out, "f0f4d44_2")
    assert result.outcome == "scope_error" and result.scope.refused_gold
    calls = [json.loads(line) for line in (out / Path(results.rows[0].result_path).parent
                                           / "mcp_calls.jsonl").read_text().splitlines()]
    refused = [c for c in calls if not c["in_scope"]]
    assert refused and "outside this battle's scope" in refused[0]["error"]


def test_the_llm_blue_reads_its_traceback_and_solves_the_task_in_code_mode(scripted_code_eval: ScriptedRun) -> None:
    out, requests = scripted_code_eval.out, scripted_code_eval.chat_bodies
    assert len(requests) == 3 and not [r for r in scripted_code_eval.requests if r["path"].endswith("/responses")]
    assert requests[0]["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT} and "tools" not in requests[0]
    assert f"AppWorld task id: {TASK}" in last_user_message(requests[0])
    fed_back = last_user_message(requests[1])  # the sandbox's traceback, straight from the gateway's execute
    assert fed_back.startswith("Output:\nExecution failed. Traceback:") and "KeyError: 'e_mail'" in fed_back
    assert last_user_message(requests[2]) == NO_CODE
    results = EvalResults.model_validate_json((out / "results.json").read_text())
    result = result_of(results, out, TASK)
    assert (result.outcome, result.interaction) == ("passed", "code"), result.reason
    code = result.trajectory.code
    assert (code.executions, code.failed_executions) == (2, 1)
