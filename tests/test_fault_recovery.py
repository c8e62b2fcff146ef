"""Recovered means redone, retries counted exactly, loud and silent by what the agent received (issue 57).

On call logs written here (`green_agent.trajectory.faults`, `accumulator`): the gateway's records as it writes
them, with `call_key` standing for its keyed hash of a call's API and forwarded arguments (`mcp_gateway.call_keys`:
equal for the same call, secrets compared by value). And `green_agent.rejudge.faults` on the records a gateway
writes for a 429 answered again within its retry-after and for a lost answer.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from green_agent.models.result import BattleResult
from green_agent.rejudge.faults import RunFaults, fault_differences
from green_agent.trajectory import analyze_log
from kernel.call_log import CallLogWriter
from kernel.call_record import CallRecord, InjectedFault
from kernel.fault_spec import parse_fault_spec
from kernel.world_data import WorldData
from mcp_gateway.faults.plan import admitted_kinds, draw
from mcp_gateway.tools import build_tool_specs

AT = datetime(2025, 3, 1, 10, 0, tzinfo=timezone.utc)


def call(tool: str, key: str, success: bool, fault: str | None = None, **marks: Any) -> CallRecord:
    """A record of `tool` whose identity is `key`; `fault`: the kind the gateway answered it with."""
    injected = InjectedFault(kind=fault, position=marks.pop("position", 1), delivered="what the agent got",
                             **marks) if fault else None
    return CallRecord(timestamp=AT, battle_id="B", task_id="t_1", tool_name=tool, success=success, duration_ms=1.0,
                      status_code=200 if success else 503, call_key=key, fault=injected)


def metrics(records: list[CallRecord], tmp_path: Path):  # noqa: ANN201
    log = CallLogWriter(tmp_path / "calls.jsonl")
    for record in records:
        log.append(record)
    return analyze_log(tmp_path / "calls.jsonl", battle_id="B")


def test_another_page_or_another_payee_is_not_a_recovery_the_same_call_redone_is(tmp_path: Path) -> None:
    m = metrics([
        call("phone__search_contacts", "page-0", False, "error", position=1),  # page 0 faulted
        call("phone__search_contacts", "page-1", True),                          # page 1: another call
        call("venmo__create_transaction", "pay-ann", False, "timeout", position=3),  # paying Ann faulted
        call("venmo__create_transaction", "pay-bob", True),                      # paying Bob: another call
        call("spotify__login", "login-pw1", False, "rate_limit", position=5),
        call("spotify__login", "login-pw2", True),  # another password: another call, though the log redacts both
    ], tmp_path / "others")
    assert [c.recovered for c in m.faulted_calls] == [False, False, False]
    assert (m.faults_injected, m.faults_recovered) == ({"error": 1, "rate_limit": 1, "timeout": 1},
                                                      {"error": 0, "rate_limit": 0, "timeout": 0})
    redone = metrics([
        call("phone__search_contacts", "page-0", False, "error", position=1),
        call("phone__search_contacts", "page-1", True),
        call("phone__search_contacts", "page-0", True),  # the faulted page asked again: redone
    ], tmp_path / "redone")
    assert [c.recovered for c in redone.faulted_calls] == [True] and redone.retry_count == 1


def test_retries_are_repeats_of_the_same_call_after_a_failure(tmp_path: Path) -> None:
    m = metrics([
        call("phone__search_contacts", "page-0", False, "error", position=1),
        call("phone__search_contacts", "page-1", True),   # moving on to page 1: no retry
        call("venmo__login", "v", False),                 # the agent's own failure
        call("venmo__login", "v", False),                 # retry 1
        call("venmo__login", "v", True),                  # retry 2
        call("venmo__login", "v", True),                  # after a success: no retry
        call("gmail__login", "g", False, "error", position=2),
        call("gmail__login", "g", False, "error", position=3),  # retry 3, after a fault
        call("gmail__login", "g", True),                  # retry 4, after a fault
    ], tmp_path)
    assert (m.retry_count, m.retries_after_fault) == (4, 2)


def test_a_lost_answer_is_recovered_unless_repeated_and_a_429_answered_again_is_no_new_fault(tmp_path: Path) -> None:
    m = metrics([
        call("venmo__create_transaction", "pay-ann", False, "lost_response", position=1, upstream_status=200),
        call("venmo__show_transactions", "check", True),  # the careful agent checks instead of paying again
        call("amazon__add_product_to_cart", "cart", False, "lost_response", position=2, upstream_status=200),
        call("amazon__add_product_to_cart", "cart", True),  # a blind repeat: a second write
        call("spotify__login", "s", False, "rate_limit", position=3),
        call("spotify__login", "s", False, "rate_limit", position=3, enforced=True),  # within the retry-after
        call("spotify__login", "s", True),
    ], tmp_path)
    assert [(c.kind, c.recovered, c.repeated) for c in m.faulted_calls] == [
        ("lost_response", True, False), ("lost_response", False, True), ("rate_limit", True, False)]
    assert m.faults_retry_after_ignored == 1 and m.faults_injected == {"lost_response": 2, "rate_limit": 1}


def test_silent_follows_what_the_agent_received(tmp_path: Path) -> None:
    m = metrics([call("phone__search_contacts", "p", True, "malformed", position=1, silent=True),
                 call("phone__search_contacts", "q", False, "malformed", position=2)], tmp_path)
    assert [c.silent for c in m.faulted_calls] == [True, False]


def _first_faulted(spec: Any, task: str, tool: Any, kind: str) -> int:
    return next(p for p in range(1, 500) if draw(spec, task, 1, p, admitted_kinds(spec, tool)) == kind)


def test_rejudge_accepts_a_429_answered_again_only_after_a_planned_one_and_a_lost_answer_only_if_forwarded(
        appworld_root: Path) -> None:
    world = WorldData(appworld_root)
    specs = build_tool_specs(world, list(world.api_docs))
    spec = parse_fault_spec(f"rate=0.5,seed=1,kinds=rate_limit+lost_response,salt={'ab' * 16}")
    result = BattleResult.model_validate({"battle_id": "B", "task_id": "t_1", "blue": "x", "status": "completed",
                                          "outcome": "failed", "faults": spec.model_dump(), "versions": {"appworld_green": "t"},
                                          "started_at": AT.isoformat()})
    plan = RunFaults(spec, spec.salt)
    login, write = specs["spotify__login"], specs["spotify__add_song_to_playlist"]
    limited = _first_faulted(spec, "t_1", login, "rate_limit")
    lost = _first_faulted(spec, "t_1", write, "lost_response")
    honest = [call(login.name, "l", False, "rate_limit", position=limited),
              call(login.name, "l", False, "rate_limit", position=limited, enforced=True),
              call(write.name, "w", False, "lost_response", position=lost, upstream_status=200)]
    for seq, record in enumerate(honest, 1):
        record.seq = seq
    assert fault_differences(honest, result, 1, plan, specs) == []
    orphan = call(write.name, "w2", False, "rate_limit", position=limited, enforced=True)
    unsent = call(write.name, "w", False, "lost_response", position=lost)
    orphan.seq, unsent.seq = 1, 2
    found = fault_differences([orphan, unsent], result, 1, plan, specs)
    assert "no planned 429 of that API came before" in found[0]
    assert "does not say its call reached the world" in found[1]
