"""The assessment's artifact: one DataPart the platform's leaderboard reads, and a plain-text summary.

`AssessmentData` keeps the platform's convention (`score`, `max_score`, `pass_rate`, `task_rewards`,
`time_used`) and adds ours. Field types never change between runs (DuckDB reads many result files as
one table): counts are ints, rates floats, maps keyed by strings; `outcomes` lists every outcome,
zeros included. Headline figures are over the whole shard, as AppWorld's are: a task that could not
be judged (infra_error or scope_error after its retries) is not passed there and `incomplete` says so, by
the rule results.json follows. A row says how many attempts its battle took and why the earlier ones did
not count (infrastructure errors on our side, retried), so a retry is visible on the platform too.

- `task_rewards[task]`: 1 iff every trial of the task passed, else 0; `score` is their sum.
- `tgc`: 100 * battles passed / battles of the shard; `sgc`: 100 * scenarios whose every battle passed /
  scenarios of the shard.
- `intervals`: the run's confidence intervals (`green_agent.batch.rows.interval_fields`: `tgc_ci`,
  `tgc_wilson`, `sgc_ci`, per difficulty, pass^k, flip rate), `[low, high]` lists, so a leaderboard can
  show them, scenario-aware (docs/statistics.md); a shard of one scenario has none (`null`), and
  `no_interval` says why in words; `{}` for an empty shard.
- `faults` (a reliability run, `config.faults`): the spec and the faults injected and recovered by kind over the
  judged battles (`green_agent.reliability.faults`), and each row's `faults_injected` / `faults_recovered`; null without
  faults. A run with faults is custom (`custom` names the spec).
- `profile` (a reliability profile, `config.faults` and/or `config.paraphrase`): reliability.json's record
  (`green_agent.models.reliability_profile`): every arm against the shared baseline, the curve, consistency, safety,
  the lost tasks, the published fault secret; null otherwise, and null when the profile was interrupted. The headline
  figures, `rows` and `run_dir` are then the baseline's; `faults` stays null (the arms' recovery is in the profile).
- `cost` and `task_results[].cost_usd`: the purple's reported usage plus the Green's predictor cost
  (`green_agent.models.cost`); unknown is null, never 0; never part of a verdict.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, Field

from green_agent.batch.aggregate import scenario_of
from green_agent.batch.attempts import ATTEMPTS_DIR
from green_agent.batch.rows import interval_fields
from green_agent.batch.standard import standard_sentence
from green_agent.models.cost import CostFigures, cost_sentence
from green_agent.models.eval_run import EvalResults, EvalRow, FaultAggregates
from green_agent.models.provenance import Provenance
from green_agent.models.reliability_profile import ReliabilityProfile
from green_agent.models.explanation import explain
from green_agent.models.result import BattleOutcome, BattleResult
from kernel.fault_spec import FaultSpec
from kernel.untrusted import one_line
from kernel.a2a_tools import PROTOCOL

MAX_REQUIREMENTS = 10
MAX_WHY = 300
MAX_WHY_LISTED = 3
"""Failed tasks whose one-line why the text summary lists."""


OUTCOMES = " | ".join(get_args(BattleOutcome))
MAX_EARLIER = 5
MAX_RETRIES_LISTED = 3


class TaskRow(BaseModel):
    """One battle of the shard."""

    task_id: str
    trial: int
    outcome: str = Field(description=f"{OUTCOMES} (docs/outcomes.md).")
    passed: bool
    difficulty: int | None
    tests_passed: int | None
    tests_total: int | None
    calls: int | None = Field(description="Tool calls the purple made through the gateway.")
    purple_fault: str | None = Field(description="The purple's own fault (error_reply, connection_dropped, turn_timeout, "
                                     "max_steps, ...) that ended the task, if any; such a task is judged and counted.")
    failed_requirements: list[str] = Field(description="What the failed tests checked (at most 10).")
    reason: str | None
    why: str | None = Field(default=None, description="The verdict in one plain sentence (`models.explanation`; "
                            "never the expected answer).")
    attempts: int = Field(default=1, description="Attempts this battle took: 1, plus one per infrastructure error on "
                          "our side that was retried on a fresh world.")
    earlier_attempts: list[str] = Field(default_factory=list, description=(
        "Why each earlier attempt did not count (`<outcome>: <reason>`, oldest first, at most 5): always our side's "
        "infrastructure errors, never the purple's faults (those are judged, not retried)."))
    faults_injected: int | None = Field(default=None, description="A reliability run: faults the purple received.")
    faults_recovered: int | None = Field(default=None, description="Of which the same API later answered unfaulted.")


class TaskResult(BaseModel):
    """One task of the shard: what a leaderboard query needs to merge shards exactly (tasks never straddle shards)."""

    task_id: str
    scenario_id: str
    difficulty: int | None
    trials: int = Field(description="Battles asked for this task (`config.trials`).")
    passed_trials: int = Field(description="Battles of the task that passed (a battle that did not run: not passed).")
    reward: int = Field(description="1 iff every trial passed, else 0 (= task_rewards[task_id]).")
    calls: int | None = Field(description="Tool calls over the task's battles (None: no battle reported them).")
    cost_usd: float | None = Field(description="The purple's reported cost plus the Green's predictor cost over the "
                                   "task's battles; None (unknown) when any battle's purple reported none.")


class ArtifactFaults(FaultAggregates):
    """A reliability run's faults: the spec, and what was injected and recovered by kind."""

    spec: FaultSpec = Field(description=(
        "The fault spec the gateway applied (docs/reliability.md), with the commitment to the run's secret."))
    salt: str | None = Field(default=None, description=(
        "The run's secret, published once the run is over: with `spec` it reproduces the plan, and its SHA-256 is "
        "`spec.commitment`. None if the run was interrupted."))


