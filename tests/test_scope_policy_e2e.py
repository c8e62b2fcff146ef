"""Scope policies end to end: `appworld-green eval` with the real servers, gateway and reference Blue.

On f0f4d44_2 the lexical predictor leaves out gold APIs (gmail.show_thread, venmo.create_transaction):
under `enforce` the gateway refuses them, the battle is graded `scope_error` and kept out of TGC;
under `advise` (the default) the same calls are served, logged `in_scope: false`, and Blue wins.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from green_agent.models.eval_run import EvalResults
from green_agent.models.result import RESULT_SCHEMA_VERSION, BattleResult
from shared_evals import SharedEval
from test_batch_e2e import CLI, assert_nothing_left, cli_env, slot_ports

pytestmark = pytest.mark.e2e
MISSED = ["gmail.show_thread", "venmo.create_transaction"]


def run_eval(root: Path, tmp: Path, name: str, tasks: list[str], *extra: str,
             deadline: str | None = "120") -> EvalResults:
    """`eval` of `tasks` into `tmp/name` (the reference Blue, lexical scope, one slot); `deadline` None: the
    standard deadline (a custom one makes the run custom, which rejudge's test of the shared run checks)."""
    out = tmp / name
    ports_arg, ports = slot_ports(1)
    argv = [CLI, "eval", "--task-ids", ",".join(tasks), "--blue", "reference", "--predictor", "lexical",
            "--workers", "1", "--out", str(out), "--slot-ports", ports_arg,
            *(["--deadline", deadline] if deadline else []), *extra]
    proc = subprocess.run(argv, capture_output=True, text=True, env=cli_env(root, tmp), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_nothing_left(ports)
    return EvalResults.model_validate_json((out / "results.json").read_text())


def result_of(results: EvalResults, out: Path, task_id: str) -> BattleResult:
    row = next(r for r in results.rows if r.task_id == task_id)
    return BattleResult.model_validate_json((out / row.result_path).read_text())


def test_enforced_scope_miss_is_a_scope_error_not_passed_and_not_the_blues_loss(
        enforced_tools_eval: SharedEval) -> None:
    out, results = enforced_tools_eval
    missed = result_of(results, out, "f0f4d44_2")
    assert missed.scope.missed_gold == MISSED, "precondition: lexical leaves these gold APIs out of f0f4d44_2"
    assert (missed.outcome, missed.winner, missed.scope.policy) == ("scope_error", None, "enforce")
    assert missed.scope.refused_gold and set(missed.scope.refused_gold) <= set(MISSED)
    assert all(api in missed.reason for api in missed.scope.refused_gold) and missed.schema_version == RESULT_SCHEMA_VERSION
    agg = results.aggregates
    assert (agg.judged, agg.passed, agg.scope_errors, agg.infra_errors) == (1, 1, 1, 0)
    # over the task set the unjudged task is not passed (the run says incomplete); the judged-only figure beside
    assert (agg.tgc, agg.tgc_judged, agg.incomplete) == (50.0, 100.0, True)
    assert results.manifest.config.scope_policy == "enforce"
    assert agg.scenarios_unjudged == 1 and agg.sgc == 0.0 and agg.sgc_judged is None
    summary = json.loads((out / "agentbeats_results.json").read_text())["results"][0]
    assert (summary["scope_errors"], summary["scope_policy"], summary["tgc"]) == (1, "enforce", 50.0)
    html = (out / "report.html").read_text()
    assert "scope errors (not passed, not the Blue&#x27;s loss)" in html and "Scope miss: gold API(s) not in the scope: " + ", ".join(MISSED) in html


def test_advised_scope_serves_the_missed_apis_and_logs_them_out_of_scope(tmp_path: Path, appworld_root: Path) -> None:
    results = run_eval(appworld_root, tmp_path, "advise", ["f0f4d44_2"])
    result = result_of(results, tmp_path / "advise", "f0f4d44_2")
    assert (result.outcome, result.winner, result.scope.policy) == ("passed", "blue_agent", "advise")
    assert result.scope.missed_gold == MISSED and result.scope.refused_gold == []
    assert result.scope.out_of_scope_calls == result.trajectory.out_of_scope_calls >= 2
    calls = [json.loads(line) for line in (tmp_path / "advise" / Path(results.rows[0].result_path).parent
                                           / "mcp_calls.jsonl").read_text().splitlines()]
    outside = {(c["tool_name"], c["success"]) for c in calls if not c["in_scope"]}
    assert {("gmail__show_thread", True), ("venmo__create_transaction", True)} <= outside
    assert results.aggregates.tgc == 100.0
