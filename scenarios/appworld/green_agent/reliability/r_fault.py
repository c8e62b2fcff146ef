"""Two runs of the same battles, without and with faults -> their `Reliability` (`green_agent.models.reliability`).

Contract: `reliability_of(baseline, faulted, pairs, ...)` takes the two `EvalResults` and the per-task pairing
`compare` made of them (`green_agent.batch.compare.pair_tasks`: each task's passed trials over its trials, an
unjudged trial not passed, as the headline TGC counts it). It returns None unless the baseline ran without faults
and the faulted run with them. The ratios are `green_agent.reliability.ratio.paired_ratio`, clustered by
scenario: TGC over the tasks' pass rates, SGC over each scenario's share of scenario-trials passed (`green_agent.batch.scenarios`).
Recovery comes from the faulted run's `aggregates.faults` (faults the agent received; `green_agent.reliability.faults`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from green_agent.batch.scenarios import sgc_units
from green_agent.models.comparison import TaskComparison
from green_agent.models.eval_run import EvalResults, KindFaults
from green_agent.models.reliability import KindRecovery, Reliability
from green_agent.stats.intervals import IntervalOptions
from green_agent.reliability.ratio import paired_ratio


def reliability_of(baseline: EvalResults, faulted: EvalResults, pairs: Sequence[TaskComparison], path_a: str,
                   path_b: str, options: IntervalOptions = IntervalOptions()) -> Reliability | None:
    """The reliability block of `faulted` against `baseline` (module docstring); None unless only B has faults."""
    if faulted.faults is None or baseline.faults is not None or not pairs:
        return None
    rates_a, rates_b, clusters = task_rates(pairs)
    tgc = paired_ratio(rates_a, rates_b, clusters, options)
    sgc = paired_ratio(*_sgc_rates(baseline, faulted, [p.task_id for p in pairs]), options)
    totals = faulted.aggregates.faults
    by_kind = {kind: KindRecovery(injected=k.injected, recovered=k.recovered, loud=k.silent == 0,
                                  rate=round(k.recovered / k.injected, 4) if k.injected else None)
               for kind, k in (totals.by_kind.items() if totals else [])}
    tgc_a = round(100 * sum(rates_a) / len(pairs), 2)
    tgc_b = round(100 * sum(rates_b) / len(pairs), 2)
    found = Reliability(
        faults=faulted.faults, baseline=path_a, faulted=path_b, tgc_baseline=tgc_a, tgc_faults=tgc_b,
        r_fault=tgc.ratio, r_fault_ci=tgc.interval, r_fault_note=tgc.note,
        sgc_baseline=baseline.aggregates.sgc, sgc_faults=faulted.aggregates.sgc, r_fault_sgc=sgc.ratio,
        r_fault_sgc_ci=sgc.interval, faults_injected=totals.injected if totals else 0,
        faults_recovered=totals.recovered if totals else 0, faults_undelivered=totals.undelivered if totals else 0,
        recovery_by_kind=by_kind, recovery_loud=_rate(totals.loud if totals else None),
        recovery_silent=_rate(totals.silent if totals else None),
        lost_tasks=[p.task_id for p in pairs if p.passed_b / p.trials_b < p.passed_a / p.trials_a],
        gained_tasks=[p.task_id for p in pairs if p.passed_b / p.trials_b > p.passed_a / p.trials_a], message="")
    return found.model_copy(update={"message": in_words(found)})


def _rate(totals: KindFaults | None) -> float | None:
    return round(totals.recovered / totals.injected, 4) if totals and totals.injected else None



def task_rates(pairs: Sequence[TaskComparison]) -> tuple[list[float], list[float], list[str]]:
    """Per compared task: its pass rate over its trials in the baseline and in the other run, and its scenario."""
    return ([p.passed_a / p.trials_a for p in pairs], [p.passed_b / p.trials_b for p in pairs],
            [p.scenario_id for p in pairs])


def _sgc_rates(baseline: EvalResults, faulted: EvalResults, tasks: list[str]
               ) -> tuple[list[float], list[float], list[str]]:
    """Per scenario of the compared tasks (sorted): its share of scenario-trials passed in each run, the scenario."""
    sums: list[dict[str, float]] = []
    for run in (baseline, faulted):
        keep = set(tasks)
        expected = [(t, k) for t in tasks for k in range(1, run.manifest.config.trials + 1)]
        values, clusters = sgc_units([r for r in run.rows if r.task_id in keep], expected)
        per: dict[str, float] = defaultdict(float)
        for value, cluster in zip(values, clusters):
            per[cluster] += value / run.manifest.config.trials
        sums.append(per)
    scenarios = sorted(set(sums[0]) | set(sums[1]))
    return [sums[0].get(s, 0.0) for s in scenarios], [sums[1].get(s, 0.0) for s in scenarios], scenarios


def in_words(r: Reliability) -> str:
    """The finding in one or two plain sentences."""
    if r.r_fault is None:
        return f"No r_fault: {r.r_fault_note}."
    ci = (f" ({r.r_fault_ci.level * 100:g}% CI {r.r_fault_ci.low:.2f}-{r.r_fault_ci.high:.2f})" if r.r_fault_ci
          else f" ({r.r_fault_note})")
    kept = f"{r.r_fault * 100:.0f}% of its TGC survived the faults (r_fault {r.r_fault:.2f}{ci})"
    lost = f"; {len(r.lost_tasks)} task(s) passed without faults and failed with them" if r.lost_tasks else ""
    return (f"With {r.faults_injected} fault(s) injected ({r.faults_recovered} recovered) under "
            f"{r.faults.text()}, {kept}{lost}.")
