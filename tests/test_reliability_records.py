"""A reliability run's records: the trajectory's fault figures from call records (`green_agent.trajectory.faults`),
a row's faults block and the run's totals (`green_agent.reliability.faults`), the run marked custom
(`green_agent.batch.standard`), and the retrying Blue's reading of a failure (`blue_agent.retry`).

Built from hand-made call records and results (the gateway's own records are checked end to end in
test_reliability_e2e.py).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from blue_agent.retry import retrying, transient_message, wait_for
from green_agent.reliability.faults import fault_aggregates, row_faults
from green_agent.batch.standard import custom_settings
from green_agent.models.eval_run import EvalRow, RunConfig
from green_agent.models.result import BattleResult, VersionsRecord
from green_agent.trajectory import analyze_log
from kernel.call_log import CallLogWriter
from kernel.call_record import CallRecord, InjectedFault
from kernel.fault_spec import parse_fault_spec

AT = datetime(2024, 5, 1, tzinfo=timezone.utc)


def record(tool: str, success: bool, fault: str | None = None, position: int = 1,
           delivered: str | None = "what the agent got") -> CallRecord:
    return CallRecord(timestamp=AT, battle_id="B", task_id="t_1", tool_name=tool, success=success, duration_ms=1.0,
                      status_code=200 if success else 503,
                      fault=InjectedFault(kind=fault, position=position, delivered=delivered) if fault else None)


def metrics_of(records: list[CallRecord], tmp_path: Path):  # noqa: ANN201
    log = CallLogWriter(tmp_path / "calls.jsonl")
    for r in records:
        log.append(r)
    return analyze_log(tmp_path / "calls.jsonl", battle_id="B")


def test_faults_are_counted_by_kind_recovered_when_the_api_later_succeeds_and_kept_apart_from_errors(
        tmp_path: Path) -> None:
    metrics = metrics_of([
        record("spotify__login", False, "rate_limit", 1), record("spotify__login", False, "error", 2),
        record("spotify__login", True),  # recovers both
        record("spotify__show_song", False, "timeout", 4), record("spotify__show_song", False),  # the agent's own error
        record("gmail__send", False, "timeout", 6, delivered=None),  # its battle ended while it waited
        record("gmail__send", True),
    ], tmp_path)
    assert metrics.faults_injected == {"error": 1, "rate_limit": 1, "timeout": 1}
    assert metrics.faults_recovered == {"error": 1, "rate_limit": 1, "timeout": 0}
    assert metrics.faults_undelivered == 1
    assert [(c.position, c.api, c.kind, c.recovered) for c in metrics.faulted_calls] == [
        (1, "spotify.login", "rate_limit", True), (2, "spotify.login", "error", True),
        (4, "spotify.show_song", "timeout", False)]
    assert (metrics.total_calls, metrics.failed_calls, metrics.successful_calls) == (7, 1, 2)
    assert metrics.failed_calls_per_tool == {"spotify__show_song": 1}


def test_a_run_without_faults_has_empty_fault_figures(tmp_path: Path) -> None:
    metrics = metrics_of([record("spotify__login", False), record("spotify__login", True)], tmp_path)
    assert (metrics.faults_injected, metrics.faulted_calls, metrics.failed_calls) == ({}, [], 1)


def _result(tmp_path: Path, faults: str | None, records: list[CallRecord]) -> BattleResult:
    return BattleResult(battle_id="B", blue="reference", status="completed", outcome="passed", winner="blue_agent",
                        faults=parse_fault_spec(faults) if faults else None, trajectory=metrics_of(records, tmp_path),
                        versions=VersionsRecord(appworld_green="x"), started_at=AT)


def _row(block) -> EvalRow:  # noqa: ANN001
    return EvalRow(task_id="t_1", scenario_id="t", battle_id="B", status="completed", outcome="passed", passed=True,
                   result_path="r", faults=block)


def test_rows_carry_a_faults_block_only_under_a_spec_and_the_run_sums_them_by_kind(tmp_path: Path) -> None:
    faulted = _result(tmp_path / "a", "rate=0.3,seed=1", [record("a__x", False, "error", 1), record("a__x", True),
                                                           record("a__y", False, "timeout", 3)])
    quiet = _result(tmp_path / "b", "rate=0.3,seed=1", [record("a__x", True)])
    plain = _result(tmp_path / "c", None, [record("a__x", True)])
    blocks = [row_faults(r) for r in (faulted, quiet, plain)]
    assert (blocks[0].injected, blocks[0].recovered, len(blocks[0].calls)) == (2, 1, 2)
    assert (blocks[1].injected, blocks[1].calls) == (0, []) and blocks[2] is None
    totals = fault_aggregates([_row(b) for b in blocks])
    assert (totals.injected, totals.recovered) == (2, 1)
    assert {k: (v.injected, v.recovered) for k, v in totals.by_kind.items()} == {"error": (1, 1), "timeout": (1, 0)}
    assert fault_aggregates([_row(None)]) is None


def test_a_run_with_faults_is_custom_and_names_the_spec() -> None:
    config = RunConfig(blue="reference", predictor="lexical", split="dev", deadline_s=1200.0)
    assert custom_settings(config, None) == []
    faulted = config.model_copy(update={"faults": parse_fault_spec("rate=0.3,seed=1")})
    assert custom_settings(faulted, None) == [
        "faults rate=0.3,seed=1,kinds=error+rate_limit+timeout,timeout_s=5,max_consecutive=2: a reliability run, the "
        "gateway answered a planned share of the apps' calls with a fault"]


def test_the_retrying_blue_retries_only_passing_failures_after_their_retry_after() -> None:
    limited = {"response": {"message": "Too many requests (HTTP 429): ... Retry after 1 second(s).", "is_error": True}}
    wrong = {"response": {"message": "Invalid credentials.", "is_error": True}}
    assert transient_message(limited) and wait_for(transient_message(limited)) == 1.0
    assert transient_message(wrong) is None and transient_message({"response": [1]}) is None
    answers = [limited, limited, {"response": {"ok": 1}}]
    slept: list[float] = []
    call = retrying(lambda name, args: answers.pop(0), sleep=slept.append)
    assert call("a__b", {}) == {"response": {"ok": 1}} and slept == [1.0, 1.0]
    always = retrying(lambda name, args: limited, sleep=slept.append)
    assert always("a__b", {}) is limited and len(slept) == 5  # 3 retries, then the failure is the agent's to see
    assert retrying(lambda name, args: wrong, sleep=slept.append)("a__b", {}) is wrong and len(slept) == 5


def test_the_trace_page_shows_an_injected_fault_apart_from_the_agents_own_errors() -> None:
    from green_agent.trace.page import render
    from kernel.trace_record import TraceRecord

    def call(seq: int, fault: str | None, status: int) -> TraceRecord:
        return TraceRecord(at=AT, battle_id="B", kind="tool_call", source="gateway", tool="spotify__login", seq=seq,
                           ok=False, status_code=status, fault=fault, result=f"result {seq}", error="failed")

    page = render([call(1, "rate_limit", 429), call(2, None, 401)])
    injected, own = page.split('data-kind="tool_call"')[1:]
    assert "injected fault: rate_limit 429" in injected and "what the agent received" in injected
    assert "error 401" in own and "injected" not in own
    assert 'class="ev tool_call injected"' in page and 'class="ev tool_call bad"' in page
    assert '<span id="injected-faults">1 injected fault(s)</span>' in page


def test_the_spec_is_fingerprinted_so_a_resume_keeps_the_plan_and_a_run_without_faults_keeps_its_fingerprint() -> None:
    import hashlib
    import json

    from green_agent.batch.checkpoint import digest, fingerprint

    config = RunConfig(blue="reference", predictor="lexical", split="dev", deadline_s=1200.0)
    tasks = ["t_1", "t_2"]
    before = {name: getattr(config, name) for name in ("blue", "predictor", "scope_policy", "split", "trials",
                                                         "deadline_s")} | {"tasks": digest(tasks)}
    assert fingerprint(config, tasks) == hashlib.sha256(json.dumps(before, sort_keys=True).encode()).hexdigest()
    one, again, other = (config.model_copy(update={"faults": parse_fault_spec(s)}) for s in (
        "rate=0.3,seed=1", "seed=1,rate=0.3", "rate=0.3,seed=2"))
    assert fingerprint(one, tasks) == fingerprint(again, tasks) != fingerprint(other, tasks)
    assert fingerprint(one, tasks) != fingerprint(config, tasks)
