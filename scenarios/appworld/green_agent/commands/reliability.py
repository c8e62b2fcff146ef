"""`appworld-green reliability`: an agent's reliability profile, one baseline and its arms on the same battles.

`--faults SPEC` (its rate may be a sweep, `rate=0.1+0.3`: one arm per rate), `--paraphrase S1+S2` (one arm per
strength; `--paraphrase-seed`, `--paraphrase-set`), `--trials K` (consistency). Runs `eval` into `DIR/baseline` and
`DIR/<arm>` (`green_agent.reliability.run`), writes `DIR/reliability.json` and `DIR/reliability.html`, and prints the
profile (or only the JSON with --json). Exit codes as `eval`'s: 0 when every battle of every run was judged,
2 bad input (a bad spec, rate or strength is refused before anything starts), 3 infrastructure errors left after retries, 130 interrupted.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from green_agent.batch.evaluate import DEFAULT_INFRA_RETRIES, EvalRequest
from green_agent.batch.live import parse_slot_ports
from green_agent.reliability.arms import build_arms, fault_sweep, strengths
from green_agent.reliability.report import profile_lines
from green_agent.reliability.run import RELIABILITY_FILE, ReliabilityRequest, run_reliability
from green_agent.runfolder.layout import PROFILE_PAGE
from green_agent.commands.code_options import add_code_arguments, apply_unsafe_choice
from green_agent.commands.eval import add_confidence_argument, interval_options
from green_agent.commands.fault_options import FAULTS_HELP
from green_agent.engine.config import BattleChoices
from green_agent.commands.paraphrase_options import add_paraphrase_args
from green_agent.local_battle import BLUE_HELP
from green_agent.models.scope import PREDICTOR_CHOICES, PREDICTOR_HELP, SCOPE_POLICY_HELP
from green_agent.runtime.reaper import reaped_if_killed
from kernel.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("reliability", help="the reliability profile: one baseline and its arms (fault "
                                                       "rates, paraphrase strengths), trials (docs/reliability.md)")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--split", help="split name (e.g. dev)")
    which.add_argument("--task-ids", help="comma-separated task ids")
    parser.add_argument("--blue", required=True, help=BLUE_HELP)
    parser.add_argument("--faults", metavar="SPEC", help=FAULTS_HELP + "; rate=R1+R2+... is a sweep, one arm per rate")
    parser.add_argument("--paraphrase", metavar="STRENGTHS", help="one arm per strength, S1+S2+... (mild, medium, "
                                                                  "strong, naturalistic; docs/paraphrases.md)")
    add_paraphrase_args(parser, strength=False)
    parser.add_argument("--out", type=Path, required=True, help="folder: baseline/, one folder per arm, "
                                                                "reliability.json, reliability.html")
    parser.add_argument("--predictor", choices=PREDICTOR_CHOICES, help=PREDICTOR_HELP)
    parser.add_argument("--scope-policy", choices=("advise", "enforce"), help=SCOPE_POLICY_HELP)
    add_code_arguments(parser)
    parser.add_argument("--workers", type=int, default=1, help="world slots run in parallel (default 1)")
    parser.add_argument("--trials", type=int, default=1, help="battles per task, in each run (2 or more: consistency)")
    parser.add_argument("--resume", action="store_true", help="continue every run in --out")
    parser.add_argument("--deadline", type=float, help="seconds Blue may work per battle")
    parser.add_argument("--first-slot", type=int, default=0, help="lowest world slot index to use (default 0)")
    parser.add_argument("--slot-ports", help="explicit slot ports ENV:APIS:GATEWAY[,...], one triple per worker")
    add_confidence_argument(parser)
    parser.add_argument("--json", action="store_true", help="print only reliability.json on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    arms = build_arms(fault_sweep(args.faults) if args.faults else [],  # bad input before anything starts
                      strengths(args.paraphrase) if args.paraphrase else [], args.paraphrase_seed or 0,
                      args.paraphrase_set)
    level = interval_options(args, settings).level
    settings = apply_unsafe_choice(args, settings)
    request = ReliabilityRequest(arms=arms, eval=EvalRequest(
        split=args.split, task_ids=args.task_ids.split(",") if args.task_ids else None,
        choices=BattleChoices(blue=args.blue, predictor=args.predictor, scope_policy=args.scope_policy,
                              interaction=args.interaction, deadline_s=args.deadline),
        workers=args.workers, trials=args.trials, out=args.out, resume=args.resume,
        max_infra_retries=DEFAULT_INFRA_RETRIES, first_slot=args.first_slot,
        slot_specs=parse_slot_ports(args.slot_ports) if args.slot_ports else None, confidence_level=level))
    with reaped_if_killed():
        outcome = run_reliability(request, settings)
    if args.json and outcome.profile is not None:
        print(outcome.profile.model_dump_json(indent=2))
    elif outcome.profile is not None:
        print("\n".join(profile_lines(outcome.profile)))
        print(f"  profile {args.out / RELIABILITY_FILE}\n  page {args.out / PROFILE_PAGE}")
    if outcome.interrupted:
        return 130
    return 3 if outcome.infra_errors else 0
