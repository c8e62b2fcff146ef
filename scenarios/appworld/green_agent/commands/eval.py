"""`appworld-green eval`: evaluate a split (or a task list) on a pool of world slots, local or on Ray.

Shows progress on stderr (a live bar on a terminal, plain lines otherwise), then a summary (or only
`results.json` with --json). Exit codes: 0 when every battle was judged (whatever Blue scored), 2 for
bad input (including an unwritable --out or a run directory another process is writing), 3 when some
battles still ended in infrastructure errors after their retries (rerun them with --resume), 130
when interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from pathlib import Path

from green_agent.batch.checkpoint import AGENTBEATS_FILE, REPORT_FILE, RESULTS_FILE
from green_agent.batch.evaluate import DEFAULT_INFRA_RETRIES, EvalOutcome, EvalRequest, run_eval
from green_agent.batch.executor_plan import EXECUTORS
from green_agent.commands.code_options import add_code_arguments, apply_unsafe_choice
from green_agent.commands.fault_options import add_faults_argument, faults_of
from green_agent.commands.paraphrase_options import add_paraphrase_args, paraphrase_spec_from
from green_agent.engine.config import BattleChoices
from green_agent.batch.live import parse_slot_ports
from green_agent.batch.standard import standard_sentence
from green_agent.batch.ray.local import only_loopback, private_netns_argv, rerun_in_private_netns
from green_agent.local_battle import BLUE_HELP, BUILTIN_BLUES
from green_agent.runtime.reaper import reaped_if_killed
from kernel.errors import BadInputError
from green_agent.models.eval_run import EvalResults, Interval, Stability
from green_agent.models.explanation import explain
from green_agent.models.result import BattleResult
from green_agent.models.scope import PREDICTOR_CHOICES, PREDICTOR_HELP, SCOPE_POLICY_HELP
from green_agent.stats.intervals import ONE_SCENARIO, IntervalOptions, check_level
from kernel.settings import Settings
from kernel.untrusted import one_line


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("eval", help="evaluate a whole split: TGC, SGC, per-task results, HTML report")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--split", help="split name (e.g. dev, train)")
    which.add_argument("--task-ids", help="comma-separated task ids")
    parser.add_argument("--blue", required=True, help=BLUE_HELP)
    parser.add_argument("--predictor", choices=PREDICTOR_CHOICES, help=PREDICTOR_HELP)
    parser.add_argument("--scope-policy", choices=("advise", "enforce"), help=SCOPE_POLICY_HELP)
    add_code_arguments(parser)
    add_faults_argument(parser)
    add_paraphrase_args(parser)
    parser.add_argument("--workers", type=int, default=1, help="world slots run in parallel (default 1)")
    parser.add_argument("--trials", type=int, default=1, help="battles per task (pass^k when > 1)")
    parser.add_argument("--out", type=Path, required=True, help="run directory")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out, skipping judged battles")
    parser.add_argument("--deadline", type=float, help="seconds Blue may work per battle")
    parser.add_argument("--max-infra-retries", type=int, default=DEFAULT_INFRA_RETRIES,
                        help=f"retries of a battle that hit an infrastructure error (default {DEFAULT_INFRA_RETRIES})")
    parser.add_argument("--first-slot", type=int, default=0, help="lowest world slot index to use (default 0)")
    parser.add_argument("--slot-ports", help="explicit slot ports ENV:APIS:GATEWAY[,...], one triple per worker")
    parser.add_argument("--executor", choices=EXECUTORS, default="local",
                        help="where battles run: local (a slot pool on this machine, default) or ray (one slot actor "
                             "per worker on a Ray cluster's nodes)")
    parser.add_argument("--ray-address", help="Ray cluster to join (--executor ray); default: start a local Ray "
                                              "instance, in a private loopback-only network namespace when possible")
    add_confidence_argument(parser)
    parser.add_argument("--json", action="store_true", help="print only results.json on stdout")
    parser.set_defaults(func=run)


def add_confidence_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--confidence", type=float, metavar="LEVEL",
                        help="level of the confidence intervals, e.g. 0.9 (default CONFIDENCE_LEVEL or 0.95)")


def interval_options(args: argparse.Namespace, settings: Settings) -> IntervalOptions:
    """The intervals' options: --confidence, else the setting; bad input if it is not a level."""
    level = args.confidence if args.confidence is not None else settings.confidence_level
    try:
        return IntervalOptions(level=check_level(level))
    except ValueError as exc:
        raise BadInputError(f"--confidence: {exc}") from None


