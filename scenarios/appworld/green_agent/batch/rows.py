"""Files on disk -> rows and results: the one path both `eval` and `report` use.

`build_results(out)` reads `run.json`, every `tasks/.../result.json` and `events.jsonl`, and returns
the `EvalResults` that `results.json` holds; `write_outputs(out)` writes `results.json`,
`agentbeats_results.json` and `report.html` from it, scrubbed of every secret value this process knows
(`kernel.scrubber`; each result.json and call log was scrubbed when it was written). Nothing here runs a
battle, so a report can be regenerated at any time (also while a run is going on, or after it was interrupted).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kernel.atomic import atomic_write_text
from green_agent.batch.aggregate import aggregate, scenario_of
from green_agent.batch.cost import purple_cost
from green_agent.reliability.faults import row_faults
from green_agent.batch.checkpoint import (AGENTBEATS_FILE, REPORT_FILE, RESULTS_FILE, BattleKey, battle_keys,
                                          load_results)
from green_agent.batch.provenance import rejudge_command
from green_agent.batch.report_html import render_report
from green_agent.batch.standard import custom_settings
from kernel.errors import BadInputError, DiskFullError
from kernel.scrubber import scrub, scrub_data
from green_agent.models.eval_run import AgentBeatsResults, EvalAggregates, EvalResults, EvalRow, Interval, RunStatus
from green_agent.models.result import BattleResult
from green_agent.runfolder.layout import result_path
from green_agent.runfolder.reader import RunFolder
from green_agent.stats.intervals import ONE_SCENARIO, IntervalOptions


def row_from_result(result: BattleResult, key: BattleKey, result_path: str, attempts: int = 1,
                    difficulty: int | None = None) -> EvalRow:
    """Flatten one battle's result into a row."""
    evaluation = result.evaluation
    traj = result.trajectory.model_dump() if result.trajectory else {}
    usage = result.scope.usage.model_dump() if result.scope and result.scope.usage else {}
    duration = (result.finished_at - result.started_at).total_seconds() if result.finished_at else None
    return EvalRow(
        task_id=key.task_id, trial=key.trial, scenario_id=scenario_of(key.task_id),
        difficulty=result.difficulty if result.difficulty is not None else difficulty,
        battle_id=result.battle_id, status=result.status, outcome=result.outcome,
        passed=bool(evaluation and evaluation.success and result.outcome == "passed"),
        tests_passed=len(evaluation.passes) if evaluation else None,
        tests_total=evaluation.num_tests if evaluation else None,
        calls=traj.get("total_calls"), failed_calls=traj.get("failed_calls"), error_rate=traj.get("error_rate"),
        p50_latency_ms=traj.get("p50_duration_ms"), p95_latency_ms=traj.get("p95_duration_ms"),
        scope_size=len(result.scope.apis) if result.scope and result.scope.apis is not None else None,
        scope_recall=result.scope.recall if result.scope else None,
        missed_gold=(result.scope.missed_gold or []) if result.scope else [],
        refused_gold=result.scope.refused_gold if result.scope else [],
        api_precision=traj.get("api_precision"), api_recall=traj.get("api_recall"), api_f1=traj.get("api_f1"),
        duration_s=round(duration, 3) if duration is not None else None, attempts=max(1, attempts),
        input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"),
        cost_usd=usage.get("cost_usd"), **purple_cost(result).model_dump(), faults=row_faults(result),
        paraphrase=result.paraphrase,
        error_type=result.error.type if result.error else None, error_step=result.error.step if result.error else None,
        result_path=result_path,
    )


def start_counts(events: list[dict[str, Any]], keys: list[BattleKey]) -> Counter[BattleKey]:
    """How many attempts of each battle of `keys` started, from `events.jsonl`'s records (others are ignored)."""
    wanted = set(keys)
    return Counter(BattleKey(e["task_id"], e["trial"]) for e in events
                   if e.get("event") == "start" and isinstance(e.get("task_id"), str)
                   and isinstance(e.get("trial"), int) and (e["task_id"], e["trial"]) in wanted)


def run_status(rows: list[EvalRow], expected: int) -> RunStatus:
    if len(rows) < expected:
        return "interrupted"
    return "incomplete" if any(r.outcome == "infra_error" for r in rows) else "completed"


