"""Pure metrics over a run's rows: AppWorld's TGC and SGC, per difficulty, pass^k, means.

Definitions (percentages are 0-100, ratios 0-1; an empty denominator gives None):
- A battle is *judged* unless its outcome is `infra_error` or `scope_error`. Both are counted apart
  and never enter a denominator: the agent is not charged for our failures (a broken service, or an
  enforced scope that refused it a gold API).
- TGC = 100 * passed judged battles / judged battles (with one trial: AppWorld's task goal completion).
- SGC: per trial, a scenario (task id before '_') counts if every one of its tasks *in the run's task
  set* was judged in that trial, and passes if all of them passed. SGC = 100 * passed / counted
  scenario-trials. A scenario with a task not judged or without any result in a trial is left out
  of that trial (`scenarios_unjudged`) and its status is `incomplete` (`scenarios_incomplete`).
- pass^k (tau2-bench): per task with n judged trials of which c passed, C(c,k)/C(n,k) (the chance
  that k trials drawn without replacement all pass); averaged over tasks with n >= k. With k = n
  it is the fraction of tasks that passed in every trial.
- pass@k (unbiased, Chen et al.): per task 1 - C(n-c,k)/C(n,k), averaged the same way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from math import comb
from statistics import fmean

from green_agent.batch.scenarios import UNJUDGED, scenario_of, scenario_statuses, sgc_counts
from green_agent.models.eval_run import DifficultyStat, EvalAggregates, EvalRow

__all__ = ["aggregate", "scenario_of", "sgc", "sgc_counts", "tgc"]

OUTCOMES = ("passed", "partial", "collateral_damage", "failed", "timeout", "scope_error", "infra_error")
MEAN_FIELDS = ("calls", "failed_calls", "error_rate", "p50_latency_ms", "p95_latency_ms", "scope_recall",
               "api_precision", "api_recall", "api_f1", "duration_s", "tests_passed")


def is_judged(row: EvalRow) -> bool:
    return row.outcome not in UNJUDGED


def percent(numerator: int, denominator: int) -> float | None:
    return round(100.0 * numerator / denominator, 2) if denominator else None


def tgc(rows: Iterable[EvalRow]) -> float | None:
    """Task goal completion over judged battles."""
    judged = [r for r in rows if is_judged(r)]
    return percent(sum(r.passed for r in judged), len(judged))


def sgc(rows: Iterable[EvalRow], expected: Iterable[tuple[str, int]] | None = None) -> float | None:
    """Scenario goal completion over complete scenario-trials (see `green_agent.batch.scenarios`)."""
    counts = sgc_counts(rows, expected)
    return percent(counts.passed, counts.counted)


def by_difficulty(rows: Iterable[EvalRow]) -> dict[str, DifficultyStat]:
    """TGC per difficulty ('1', '2', '3', or 'unknown'), judged battles only, keys sorted."""
    groups: dict[str, list[EvalRow]] = defaultdict(list)
    for row in rows:
        if is_judged(row):
            groups[str(row.difficulty) if row.difficulty is not None else "unknown"].append(row)
    return {key: DifficultyStat(battles=len(members), passed=sum(r.passed for r in members),
                                tgc=percent(sum(r.passed for r in members), len(members)))
            for key, members in sorted(groups.items())}


def outcome_counts(rows: Iterable[EvalRow]) -> dict[str, int]:
    counts = {name: 0 for name in OUTCOMES}
    for row in rows:
        counts[row.outcome] = counts.get(row.outcome, 0) + 1
    return counts


def per_task_trials(rows: Iterable[EvalRow]) -> dict[str, tuple[int, int]]:
    """task id -> (judged trials n, passed trials c)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        if is_judged(row):
            counts[row.task_id][0] += 1
            counts[row.task_id][1] += int(row.passed)
    return {task: (n, c) for task, (n, c) in counts.items()}


def pass_hat_k(rows: Iterable[EvalRow], k: int) -> float | None:
    """pass^k: mean over tasks with >= k judged trials of C(c,k)/C(n,k)."""
    values = [comb(c, k) / comb(n, k) for n, c in per_task_trials(rows).values() if n >= k]
    return round(fmean(values), 4) if values else None


def pass_at_k(rows: Iterable[EvalRow], k: int) -> float | None:
    """Unbiased pass@k: mean over tasks with >= k judged trials of 1 - C(n-c,k)/C(n,k)."""
    values = [1 - comb(n - c, k) / comb(n, k) for n, c in per_task_trials(rows).values() if n >= k]
    return round(fmean(values), 4) if values else None


def mean_of(rows: Sequence[EvalRow], name: str) -> float | None:
    values = [getattr(r, name) for r in rows if getattr(r, name) is not None]
    return round(fmean(values), 4) if values else None


def aggregate(rows: Sequence[EvalRow], expected_battles: int, trials: int = 1,
              task_ids: Sequence[str] | None = None) -> EvalAggregates:
    """Every number of `results.json` from the rows; `task_ids` is the run's task set (its manifest)."""
    judged = [r for r in rows if is_judged(r)]
    expected = [(t, k) for t in task_ids for k in range(1, trials + 1)] if task_ids is not None else None
    counted, scen_passed, unjudged = sgc_counts(rows, expected)
    statuses = scenario_statuses(rows, expected)
    ks = [str(k) for k in range(1, trials + 1)]
    return EvalAggregates(
        battles=len(rows), expected_battles=expected_battles, judged=len(judged),
        infra_errors=sum(r.outcome == "infra_error" for r in rows),
        scope_errors=sum(r.outcome == "scope_error" for r in rows), missing=max(0, expected_battles - len(rows)),
        passed=sum(r.passed for r in judged), tgc=tgc(rows),
        scenarios=counted, scenarios_passed=scen_passed, scenarios_unjudged=unjudged, sgc=percent(scen_passed, counted),
        scenario_status=statuses, scenarios_incomplete=[s for s, v in statuses.items() if v == "incomplete"],
        tgc_by_difficulty=by_difficulty(rows), outcome_counts=outcome_counts(rows), trials=trials,
        pass_hat_k={k: v for k in ks if (v := pass_hat_k(rows, int(k))) is not None} if trials > 1 else None,
        pass_at_k={k: v for k in ks if (v := pass_at_k(rows, int(k))) is not None} if trials > 1 else None,
        mean_trajectory={name: mean_of(judged, name) for name in MEAN_FIELDS},
        total_calls=sum(r.calls or 0 for r in judged),
        total_duration_s=round(sum(r.duration_s or 0.0 for r in rows), 3),
        input_tokens=sum(r.input_tokens or 0 for r in rows), output_tokens=sum(r.output_tokens or 0 for r in rows),
        cost_usd=round(sum(r.cost_usd or 0.0 for r in rows), 6),
    )
