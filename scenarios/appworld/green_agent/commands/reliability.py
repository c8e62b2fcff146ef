"""`appworld-green reliability`: r_fault of an agent, its TGC with faults over its TGC without, on the same battles.

Runs `eval` twice (`green_agent.reliability.run`): `--out DIR/baseline` without faults and `DIR/faults`
with `--faults SPEC`, then writes `DIR/reliability.json` and `DIR/report.html` and prints the reliability block
(or only the JSON with --json). Exit codes as `eval`'s: 0 when every battle of both runs was judged, 2 bad input
(a bad spec is refused before anything starts), 3 infrastructure errors left after retries, 130 interrupted.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from green_agent.batch.evaluate import DEFAULT_INFRA_RETRIES, EvalRequest
from green_agent.batch.live import parse_slot_ports
from green_agent.reliability.report import reliability_lines
from green_agent.reliability.run import RELIABILITY_FILE, REPORT_FILE, ReliabilityRequest, run_reliability
from green_agent.commands.code_options import add_code_arguments, apply_unsafe_choice
from green_agent.commands.eval import add_confidence_argument, interval_options
from green_agent.commands.fault_options import add_faults_argument, faults_of
from green_agent.engine.config import BattleChoices
from green_agent.local_battle import BLUE_HELP
from green_agent.models.scope import PREDICTOR_CHOICES, PREDICTOR_HELP, SCOPE_POLICY_HELP
from green_agent.runtime.reaper import reaped_if_killed
from kernel.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("reliability", help="r_fault: the same battles without and with faults "
                                                       "(docs/reliability.md)")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--split", help="split name (e.g. dev)")
    which.add_argument("--task-ids", help="comma-separated task ids")
    parser.add_argument("--blue", required=True, help=BLUE_HELP)
    add_faults_argument(parser, required=True)
    parser.add_argument("--out", type=Path, required=True, help="folder: baseline/, faults/, reliability.json, "
                                                                "report.html")
    parser.add_argument("--predictor", choices=PREDICTOR_CHOICES, help=PREDICTOR_HELP)
    parser.add_argument("--scope-policy", choices=("advise", "enforce"), help=SCOPE_POLICY_HELP)
    add_code_arguments(parser)
    parser.add_argument("--workers", type=int, default=1, help="world slots run in parallel (default 1)")
    parser.add_argument("--trials", type=int, default=1, help="battles per task, in each run")
    parser.add_argument("--resume", action="store_true", help="continue both runs in --out")
    parser.add_argument("--deadline", type=float, help="seconds Blue may work per battle")
    parser.add_argument("--first-slot", type=int, default=0, help="lowest world slot index to use (default 0)")
    parser.add_argument("--slot-ports", help="explicit slot ports ENV:APIS:GATEWAY[,...], one triple per worker")
    add_confidence_argument(parser)
    parser.add_argument("--json", action="store_true", help="print only reliability.json on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    faults = faults_of(args)  # bad input before anything starts
    assert faults is not None  # --faults is required
    level = interval_options(args, settings).level
    settings = apply_unsafe_choice(args, settings)
    request = ReliabilityRequest(faults=faults, eval=EvalRequest(
        split=args.split, task_ids=args.task_ids.split(",") if args.task_ids else None,
        choices=BattleChoices(blue=args.blue, predictor=args.predictor, scope_policy=args.scope_policy,
                              interaction=args.interaction, deadline_s=args.deadline),
        workers=args.workers, trials=args.trials, out=args.out, resume=args.resume,
        max_infra_retries=DEFAULT_INFRA_RETRIES, first_slot=args.first_slot,
        slot_specs=parse_slot_ports(args.slot_ports) if args.slot_ports else None, confidence_level=level))
    with reaped_if_killed():
        outcome = run_reliability(request, settings)
    if args.json and outcome.reliability is not None:
        print(outcome.reliability.model_dump_json(indent=2))
    elif outcome.reliability is not None:
        print("\n".join(reliability_lines(outcome.reliability)))
        print(f"  reliability {args.out / RELIABILITY_FILE}\n  report {args.out / REPORT_FILE}")
    if outcome.interrupted:
        return 130
    runs = [outcome.baseline.results, outcome.faulted.results if outcome.faulted else None]
    return 3 if any(r is not None and r.aggregates.infra_errors for r in runs) else 0
