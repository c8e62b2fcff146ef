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

Intervals (`green_agent.stats`, at `IntervalOptions.level`) follow the headline: TGC's are over the
units `tgc_units` lists, one per task-trial of the task set (passed or not; one with no result is
not passed), scenario-aware (`stats.intervals.cluster_interval`: none with one scenario) with the
Wilson interval of the same units beside it; TGC by difficulty the same over that difficulty's
battles; SGC the scenario-aware one over every scenario-trial of the task set (`sgc_units`); pass^k,
pass@k and the flip rate the same over the per-task values they average. With trials >= 2, `trial_stability` adds the flip rate, the per-task pass-rate
histogram (both over judged trials only: an unjudged trial says nothing about the agent) and the
expected TGC spread between two single runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from math import comb
from typing import NamedTuple
from statistics import fmean

from green_agent.batch.cost import cost_figures
from green_agent.reliability.faults import fault_aggregates
from green_agent.batch.scenarios import UNJUDGED, scenario_of, scenario_statuses, sgc_counts, sgc_units
from green_agent.models.eval_run import DifficultyStat, EvalAggregates, EvalRow, Interval, Stability
from green_agent.stats.intervals import IntervalOptions, cluster_interval, cluster_intervals, mean_intervals, wilson
from green_agent.stats.stability import flip_units, stability

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


def tgc_units(rows: Iterable[EvalRow], expected: Iterable[tuple[str, int]] | None = None,
              expected_battles: int | None = None) -> tuple[list[float], list[str]]:
    """The units the headline TGC is the mean of: (passed 1.0 / not 0.0, scenario) per task-trial of the task set.

    With `expected` (task, trial) keys, one unit per key (a key without a row is not passed); else one per
    row, and `expected_battles` beyond the rows adds not-passed units, each its own cluster (no task known).
    """
    rows = list(rows)
    if expected is not None:
        by_key = {(r.task_id, r.trial): r for r in rows}
        keys = list(expected)
        return ([float(passed(by_key[k])) if k in by_key else 0.0 for k in keys], [scenario_of(t) for t, _ in keys])
    extra = max(0, (expected_battles or 0) - len(rows))
    return ([float(passed(r)) for r in rows] + [0.0] * extra,
            [r.scenario_id for r in rows] + [f"(no result {i})" for i in range(extra)])


def tgc_intervals(rows: Iterable[EvalRow], options: IntervalOptions = IntervalOptions(),
                  expected: Iterable[tuple[str, int]] | None = None, expected_battles: int | None = None
                  ) -> tuple[Interval | None, Interval | None]:
    """(scenario-aware, Wilson) intervals of the headline TGC, in points."""
    return mean_intervals(*tgc_units(rows, expected, expected_battles), options)


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


def difficulty_groups(rows: Iterable[EvalRow]) -> dict[str, list[EvalRow]]:
    """'1', '2', '3' or 'unknown' -> the rows of that difficulty, keys sorted."""
    groups: dict[str, list[EvalRow]] = defaultdict(list)
    for row in rows:
        groups[str(row.difficulty) if row.difficulty is not None else "unknown"].append(row)
    return dict(sorted(groups.items()))


def by_difficulty(rows: Iterable[EvalRow], options: IntervalOptions | None = None,
                  cis: dict[str, Interval | None] | None = None) -> dict[str, DifficultyStat]:
    """TGC per difficulty over battles with a result, keys sorted; with `options`, its intervals too.

    `cis` (difficulty -> scenario-aware interval) is given when the caller computed them already.
    """
    found = {}
    for key, members in difficulty_groups(rows).items():
        n_passed = sum(passed(r) for r in members)
        if options is None:
            ci, wil = None, None
        elif cis is not None:
            ci, wil = cis.get(key), wilson(n_passed, len(members), options)
        else:
            ci, wil = tgc_intervals(members, options)
        found[key] = DifficultyStat(battles=len(members), passed=n_passed, tgc=percent(n_passed, len(members)),
                                    ci=ci, wilson=wil)
    return found


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


def pass_hat_k(rows: Iterable[EvalRow], k: int, counts: dict[str, tuple[int, int]] | None = None) -> float | None:
    """pass^k: mean over tasks with >= k trials of C(c,k)/C(n,k) (`counts`: `per_task_trials(rows)` if known)."""
    values = per_task_values(rows, k, "hat", counts)[0]
    return round(fmean(values), 4) if values else None


