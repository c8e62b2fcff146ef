"""Are a battle's fault records the plan's? A record marked `fault` is skipped by the replay, so it must be one.

A reliability run's gateway answers the calls its plan faults itself (`mcp_gateway.faults`); their records carry
`fault` (kind and position) and the replay skips them (`green_agent.rejudge.calls`): they never reached the world.
A forger who marks a real write as faulted, and removes what it did from the saved state, would hide it from the
replay. So each fault record is accepted only where the run's spec, its published secret and the plan put a
fault at that position with that kind (`mcp_gateway.faults.plan.draw`, among the kinds that call admits):

- never in a run without faults, never on the benchmark's scaffolding (`supervisor`, `api_docs`);
- never twice at one position; a 429 answered again within a planned 429's retry-after (`enforced`) carries that
  429's position and must follow a planned 429 of the same API with it;
- a lost answer (`lost_response`) must say its call reached the world (`upstream_status`: it is replayed);
- only where the run published its secret (`fault_salt`, once it was over) and that secret matches the commitment
  the run recorded when it started; a run that did not finish cannot have its fault records checked.

`RunFaults` is what a run folder says of its plan (`run_faults`); `fault_differences` names each record that breaks
a rule, by its call number and field, never by anything computed from the secret.
"""

from __future__ import annotations

from typing import NamedTuple

from green_agent.models.eval_run import EvalResults, RunManifest
from green_agent.models.result import BattleResult
from kernel.call_record import CallRecord
from kernel.errors import BadInputError
from kernel.fault_spec import FaultSpec, salt_commitment
from mcp_gateway.faults.plan import NEVER_FAULTED_APPS, admitted_kinds, draw
from mcp_gateway.tools import ToolSpec


class RunFaults(NamedTuple):
    """A run folder's fault plan: its spec (None: a run without faults) and its published secret (None: none)."""

    spec: FaultSpec | None
    salt: str | None


def run_faults(manifest: RunManifest | None, results: EvalResults | None, battle: BattleResult | None) -> RunFaults:
    """The plan of an eval run (its run.json; results.json's secret if run.json has none), or of one battle."""
    if manifest is not None:
        salt = manifest.fault_salt or (results.fault_salt if results else None)
        return RunFaults(manifest.config.faults, salt)
    if battle is not None:
        return RunFaults(battle.faults, battle.fault_salt)
    return RunFaults(None, None)


def fault_differences(records: list[CallRecord], result: BattleResult, trial: int, plan: RunFaults,
                      specs: dict[str, ToolSpec]) -> list[str]:
    """Each fault record of the battle (`trial` of its task) the plan does not account for (module docstring)."""
    faulted = [r for r in records if r.fault is not None]
    if not faulted:
        return []
    if plan.spec is None:
        return [f"{_call(r)} is marked as an injected fault, but the run ran without faults" for r in faulted]
    found = _spec_differences(result, plan)
    salted = _salted(plan)
    seen: dict[int, str] = {}
    for record in sorted(faulted, key=lambda r: r.seq):
        problem = (_enforced_problem(record, seen) if record.fault and record.fault.enforced
                   else _record_problem(record, (result.task_id or result.battle_id, trial), salted, specs, seen))
        if problem:
            found.append(f"{_call(record)}: {problem}")
    return found


def _enforced_problem(record: CallRecord, seen: dict[int, str]) -> str | None:
    """A 429 answered again within a retry-after: it must repeat a planned 429 of the same API seen before it."""
    assert record.fault is not None
    if record.fault.kind != "rate_limit" or seen.get(record.fault.position) != f"rate_limit {record.tool_name}":
        return "it is marked as a 429 answered again within a retry-after, but no planned 429 of that API came before"
    return None


def _spec_differences(result: BattleResult, plan: RunFaults) -> list[str]:
    assert plan.spec is not None
    if result.faults is None or result.faults.text() != plan.spec.text() \
            or result.faults.commitment != plan.spec.commitment:
        return ["result.json's fault spec (faults) is not the run's"]
    return []


def _salted(plan: RunFaults) -> FaultSpec | str:
    """The run's spec with its published secret, or why the fault records cannot be checked."""
    assert plan.spec is not None
    if plan.salt is None:
        return "the run did not publish its fault plan's secret (fault_salt: a run publishes it once it is over)"
    if plan.spec.commitment is None or salt_commitment(plan.salt) != plan.spec.commitment:
        return "the published fault_salt does not match the commitment (faults.commitment) the run recorded"
    try:
        return plan.spec.with_salt(plan.salt)
    except BadInputError:
        return "the published fault_salt is not a secret the plan can draw on"


def _record_problem(record: CallRecord, battle: tuple[str, int], salted: FaultSpec | str,
                    specs: dict[str, ToolSpec], seen: dict[int, str]) -> str | None:
    assert record.fault is not None
    spec = specs.get(record.tool_name)
    if spec is None:
        return "its fault names no AppWorld API"
    if spec.app_name in NEVER_FAULTED_APPS:
        return f"its fault is on {spec.app_name}, which the plan never faults"
    position = record.fault.position
    if position in seen:
        return f"its fault position {position} is claimed by another record"
    seen[position] = f"{record.fault.kind} {record.tool_name}"
    if record.fault.kind == "lost_response" and record.fault.upstream_status is None:
        return "it is marked as a lost answer, but the log does not say its call reached the world (upstream_status)"
    if isinstance(salted, str):
        return f"its fault cannot be checked: {salted}"
    if draw(salted, *battle, position, admitted_kinds(salted, spec)) != record.fault.kind:
        return f"the plan puts no {record.fault.kind} fault at its position {position}"
    return None


def _call(record: CallRecord) -> str:
    return f"call {record.seq} ({record.tool_name[:80]})"