def run(args: argparse.Namespace, settings: Settings) -> int:
    faults = faults_of(args)  # bad input before anything starts
    paraphrase = paraphrase_spec_from(args)
    settings = apply_unsafe_choice(args, settings)
    if args.executor == "ray" and not args.ray_address:
        _keep_local_ray_on_loopback(args)
    elif args.ray_address and args.executor != "ray":
        raise BadInputError("--ray-address needs --executor ray")
    request = EvalRequest(
        split=args.split, task_ids=args.task_ids.split(",") if args.task_ids else None,
        choices=BattleChoices(blue=args.blue, predictor=args.predictor, scope_policy=args.scope_policy,
                              interaction=args.interaction,
                              deadline_s=args.deadline, faults=faults, paraphrase=paraphrase),
        workers=args.workers, trials=args.trials, out=args.out, resume=args.resume, max_infra_retries=args.max_infra_retries, first_slot=args.first_slot,
        slot_specs=parse_slot_ports(args.slot_ports) if args.slot_ports else None,
        executor=args.executor, ray_address=args.ray_address, confidence_level=interval_options(args, settings).level)
    # a SIGKILLed local eval's slot servers, gateways and Blues are ended, not orphaned
    with reaped_if_killed() if args.executor == "local" else contextlib.nullcontext():
        outcome = run_eval(request, settings)
    if args.json:
        print(outcome.results.model_dump_json(indent=2))
    else:
        print(summary(outcome.results, args.out, outcome))
    if outcome.interrupted:
        return 130
    return 3 if outcome.results.aggregates.infra_errors else 0


def _keep_local_ray_on_loopback(args: argparse.Namespace) -> None:
    """Rerun this command in a private network namespace for its local Ray instance (see `green_agent.batch.ray.local`)."""
    if private_netns_argv(sys.orig_argv[1:]) is None:
        if not only_loopback():
            logging.getLogger(__name__).warning(
                "the local Ray instance binds to this machine's network address and has no authentication; "
                "run as root (a private network namespace is then used) or join a cluster with --ray-address")
        return
    if args.blue not in BUILTIN_BLUES:
        raise BadInputError("--blue URL with --executor ray and no --ray-address: the local Ray instance runs in a "
                            "private network namespace that cannot reach that URL; pass --ray-address of a cluster "
                            "whose nodes reach the Blue")
    sys.stdout.flush()
    sys.stderr.flush()
    rerun_in_private_netns([sys.executable, *sys.orig_argv[1:]])


def ci_text(interval: Interval | None, digits: int = 1, figure: float | None = None) -> str:
    """` [95% CI 34.7-83.2]`; without an interval, why in words when the figure exists (one scenario), else nothing."""
    if interval is None:
        return f" [{ONE_SCENARIO}]" if figure is not None else ""
    return f" [{interval.level * 100:g}% CI {interval.low:.{digits}f}-{interval.high:.{digits}f}]"