class DifficultyFigures(BaseModel):
    tasks: int
    passed: int
    tgc: float


class ShardInfo(BaseModel):
    index: int
    count: int
    tasks: int = Field(description="Tasks in this shard.")
    task_set_size: int = Field(description="Tasks in the whole (unsharded) set.")


class AssessmentData(BaseModel):
    """The DataPart of the `completed` task's artifact."""

    benchmark: str = "appworld"
    protocol: str = PROTOCOL
    participant: str = Field(description="The role of the agent under test.")
    score: int
    max_score: int
    pass_rate: float
    task_rewards: dict[str, int]
    time_used: float = Field(description="Seconds from the request to the artifact.")
    tgc: float
    sgc: float
    battles: int = Field(description="Battles of the shard (tasks x trials), run or not.")
    battles_passed: int
    incomplete: bool = Field(description="Some battle of the shard was not judged (infra_error or scope_error after "
                             "its retries, or not run): not passed above. The same rule as results.json's.")
    infra_errors: int
    by_difficulty: dict[str, DifficultyFigures]
    outcomes: dict[str, int]
    cost: CostFigures | None = Field(description="The purple's reported cost plus the Green's: per task and per solved "
                                     "task (`green_agent.models.cost`; unknown is null, never 0). None: empty shard.")
    intervals: dict[str, Any] = Field(description="Confidence intervals of the run's figures (module docstring).")
    faults: ArtifactFaults | None = Field(default=None, description="A reliability run's faults (module docstring).")
    profile: ReliabilityProfile | None = Field(default=None, description="A reliability profile (module docstring).")
    rows: list[TaskRow]
    task_results: list[TaskResult] = Field(description="One per task of the shard, in order (the leaderboard's unit).")
    shard: ShardInfo
    config: dict[str, Any]
    versions: dict[str, str]
    standard: bool = Field(description="True when the run used the defaults that make its numbers comparable "
                           "(`green_agent.batch.standard`; a shard of a whole split counts as whole).")
    custom: list[str] = Field(description="How the run differs from a standard one, in words ([] when standard).")
    provenance: Provenance | None = Field(description="What the numbers rest on (`green_agent.models.provenance`), "
                                          "with the command that re-judges the run; None: an empty shard.")
    run_id: str | None
    run_dir: str | None