def build_results(out: Path, options: IntervalOptions = IntervalOptions()) -> EvalResults:
    """Read the run directory and compute `results.json` (intervals at `options`). BadInputError if not a run."""
    out = Path(out)
    folder = RunFolder(out)
    manifest = folder.manifest()
    if manifest is None:
        raise BadInputError(f"{out} is not an eval run directory (no run.json): run `appworld-green eval` first")
    trials = manifest.config.trials
    keys = battle_keys(manifest.task_ids, trials)
    results = load_results(out, keys, trials)
    starts = start_counts(folder.events(), keys)
    rows = []
    for key in keys:
        if key not in results:
            continue
        info = folder.task_info(key.task_id)
        rows.append(row_from_result(results[key], key, result_path(key, trials), starts.get(key, 1),
                                    info.difficulty if info else None))
    custom = custom_settings(manifest.config, manifest.provenance, [r.isolation for r in results.values()])
    provenance = manifest.provenance.model_copy(update={"rejudge_command": rejudge_command(out)}) \
        if manifest.provenance else None
    exports = [folder.otlp_export(key, trials) for key in keys if key in results]
    dropped = [e.dropped for e in exports if e is not None]
    return EvalResults(status=run_status(rows, len(keys)), manifest=manifest, rows=rows,
                       aggregates=aggregate(rows, len(keys), trials, manifest.task_ids, options),
                       faults=manifest.config.faults, fault_salt=manifest.fault_salt, standard=not custom,
                       custom=custom, provenance=provenance, otlp_spans_dropped=sum(dropped) if dropped else None,
                       generated_at=datetime.now(timezone.utc))


def _bounds(interval: Interval | None) -> list[float] | None:
    return [interval.low, interval.high] if interval else None


def interval_fields(agg: EvalAggregates) -> dict[str, Any]:
    """The intervals as flat leaderboard fields: `[low, high]` lists beside the figures they bound."""
    stab = agg.stability
    return {"confidence_level": agg.confidence_level, "tgc_ci": _bounds(agg.tgc_ci),
            "tgc_ci_method": agg.tgc_ci.method if agg.tgc_ci else None, "tgc_wilson": _bounds(agg.tgc_wilson),
            "sgc_ci": _bounds(agg.sgc_ci),
            "tgc_by_difficulty_ci": {k: _bounds(v.ci) for k, v in agg.tgc_by_difficulty.items()},
            "pass_hat_k_ci": {k: _bounds(v) for k, v in (agg.pass_hat_k_ci or {}).items()} or None,
            "flip_rate": stab.flip_rate if stab else None, "flip_rate_ci": _bounds(stab.flip_rate_ci) if stab else None,
            "tgc_spread_p95": stab.tgc_spread_p95 if stab else None,
            "no_interval": ONE_SCENARIO if agg.tgc is not None and agg.tgc_ci is None else None}


def agentbeats_results(results: EvalResults) -> AgentBeatsResults:
    """The leaderboard shape: a summary record, then one numeric record per battle (no task content)."""
    agg = results.aggregates
    summary = {"kind": "summary", "run_id": results.manifest.run_id, "split": results.manifest.config.split,
               "predictor": results.manifest.config.predictor, "scope_policy": results.manifest.config.scope_policy,
               "interaction": results.manifest.config.interaction,
               "trials": agg.trials,
               "tasks": len(results.manifest.task_ids), "battles": agg.battles, "judged": agg.judged,
               "infra_errors": agg.infra_errors, "scope_errors": agg.scope_errors, "tgc": agg.tgc, "sgc": agg.sgc,
               "incomplete": agg.incomplete, "tgc_judged": agg.tgc_judged, "sgc_judged": agg.sgc_judged,
               "tgc_by_difficulty": {k: v.tgc for k, v in agg.tgc_by_difficulty.items()},
               "pass_hat_k": agg.pass_hat_k, **interval_fields(agg), "outcome_counts": agg.outcome_counts,
               "mean_calls": agg.mean_trajectory.get("calls"), "mean_api_f1": agg.mean_trajectory.get("api_f1"),
               "cost_usd": agg.cost_usd, "standard": results.standard, "custom": results.custom,
               "provenance": results.provenance.model_dump(mode="json") if results.provenance else None}
    per_battle = [{"kind": "battle", **row.model_dump(include={
        "task_id", "trial", "scenario_id", "difficulty", "outcome", "passed", "tests_passed", "tests_total", "calls",
        "failed_calls", "p50_latency_ms", "scope_recall", "api_f1", "duration_s", "attempts"})}
        for row in results.rows]
    return AgentBeatsResults(status="completed" if results.status == "completed" else "failed",
                             participants={"blue_agent": results.manifest.config.blue}, results=[summary, *per_battle])


def write_outputs(out: Path, options: IntervalOptions = IntervalOptions()) -> EvalResults:
    """Write `results.json`, `agentbeats_results.json` and `report.html` from the files on disk.

    On a full disk, `DiskFullError` names the file and what is intact: the battles' own result.json."""
    out = Path(out)
    results = build_results(out, options)
    results = EvalResults.model_validate(scrub_data(results.model_dump(mode="json")))  # every secret known here
    try:
        atomic_write_text(out / RESULTS_FILE, results.model_dump_json(indent=2))
        atomic_write_text(out / AGENTBEATS_FILE, agentbeats_results(results).model_dump_json(indent=2))
        atomic_write_text(out / REPORT_FILE, scrub(render_report(out, results)))
    except DiskFullError as exc:
        agg = results.aggregates
        raise DiskFullError(f"{exc}. Intact: {agg.judged} judged battle(s) of {agg.battles}, each in its own "
                            f"result.json under {out / 'tasks'}; once there is space, `appworld-green report {out}` "
                            "writes the run's results and report from them") from exc
    return results