def _stability_lines(stab: Stability) -> list[str]:
    trials = ", ".join("n/a" if v is None else f"{v:.1f}" for v in stab.tgc_by_trial.values())
    lines = [f"  stability over {stab.tasks} task(s): flip rate {pct(stab.flip_rate)}%{ci_text(stab.flip_rate_ci, figure=stab.flip_rate)} "
             f"(verdict differs between trials); TGC per trial {trials}"]
    if stab.tgc_spread_p95 is not None:
        lines.append(f"  two single runs of this agent differ in TGC by {stab.tgc_spread_mean:.1f} points on average, "
                     f"by up to {stab.tgc_spread_p95:.1f} points 95% of the time")
    return lines


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def summary(results: EvalResults, out: Path, outcome: EvalOutcome | None = None) -> str:
    """A few human lines about a run."""
    agg, cfg = results.aggregates, results.manifest.config
    lines = [f"run {results.manifest.run_id}: {results.status}; blue {cfg.blue}, predictor {cfg.predictor}, "
             f"{len(results.manifest.task_ids)} task(s) x {cfg.trials} trial(s)"]
    if outcome is not None:
        lines.append(f"  this invocation ran {outcome.ran} battle(s), skipped {outcome.skipped} already judged"
                     + (" (interrupted: rerun with --resume)" if outcome.interrupted else ""))
    marker = " incomplete" if agg.incomplete else ""
    wilson = f" (Wilson {agg.tgc_wilson.low:.1f}-{agg.tgc_wilson.high:.1f})" if agg.tgc_wilson else ""
    lines.append(f"  TGC {pct(agg.tgc)}{marker}{ci_text(agg.tgc_ci, figure=agg.tgc)}{wilson} ({agg.passed}/{agg.expected_battles} "
                 f"battles of the task set passed), SGC {pct(agg.sgc)}{marker}{ci_text(agg.sgc_ci, figure=agg.sgc)} "
                 f"({agg.scenarios_passed}/{agg.scenarios} scenarios)")
    calls = agg.mean_trajectory.get("calls")
    if calls is not None:  # beside TGC: what the score cost (a reckless retrier's calls show here)
        lines.append(f"  calls per battle {calls:.1f} (mean over the judged battles)")
    if results.faults is not None:
        lines.append(fault_line(results))
    if agg.incomplete:
        lines.append(f"  judged only: TGC {pct(agg.tgc_judged)} ({agg.passed}/{agg.judged} judged battles), "
                     f"SGC {pct(agg.sgc_judged)} (the unjudged ones count as not passed above)")
    if agg.scenarios_incomplete:
        shown = ", ".join(agg.scenarios_incomplete[:10]) + (" ..." if len(agg.scenarios_incomplete) > 10 else "")
        lines.append(f"  scenarios incomplete {len(agg.scenarios_incomplete)} (a task unjudged or without result; "
                     f"not passed): {shown}")
    if agg.tgc_by_difficulty:
        lines.append("  by difficulty: " + ", ".join(f"{k}: {pct(s.tgc)}{ci_text(s.ci, figure=s.tgc)} (n={s.battles})"
                                                     for k, s in agg.tgc_by_difficulty.items()))
    if agg.pass_hat_k:
        cis = agg.pass_hat_k_ci or {}
        lines.append("  pass^k: " + ", ".join(f"k={k} {v:.3f}{ci_text(cis.get(k), 3)}" for k, v in agg.pass_hat_k.items()))
    if agg.stability:
        lines.extend(_stability_lines(agg.stability))
    if agg.scope_errors:
        lines.append(f"  scope errors {agg.scope_errors} (the enforced scope refused a gold API; not passed in TGC, "
                     "not the Blue's loss)")
    lines.append("  outcomes: " + ", ".join(f"{k} {v}" for k, v in agg.outcome_counts.items() if v))
    lines.append(f"  {standard_sentence(results.standard, results.custom)}")
    if agg.infra_errors or agg.missing:
        lines.append(f"  infra errors {agg.infra_errors}, not run {agg.missing} (not passed in TGC, not the "
                     "Blue's loss: rerun with --resume)")
    lines += failure_lines(results, out)
    lines.append(f"  results {out / RESULTS_FILE}\n  agentbeats {out / AGENTBEATS_FILE}\n  report {out / REPORT_FILE}")
    return "\n".join(lines)


MAX_FAILURES_SHOWN = 3


def fault_line(results: EvalResults) -> str:
    """A reliability run's injected faults: recovered of injected, by kind, and what never reached the agent."""
    totals = results.aggregates.faults
    if totals is None:
        return f"  faults under {results.faults.text() if results.faults else '?'}: none reached the agent"
    kinds = ", ".join(f"{kind} {k.recovered}/{k.injected}" for kind, k in totals.by_kind.items())
    extra = f"; {totals.undelivered} undelivered" if totals.undelivered else ""
    extra += f"; {totals.retry_after_ignored} call(s) within a 429's retry-after" if totals.retry_after_ignored else ""
    return (f"  faults injected {totals.injected}, recovered {totals.recovered} (by kind, recovered/injected: "
            f"{kinds or 'none'}){extra}; not counted as the agent's failed calls")


def failure_lines(results: EvalResults, out: Path, limit: int = MAX_FAILURES_SHOWN) -> list[str]:
    """The first `limit` battles that did not pass, each with its verdict's one-line why (from its result.json)."""
    failed = [row for row in results.rows if row.outcome != "passed"]
    if not failed:
        return []
    lines = [f"  first {min(limit, len(failed))} of {len(failed)} not passed:"]
    for row in failed[:limit]:
        lines.append(f"    {row.task_id} (trial {row.trial}): {one_line(_why(out / row.result_path, row.outcome), 300)}")
    return lines


def _why(path: Path, outcome: str) -> str:
    try:
        return explain(BattleResult.model_validate_json(path.read_text()), local=True).headline
    except (OSError, ValueError) as exc:  # the summary never fails on one unreadable record
        return f"{outcome} (its result.json could not be read: {type(exc).__name__})"
