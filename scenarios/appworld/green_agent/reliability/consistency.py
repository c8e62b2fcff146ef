"""Consistency over repeated trials: pass^k, outcome, trajectory and resource consistency of one run.

Input: a run's rows (`EvalRow`) with K >= 2 trials per task, and per battle its API call sequence (app.api names
in call order, from its trace). A task counts when every one of its K trials was judged. Figures (definitions and
sources in docs/reliability.md), each a mean over those tasks, each with the scenario-aware interval every figure
in [0, 1] of this project carries (`green_agent.stats.intervals.cluster_interval`):
- pass^k, k = 1..K: per task C(c, k) / C(n, k) for c passes of n trials (tau-bench's unbiased estimate of the
  chance that k trials all pass; `scipy.special.comb`);
- outcome consistency: per task (2p - 1)^2, p = c / n (Rabanser et al.'s corrected form: 1 when every trial
  agrees, 0 at p = 1/2);
- trajectory consistency: per task, the mean over pairs of trials of `difflib.SequenceMatcher`'s ratio of their
  API sequences (2 * matched / total length: which APIs were called and in what order; 1 when identical; two
  empty sequences count as alike);
- resource consistency: exp(-mean CV), the coefficient of variation (`scipy.stats.variation`, population form)
  of each task's trials in calls, seconds and tokens (the purple's reported ones, only where every trial of the
  task reports them); a task whose resource mean is 0 has no CV for it and is left out of that resource. No
  interval: exp(-CV) is not a proportion of anything.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher
from itertools import combinations

import numpy as np

from green_agent.models.eval_run import EvalRow
from green_agent.models.reliability_profile import Consistency, Figure
from green_agent.stats.intervals import ONE_SCENARIO, IntervalOptions, cluster_interval

JUDGED_OUT = ("infra_error", "scope_error")
Sequences = Callable[[EvalRow], list[str]]


def pass_hat_k(passes: int, trials: int, k: int) -> float:
    """C(c, k) / C(n, k): the unbiased estimate that k trials of the task all pass."""
    from scipy.special import comb

    return float(comb(passes, k, exact=True) / comb(trials, k, exact=True))


def outcome_consistency(passes: int, trials: int) -> float:
    """(2p - 1)^2 for the task's pass share p."""
    return (2 * passes / trials - 1) ** 2


def trajectory_similarity(sequences: Sequence[Sequence[str]]) -> float:
    """Mean pairwise `SequenceMatcher` ratio of the trials' API sequences (module docstring)."""
    pairs = list(combinations(sequences, 2))
    if not pairs:
        return 1.0
    return float(np.mean([SequenceMatcher(None, list(a), list(b), autojunk=False).ratio() for a, b in pairs]))


def resource_cv(values: Sequence[float]) -> float | None:
    """The coefficient of variation of one task's trials in one resource; None when its mean is 0."""
    from scipy.stats import variation

    array = np.asarray(values, dtype=float)
    if not len(array) or float(array.mean()) == 0:
        return None
    return float(variation(array))


def _tokens(row: EvalRow) -> float | None:
    if row.purple_input_tokens is None and row.purple_output_tokens is None:
        return None
    return float((row.purple_input_tokens or 0) + (row.purple_output_tokens or 0))


RESOURCES: dict[str, Callable[[EvalRow], float | None]] = {
    "calls": lambda r: float(r.calls) if r.calls is not None else None,
    "seconds": lambda r: r.duration_s,
    "tokens": _tokens,
}


def _figure(values: list[float], clusters: list[str], options: IntervalOptions) -> Figure:
    if not values:
        return Figure(value=None, note="no task with every trial judged")
    ci = cluster_interval(values, clusters, options, scale=1.0)
    return Figure(value=round(float(np.mean(values)), 4), ci=ci, note=None if ci else ONE_SCENARIO)


def complete_tasks(rows: Sequence[EvalRow], trials: int) -> dict[str, list[EvalRow]]:
    """Task -> its rows in trial order, for the tasks with every trial judged."""
    by_task: dict[str, list[EvalRow]] = defaultdict(list)
    for row in rows:
        if row.status != "infra_error" and row.outcome not in JUDGED_OUT:
            by_task[row.task_id].append(row)
    return {t: sorted(rs, key=lambda r: r.trial) for t, rs in by_task.items() if len(rs) == trials}


def consistency(rows: Sequence[EvalRow], trials: int, sequences: Sequences,
                options: IntervalOptions = IntervalOptions()) -> Consistency | None:
    """The run's consistency figures (module docstring); None with fewer than two trials."""
    if trials < 2:
        return None
    tasks = complete_tasks(rows, trials)
    clusters = [rs[0].scenario_id for rs in tasks.values()]
    passes = [sum(r.passed for r in rs) for rs in tasks.values()]
    hat = {str(k): _figure([pass_hat_k(c, trials, k) for c in passes], clusters, options)
           for k in range(1, trials + 1)}
    outcome = _figure([outcome_consistency(c, trials) for c in passes], clusters, options)
    trajectory = _figure([trajectory_similarity([sequences(r) for r in rs]) for rs in tasks.values()], clusters,
                         options)
    by: dict[str, float | None] = {}
    every: list[float] = []
    for name, read in RESOURCES.items():
        cvs = []
        for rs in tasks.values():
            values = [read(r) for r in rs]
            if all(v is not None for v in values):
                cv = resource_cv([float(v) for v in values if v is not None])
                if cv is not None:
                    cvs.append(cv)
        by[name] = round(float(np.exp(-np.mean(cvs))), 4) if cvs else None
        every.extend(cvs)
    resource = Figure(value=round(float(np.exp(-np.mean(every))), 4) if every else None,
                      note="no interval: exp(-CV) is not a proportion" if every else "no resource reported")
    return Consistency(trials=trials, tasks=len(tasks), pass_hat_k=hat, outcome=outcome, trajectory=trajectory,
                       resource=resource, resource_by=by)