def build_data(results: EvalResults | None, task_ids: list[str], shard: ShardInfo, role: str, config: dict[str, Any],
               versions: dict[str, str], time_used: float, out: Path | None,
               profile: ReliabilityProfile | None = None) -> AssessmentData:
    """The artifact's data from the run's `results.json` record (None: an empty shard, nothing ran); `profile`: a
    reliability profile's record, whose baseline `results` and `out` are."""
    rows = [_row(r, out) for r in results.rows] if results else []
    trials = int(config.get("trials") or 1)
    costs = _task_costs(results.rows if results else [], trials)
    by_task: dict[str, list[TaskRow]] = defaultdict(list)
    for row in rows:
        by_task[row.task_id].append(row)
    rewards = {t: int(len(by_task[t]) == trials and all(r.passed for r in by_task[t])) for t in task_ids}
    battles = len(task_ids) * trials
    passed = sum(r.passed for r in rows)
    outcomes = {name: 0 for name in get_args(BattleOutcome)}
    for row in rows:
        outcomes[row.outcome] = outcomes.get(row.outcome, 0) + 1
    outcomes["not_run"] = battles - len(rows)
    scenarios = sorted({scenario_of(t) for t in task_ids})
    scenarios_passed = sum(all(rewards[t] for t in task_ids if scenario_of(t) == s) for s in scenarios)
    return AssessmentData(
        participant=role, score=sum(rewards.values()), max_score=len(task_ids),
        pass_rate=_pct(sum(rewards.values()), len(task_ids)) / 100, task_rewards=rewards,
        time_used=round(time_used, 3), tgc=_pct(passed, battles), sgc=_pct(scenarios_passed, len(scenarios)),
        battles=battles, battles_passed=passed,
        task_results=[_task_result(t, by_task[t], trials, rewards[t], costs.get(t)) for t in task_ids],
        cost=results.aggregates.cost if results else None,
        incomplete=results.aggregates.incomplete or outcomes["not_run"] > 0 if results else battles > 0,
        infra_errors=outcomes["infra_error"],
        by_difficulty=_by_difficulty(rows), outcomes=outcomes,
        intervals=interval_fields(results.aggregates) if results else {}, faults=_faults(results), profile=profile,
        rows=rows, shard=shard, config=config,
        versions=versions, standard=bool(results and results.standard),
        custom=results.custom if results else ["an empty shard (more shards than tasks): no battle ran"],
        provenance=results.provenance if results else None,
        run_id=results.manifest.run_id if results else None, run_dir=str(out) if out else None)


def summary_text(data: AssessmentData) -> str:
    """One paragraph for people (never JSON, so the platform does not take it for data)."""
    shard = f"shard {data.shard.index + 1} of {data.shard.count}" if data.shard.count > 1 else "the whole task set"
    text = (f"AppWorld assessment of {data.participant}: {data.score} of {data.max_score} task(s) passed on {shard} "
            f"- TGC {data.tgc:.1f}, SGC {data.sgc:.1f}, in {data.time_used:.0f} s. "
            f"{_sentence(standard_sentence(data.standard, data.custom))}.")
    if data.incomplete:
        text += (f" Incomplete: {data.infra_errors + data.outcomes['scope_error']} battle(s) could not be judged on "
                 f"our side (infra_error, scope_error) and {data.outcomes['not_run']} did not run; they count as "
                 "not passed.")
    retried = [row for row in data.rows if row.attempts > 1]
    if retried:
        text += (f" {len(retried)} battle(s) were retried after infrastructure errors on our side: "
                 + "; ".join(f"{row.task_id} took {row.attempts} attempts ({row.earlier_attempts[0]})"
                             for row in retried[:MAX_RETRIES_LISTED] if row.earlier_attempts) + ".")
    if data.faults is not None:
        text += (f" A reliability run under {data.faults.spec.text()}: {data.faults.injected} fault(s) reached the "
                 f"purple, {data.faults.recovered} recovered.")
    if data.profile is not None:
        text += f" Reliability profile against this baseline: {one_line(data.profile.message, MAX_WHY)}"
    if data.cost is not None:
        text += " " + cost_sentence(data.cost)
    failures = [row for row in data.rows if not row.passed and row.why][:MAX_WHY_LISTED]
    if failures:
        text += " Not passed: " + " ".join(f"{row.task_id}: {row.why}" for row in failures)
    return text


