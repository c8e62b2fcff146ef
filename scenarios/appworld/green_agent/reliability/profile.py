"""The reliability profile of one `reliability` run, from its folders: baseline + arms -> `ReliabilityProfile`.

Contract: `build_profile(baseline, arms, ...)` takes the baseline and each arm as a `NamedRun` (name, folder,
results) and returns the profile (`green_agent.models.reliability_profile`); it reads only files (results.json,
result.json, traces), so it can be recomputed without rerunning anything. Per arm, paired with the baseline by task
and trial over the tasks both ran: TGC, the uncapped ratio and its interval (`green_agent.reliability.ratio`), SGC's
the same, lost and gained tasks; a fault arm adds its recovery block (`green_agent.reliability.r_fault`). Every
battle the baseline passed and the arm did not is a lost task with its cause: the first unrecovered fault
(`models.explanation.fault_cause`), else the verdict's headline; for a paraphrase arm the wording it lost under and
the answer it gave. Consistency comes from the baseline's trials (`green_agent.reliability.consistency`), safety
from every battle (`green_agent.reliability.safety`). `axes` is the head of the page and the terminal: one line per
axis, a sentence each.
"""

from __future__ import annotations

from collections.abc import Sequence

from green_agent.batch.compare import pair_tasks
from green_agent.batch.scenarios import scenario_of
from green_agent.models.explanation import fault_cause
from green_agent.models.reliability_profile import (Arm, AxisLine, Consistency, CurvePoint, LostTask,
                                                    ReliabilityProfile, Safety)
from green_agent.reliability.arms import ArmSpec
from green_agent.reliability.consistency import consistency
from green_agent.reliability.evidence import api_sequence, result_of, trace_link
from green_agent.reliability.r_fault import reliability_of, task_rates
from green_agent.reliability.ratio import paired_ratio
from green_agent.reliability.safety import NamedRun, safety
from green_agent.reliability.words import axis_lines, profile_message
from green_agent.stats.intervals import IntervalOptions
from kernel.untrusted import one_line

MAX_ANSWER = 200


def build_profile(baseline: NamedRun, arms: Sequence[tuple[ArmSpec, NamedRun]],
                  options: IntervalOptions = IntervalOptions(), salt: str | None = None) -> ReliabilityProfile:
    """The profile (module docstring); `salt`: the fault arms' shared secret once published (else None)."""
    base = baseline.results
    built = [_arm(baseline, spec, run, options) for spec, run in arms]
    arm_models = [a for a, _ in built]
    lost = [t for _, tasks in built for t in tasks]
    curve = [CurvePoint(rate=a.rate, ratio=a.ratio, low=a.ratio_ci.low if a.ratio_ci else None,
                        high=a.ratio_ci.high if a.ratio_ci else None)
             for a in sorted((a for a in arm_models if a.axis == "faults" and a.rate is not None),
                             key=lambda a: a.rate or 0)]
    trials = base.manifest.config.trials
    steady: Consistency | None = consistency(base.rows, trials, lambda row: api_sequence(baseline.path, row), options)
    safe: Safety = safety([baseline, *[run for _, run in arms]], options)
    commitment = next((s.faults.commitment for s, _ in arms if s.faults is not None), None)
    profile = ReliabilityProfile(
        blue=base.manifest.config.blue, tasks=len(base.manifest.task_ids),
        scenarios=len({scenario_of(t) for t in base.manifest.task_ids}), trials=trials, baseline=baseline.name,
        tgc_baseline=base.aggregates.tgc, arms=arm_models, curve=curve, consistency=steady, safety=safe, lost=lost,
        fault_salt=salt, fault_commitment=commitment, message="")
    return profile.model_copy(update={"axes": axis_lines(profile), "message": profile_message(profile)})


def _arm(baseline: NamedRun, spec: ArmSpec, run: NamedRun, options: IntervalOptions) -> tuple[Arm, list[LostTask]]:
    base, results = baseline.results, run.results
    shared = [t for t in base.manifest.task_ids if t in set(results.manifest.task_ids)]
    pairs, _ = pair_tasks(base, results, shared)
    a, b, clusters = task_rates(pairs)
    tgc = paired_ratio(a, b, clusters, options)
    recovery = reliability_of(base, results, pairs, baseline.name, run.name, options) if spec.faults else None
    sgc_a, sgc_b = base.aggregates.sgc, results.aggregates.sgc
    sgc = (recovery.r_fault_sgc, recovery.r_fault_sgc_ci) if recovery else (
        round(sgc_b / sgc_a, 4) if sgc_a and sgc_b is not None else None, None)
    arm = Arm(name=spec.name, axis=spec.axis, rate=spec.faults.rate if spec.faults else None,
              strength=spec.paraphrase.strength if spec.paraphrase else None, faults=spec.faults,
              tgc=round(100 * sum(b) / len(b), 2) if b else None, sgc=sgc_b, ratio=tgc.ratio, ratio_ci=tgc.interval,
              ratio_sgc=sgc[0], ratio_sgc_ci=sgc[1], note=tgc.note,
              lost_tasks=[p.task_id for p in pairs if p.passed_b / p.trials_b < p.passed_a / p.trials_a],
              gained_tasks=[p.task_id for p in pairs if p.passed_b / p.trials_b > p.passed_a / p.trials_a],
              recovery=recovery, battles=len(results.rows), infra_errors=results.aggregates.infra_errors)
    return arm, _lost(baseline, spec, run)


MAX_HEADLINE = 160
"""Characters of the verdict's headline a paraphrase loss's cause carries (one line on the page)."""


def _lost(baseline: NamedRun, spec: ArmSpec, run: NamedRun) -> list[LostTask]:
    passed = {(r.task_id, r.trial) for r in baseline.results.rows if r.passed}
    found = []
    for row in run.results.rows:
        if (row.task_id, row.trial) not in passed or row.passed:
            continue
        result = result_of(run.path, row)
        answer = result.trajectory.submitted_answer if result and result.trajectory else None
        found.append(LostTask(arm=spec.name, task_id=row.task_id, trial=row.trial, cause=_cause(spec, row, result),
                              answer=one_line(answer, MAX_ANSWER) if answer is not None else None,
                              trace=trace_link(run.name, row)))
    return found


def _cause(spec: ArmSpec, row, result) -> str:
    if result is None:
        return f"{row.outcome}: its result.json could not be read"
    fault = fault_cause(result)
    if fault is not None:
        return fault
    if spec.paraphrase is not None:
        chosen = result.paraphrase or row.paraphrase
        which = f" (variant {chosen.variant}, {chosen.source})" if chosen else " (the original wording: this Green " \
                                                                               "did not apply the paraphrase)"
        told = f": {one_line(result.explanation.headline, MAX_HEADLINE)}" if result.explanation else ""
        return f"{row.outcome} under the {spec.paraphrase.strength} wording{which}{told}"
    headline = result.explanation.headline if result.explanation else row.outcome
    return headline