def pass_at_k(rows: Iterable[EvalRow], k: int, counts: dict[str, tuple[int, int]] | None = None) -> float | None:
    """Unbiased pass@k: mean over tasks with >= k trials of 1 - C(n-c,k)/C(n,k)."""
    values = per_task_values(rows, k, "at", counts)[0]
    return round(fmean(values), 4) if values else None


def per_task_values(rows: Iterable[EvalRow], k: int, kind: str,
                    counts: dict[str, tuple[int, int]] | None = None) -> tuple[list[float], list[str]]:
    """Per task with >= k trials: its pass^k (`kind` "hat") or pass@k ("at") value, and its scenario.

    `counts` is `per_task_trials(rows)` when the caller has it already.
    """
    values, clusters = [], []
    for task, (n, c) in (counts if counts is not None else per_task_trials(rows)).items():
        if n >= k:
            values.append(comb(c, k) / comb(n, k) if kind == "hat" else 1 - comb(n - c, k) / comb(n, k))
            clusters.append(scenario_of(task))
    return values, clusters


def trial_verdicts(rows: Sequence[EvalRow]) -> dict[str, list[bool]]:
    """task id -> its judged verdicts in trial order (an unjudged trial says nothing about the agent)."""
    verdicts: dict[str, list[bool]] = defaultdict(list)
    for row in sorted((r for r in rows if is_judged(r)), key=lambda r: r.trial):
        verdicts[row.task_id].append(row.passed)
    return verdicts


def trial_stability(rows: Sequence[EvalRow], trials: int, options: IntervalOptions,
                    task_ids: Sequence[str] | None = None, flip_ci: Interval | None = None) -> Stability | None:
    """Flip rate, pass-rate histogram and TGC spread (`green_agent.stats.stability`); None with one trial.

    Verdicts are the judged trials'; TGC per trial is the headline's (over the task set, when given).
    `flip_ci` is the flip rate's interval when the caller computed it already.
    """
    if trials < 2:
        return None
    verdicts = trial_verdicts(rows)
    by_trial: dict[int, list[EvalRow]] = defaultdict(list)
    for row in rows:
        by_trial[row.trial].append(row)
    tgc_by_trial = {str(k): tgc(by_trial[k], len(task_ids) if task_ids is not None else None)
                    for k in range(1, trials + 1)}
    return stability(verdicts, {t: scenario_of(t) for t in verdicts}, tgc_by_trial, options, flip_ci)


class RunIntervals(NamedTuple):
    """Every scenario-aware interval of one run's aggregates (`run_intervals`)."""

    tgc: Interval | None
    tgc_wilson: Interval | None
    by_difficulty: dict[str, Interval | None]
    pass_hat_k: dict[str, Interval] | None
    pass_at_k: dict[str, Interval] | None
    flip: Interval | None


def interval_requests(rows: Sequence[EvalRow], trials: int, expected: list[tuple[str, int]] | None, task_set: int,
                      counts: dict[str, tuple[int, int]]) -> tuple[list[tuple[list[float], list[str]]], list[float]]:
    """The (values, scenarios) of every scenario-aware interval of a run, and each one's scale, in `run_intervals`' order.

    TGC over the task set, each difficulty (sorted), pass^k for k = 1..trials, pass@k for k = 2..trials,
    the flip rate (the last three only with trials >= 2).
    """
    groups = difficulty_groups(rows)
    ks = list(range(1, trials + 1)) if trials >= 2 else []
    requests = [tgc_units(rows, expected, task_set)] + [tgc_units(members) for members in groups.values()]
    requests += [per_task_values(rows, k, "hat", counts) for k in ks]
    requests += [per_task_values(rows, k, "at", counts) for k in ks[1:]]
    if ks:
        verdicts = trial_verdicts(rows)
        requests.append(flip_units(verdicts, {t: scenario_of(t) for t in verdicts}))
    scales = [100.0] * (1 + len(groups)) + [1.0] * (2 * len(ks) - 1 if ks else 0) + ([100.0] if ks else [])
    return requests, scales


