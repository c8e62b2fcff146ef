"""Pure metrics over a run's rows: AppWorld's TGC and SGC, per difficulty, pass^k, means.

Definitions (percentages are 0-100, ratios 0-1; an empty denominator gives None):
- A battle is *judged* unless its outcome is `infra_error` or `scope_error` (our side's failures: a
  broken service, or an enforced scope that refused the agent a gold API). Retries come first
  (`green_agent.batch.attempts`); what is still unjudged after them is counted apart.
- The headline TGC and SGC are over the run's whole task set, as AppWorld's metrics are: TGC =
  100 * passed battles / (tasks x trials); a task-trial that was not judged (or has no result) counts
  as not passed, and `incomplete` is then true (say it beside the number). Without a task set
  (hand-made rows), the rows are the task set.
- `tgc_judged` = 100 * passed judged battles / judged battles: the same figure over the judged battles
  only, named as such (it rises when battles go unjudged, so it is never the headline).
- SGC: per trial, a scenario (task id before '_') passes if every one of its tasks in the task set
  passed in that trial. SGC = 100 * passed scenario-trials / every scenario-trial of the task set.
  `sgc_judged` counts only complete scenario-trials (every task judged); a scenario with a task not
  judged or without any result in a trial is `incomplete` (`scenarios_unjudged`, `scenarios_incomplete`).
- TGC by difficulty: per difficulty, passed / battles with a result (unjudged ones count as not passed).
- pass^k (tau2-bench): per task with n trials with a result of which c passed (an unjudged trial is
  not passed), C(c,k)/C(n,k) (the chance that k trials drawn without replacement all pass); averaged
  over tasks with n >= k. With k = n it is the fraction of tasks that passed in every trial.
- pass@k (unbiased, Chen et al.): per task 1 - C(n-c,k)/C(n,k), averaged the same way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from math import comb
from statistics import fmean

from green_agent.batch.scenarios import UNJUDGED, scenario_of, scenario_statuses, sgc_counts
from green_agent.models.eval_run import DifficultyStat, EvalAggregates, EvalRow

__all__ = ["aggregate", "scenario_of", "sgc", "sgc_counts", "sgc_judged", "tgc", "tgc_judged"]

OUTCOMES = ("passed", "partial", "collateral_damage", "failed", "timeout", "blue_error", "scope_error", "infra_error")
MEAN_FIELDS = ("calls", "failed_calls", "error_rate", "p50_latency_ms", "p95_latency_ms", "scope_recall",
               "api_precision", "api_recall", "api_f1", "duration_s", "tests_passed")


def is_judged(row: EvalRow) -> bool:
    return row.outcome not in UNJUDGED


def percent(numerator: int, denominator: int) -> float | None:
    return round(100.0 * numerator / denominator, 2) if denominator else None


def passed(row: EvalRow) -> bool:
    """The battle counts as passed: judged and passed (an unjudged battle never does)."""
    return is_judged(row) and row.passed


def tgc(rows: Iterable[EvalRow], expected_battles: int | None = None) -> float | None:
    """Task goal completion over the task set: passed battles / `expected_battles` (default: the rows)."""
    rows = list(rows)
    return percent(sum(passed(r) for r in rows), len(rows) if expected_battles is None else expected_battles)


def tgc_judged(rows: Iterable[EvalRow]) -> float | None:
    """Task goal completion over judged battles only (never the headline)."""
    judged = [r for r in rows if is_judged(r)]
    return percent(sum(r.passed for r in judged), len(judged))


def sgc(rows: Iterable[EvalRow], expected: Iterable[tuple[str, int]] | None = None) -> float | None:
    """Scenario goal completion over every scenario-trial of the task set (an incomplete one is not passed)."""
    counts = sgc_counts(rows, expected)
    return percent(counts.passed, counts.counted + counts.incomplete)


def sgc_judged(rows: Iterable[EvalRow], expected: Iterable[tuple[str, int]] | None = None) -> float | None:
    """Scenario goal completion over complete scenario-trials only (see `green_agent.batch.scenarios`)."""
    counts = sgc_counts(rows, expected)
    return percent(counts.passed, counts.counted)


def by_difficulty(rows: Iterable[EvalRow]) -> dict[str, DifficultyStat]:
    """TGC per difficulty ('1', '2', '3', or 'unknown') over battles with a result, keys sorted."""
    groups: dict[str, list[EvalRow]] = defaultdict(list)
    for row in rows:
        groups[str(row.difficulty) if row.difficulty is not None else "unknown"].append(row)
    return {key: DifficultyStat(battles=len(members), passed=sum(passed(r) for r in members),
                                tgc=percent(sum(passed(r) for r in members), len(members)))
            for key, members in sorted(groups.items())}


def outcome_counts(rows: Iterable[EvalRow]) -> dict[str, int]:
    counts = {name: 0 for name in OUTCOMES}
    for row in rows:
        counts[row.outcome] = counts.get(row.outcome, 0) + 1
    return counts


def per_task_trials(rows: Iterable[EvalRow]) -> dict[str, tuple[int, int]]:
    """task id -> (trials with a result n, passed trials c); an unjudged trial is not passed."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        counts[row.task_id][0] += 1
        counts[row.task_id][1] += int(passed(row))
    return {task: (n, c) for task, (n, c) in counts.items()}


def pass_hat_k(rows: Iterable[EvalRow], k: int) -> float | None:
    """pass^k: mean over tasks with >= k trials of C(c,k)/C(n,k)."""
    values = [comb(c, k) / comb(n, k) for n, c in per_task_trials(rows).values() if n >= k]
    return round(fmean(values), 4) if values else None


def pass_at_k(rows: Iterable[EvalRow], k: int) -> float | None:
    """Unbiased pass@k: mean over tasks with >= k trials of 1 - C(n-c,k)/C(n,k)."""
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
    task_set = max(expected_battles, len(rows))
    return EvalAggregates(
        battles=len(rows), expected_battles=expected_battles, judged=len(judged),
        infra_errors=sum(r.outcome == "infra_error" for r in rows),
        scope_errors=sum(r.outcome == "scope_error" for r in rows), missing=max(0, expected_battles - len(rows)),
        passed=sum(r.passed for r in judged), tgc=tgc(rows, task_set), tgc_judged=tgc_judged(rows),
        incomplete=len(judged) < task_set,
        scenarios=counted + unjudged, scenarios_passed=scen_passed, scenarios_unjudged=unjudged,
        sgc=percent(scen_passed, counted + unjudged), sgc_judged=percent(scen_passed, counted),
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