def _row(row: EvalRow, out: Path | None) -> TaskRow:
    result = _result(out / row.result_path) if out else None
    evaluation = result.evaluation if result else None
    return TaskRow(task_id=row.task_id, trial=row.trial, outcome=row.outcome, passed=row.passed,
                   difficulty=row.difficulty, tests_passed=row.tests_passed, tests_total=row.tests_total,
                   calls=row.calls, purple_fault=result.blue_fault.kind if result and result.blue_fault else None,
                   failed_requirements=[f.requirement[:300] for f in (evaluation.failures if evaluation else [])]
                   [:MAX_REQUIREMENTS], reason=(result.reason or "")[:500] if result else None,
                   why=one_line(explain(result).headline, MAX_WHY) if result else None, attempts=row.attempts,
                   earlier_attempts=_earlier(out / row.result_path) if out else [],
                   faults_injected=row.faults.injected if row.faults else None,
                   faults_recovered=row.faults.recovered if row.faults else None)


def _faults(results: EvalResults | None) -> ArtifactFaults | None:
    """The run's fault spec and totals, when it ran with faults."""
    if results is None or results.faults is None:
        return None
    totals = results.aggregates.faults or FaultAggregates(injected=0, recovered=0)
    return ArtifactFaults(spec=results.faults, salt=results.fault_salt, **totals.model_dump())


def _earlier(result_path: Path) -> list[str]:
    """`<outcome>: <reason>` of the earlier attempts kept beside a battle's result (`batch.attempts`), oldest first."""
    folders = sorted((result_path.parent / ATTEMPTS_DIR).glob("*/"), key=lambda p: p.stat().st_mtime)
    earlier = []
    for folder in folders[:MAX_EARLIER]:
        result = _result(folder / result_path.name)
        earlier.append(one_line(f"{result.outcome}: {result.reason or 'no reason recorded'}" if result
                                else "unrecorded: the attempt left no result", MAX_WHY))
    return earlier


def _task_costs(rows: list[EvalRow], trials: int) -> dict[str, float]:
    """Task -> purple + Green cost over its battles, for the tasks whose every trial ran with a known purple cost."""
    by_task: dict[str, list[EvalRow]] = defaultdict(list)
    for row in rows:
        by_task[row.task_id].append(row)
    return {task: round(sum((r.purple_cost_usd or 0.0) + (r.cost_usd or 0.0) for r in group), 6)
            for task, group in by_task.items()
            if len(group) == trials and all(r.purple_cost_usd is not None for r in group)}


def _task_result(task_id: str, rows: list[TaskRow], trials: int, reward: int, cost_usd: float | None) -> TaskResult:
    calls = [r.calls for r in rows if r.calls is not None]
    return TaskResult(task_id=task_id, scenario_id=scenario_of(task_id),
                      difficulty=next((r.difficulty for r in rows if r.difficulty is not None), None), trials=trials,
                      passed_trials=sum(r.passed for r in rows), reward=reward, calls=sum(calls) if calls else None,
                      cost_usd=cost_usd)


def _result(path: Path) -> BattleResult | None:
    try:
        return BattleResult.model_validate_json(path.read_text())
    except (OSError, ValueError):
        return None


def _by_difficulty(rows: list[TaskRow]) -> dict[str, DifficultyFigures]:
    groups: dict[str, list[TaskRow]] = defaultdict(list)
    for row in rows:
        groups[str(row.difficulty) if row.difficulty is not None else "unknown"].append(row)
    return {key: DifficultyFigures(tasks=len(g), passed=sum(r.passed for r in g), tgc=_pct(sum(r.passed for r in g),
                                                                                         len(g)))
            for key, g in sorted(groups.items())}


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _pct(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 2) if whole else 0.0