def run_intervals(rows: Sequence[EvalRow], trials: int, options: IntervalOptions,
                  expected: list[tuple[str, int]] | None, task_set: int,
                  counts: dict[str, tuple[int, int]]) -> RunIntervals:
    """TGC's, each difficulty's, pass^k's and pass@k's (k = 1..trials) and the flip rate's scenario-aware intervals.

    pass^1 and pass@1 are the same values.
    """
    groups = difficulty_groups(rows)
    ks = list(range(1, trials + 1)) if trials >= 2 else []
    requests, scales = interval_requests(rows, trials, expected, task_set, counts)
    units = requests[0]
    tgc_wilson = wilson(float(sum(units[0])), len(units[0]), options)
    found = cluster_intervals(requests, options, scales)
    tgc_ci, found = found[0], found[1:]
    by_diff, found = dict(zip(groups, found[:len(groups)])), found[len(groups):]
    if not ks:
        return RunIntervals(tgc_ci, tgc_wilson, by_diff, None, None, None)
    hat = dict(zip((str(k) for k in ks), found[:len(ks)]))
    at = {"1": hat["1"], **dict(zip((str(k) for k in ks[1:]), found[len(ks):2 * len(ks) - 1]))}
    return RunIntervals(tgc_ci, tgc_wilson, by_diff, {k: v for k, v in hat.items() if v is not None},
                        {k: v for k, v in at.items() if v is not None}, found[-1])


def mean_of(rows: Sequence[EvalRow], name: str) -> float | None:
    values = [getattr(r, name) for r in rows if getattr(r, name) is not None]
    return round(fmean(values), 4) if values else None


def aggregate(rows: Sequence[EvalRow], expected_battles: int, trials: int = 1,
              task_ids: Sequence[str] | None = None, options: IntervalOptions = IntervalOptions()) -> EvalAggregates:
    """Every number of `results.json` from the rows; `task_ids` is the run's task set (its manifest)."""
    judged = [r for r in rows if is_judged(r)]
    expected = [(t, k) for t in task_ids for k in range(1, trials + 1)] if task_ids is not None else None
    counted, scen_passed, unjudged = sgc_counts(rows, expected)
    statuses = scenario_statuses(rows, expected)
    ks = [str(k) for k in range(1, trials + 1)]
    task_set = max(expected_battles, len(rows))
    counts = per_task_trials(rows)
    cis = run_intervals(rows, trials, options, expected, task_set, counts)
    return EvalAggregates(
        battles=len(rows), expected_battles=expected_battles, judged=len(judged),
        infra_errors=sum(r.outcome == "infra_error" for r in rows),
        scope_errors=sum(r.outcome == "scope_error" for r in rows), missing=max(0, expected_battles - len(rows)),
        passed=sum(r.passed for r in judged), tgc=tgc(rows, task_set), tgc_judged=tgc_judged(rows),
        incomplete=len(judged) < task_set, confidence_level=options.level, tgc_ci=cis.tgc,
        tgc_wilson=cis.tgc_wilson,
        scenarios=counted + unjudged, scenarios_passed=scen_passed, scenarios_unjudged=unjudged,
        sgc=percent(scen_passed, counted + unjudged), sgc_judged=percent(scen_passed, counted),
        sgc_ci=cluster_interval(*sgc_units(rows, expected), options),
        scenario_status=statuses, scenarios_incomplete=[s for s, v in statuses.items() if v == "incomplete"],
        tgc_by_difficulty=by_difficulty(rows, options, cis.by_difficulty), outcome_counts=outcome_counts(rows),
        trials=trials,
        pass_hat_k={k: v for k in ks if (v := pass_hat_k(rows, int(k), counts)) is not None} if trials > 1 else None,
        pass_at_k={k: v for k in ks if (v := pass_at_k(rows, int(k), counts)) is not None} if trials > 1 else None,
        pass_hat_k_ci=cis.pass_hat_k, pass_at_k_ci=cis.pass_at_k,
        stability=trial_stability(rows, trials, options, task_ids, cis.flip),
        mean_trajectory={name: mean_of(judged, name) for name in MEAN_FIELDS},
        total_calls=sum(r.calls or 0 for r in judged),
        total_duration_s=round(sum(r.duration_s or 0.0 for r in rows), 3),
        input_tokens=sum(r.input_tokens or 0 for r in rows), output_tokens=sum(r.output_tokens or 0 for r in rows),
        cost_usd=round(sum(r.cost_usd or 0.0 for r in rows), 6), cost=cost_figures(rows, task_set),
        faults=fault_aggregates(judged),
    )
