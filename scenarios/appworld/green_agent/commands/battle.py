"""`appworld-green battle`: run one battle and print a short summary (or only JSON with --json).

Where it runs: `--env-url` (with `--apis-url`, `--gateway-url`) attaches to running servers; `--slot-ports
ENV:APIS:GATEWAY` starts a slot on those ports (a machine shared with other users or a test suite: pick free
ones); `--first-slot K` starts the first free slot K..7; `--slot K` (default 0) attaches to slot K when its
servers answer (`world up`), else starts it. A slot the battle starts writes everything into the run folder.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from green_agent.runtime.reaper import reaped_if_killed
from green_agent.commands.code_options import add_code_arguments, apply_unsafe_choice
from green_agent.commands.fault_options import add_faults_argument, faults_of
from green_agent.commands.paraphrase_options import add_paraphrase_args, paraphrase_spec_from
from green_agent.batch.live import choose_slots, parse_slot_ports
from green_agent.engine.config import BattleChoices
from green_agent.local_battle import BLUE_HELP, BattleRequest, run_battle_request
from green_agent.trace.otel import hook as otel_hook
from green_agent.models.explanation import explain, plain_lines
from green_agent.models.result import BattleResult
from green_agent.runtime.slot import SlotSpec
from green_agent.models.scope import PREDICTOR_CHOICES, PREDICTOR_HELP, SCOPE_POLICY_HELP
from kernel.errors import BadInputError
from kernel.settings import Settings
from kernel.untrusted import one_line


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("battle", help="run one battle: Green sets up a task, Blue solves it, Green judges")
    parser.add_argument("--task-id", required=True, help="task id, 'Task description: <id>', or N (N-th task of the split)")
    parser.add_argument("--blue", required=True, help=BLUE_HELP)
    parser.add_argument("--predictor", choices=PREDICTOR_CHOICES, help=PREDICTOR_HELP)
    parser.add_argument("--scope-policy", choices=("advise", "enforce"), help=SCOPE_POLICY_HELP)
    add_code_arguments(parser)
    add_faults_argument(parser)
    add_paraphrase_args(parser)
    parser.add_argument("--env-url", help="use this running AppWorld env server instead of starting a slot")
    parser.add_argument("--apis-url", help="the running APIs server (with --env-url)")
    parser.add_argument("--gateway-url", help="the running MCP gateway (with --env-url)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--slot", type=int, help="world slot K (ports 8000/9000/10000 + 10*K; default 0): attached "
                                                "to when its servers answer (`world up`), else started")
    where.add_argument("--first-slot", type=int, help="start the first free world slot K..7 (free ports, no other "
                                                      "battle's lock)")
    where.add_argument("--slot-ports", help="start a slot on these ports, ENV:APIS:GATEWAY (free ones: on a shared "
                                            "machine, the fixed slots may be another user's)")
    parser.add_argument("--out", type=Path, help="run directory (default runs/<battle>-<task>/)")
    parser.add_argument("--deadline", type=float, help="seconds Blue may work (default COMPLETION_DEADLINE_S)")
    parser.add_argument("--json", action="store_true", help="print only the result JSON on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    faults = faults_of(args)  # bad input before anything starts
    paraphrase = paraphrase_spec_from(args)
    settings = apply_unsafe_choice(args, settings)
    choices = BattleChoices(blue=args.blue, predictor=args.predictor, scope_policy=args.scope_policy,
                            interaction=args.interaction,
                            deadline_s=args.deadline, faults=faults, paraphrase=paraphrase)
    request = BattleRequest(task=args.task_id, choices=choices, env_url=args.env_url, apis_url=args.apis_url,
                            gateway_url=args.gateway_url, slot=args.slot or 0, slot_spec=slot_spec(args),
                            out=args.out)
    with reaped_if_killed():  # a SIGKILLed battle's slot servers, gateway and Blue are ended, not orphaned
        result = run_battle_request(request, settings)
    otel_hook.flush()  # OTEL_EXPORTER_OTLP_ENDPOINT set: the battle's spans are sent (bounded) before we exit
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        print(summary(result))
    return exit_code(result)


def slot_spec(args: argparse.Namespace) -> SlotSpec | None:
    """The slot `--slot-ports` names, or the free one `--first-slot` finds; None for `--slot` / `--env-url`."""
    if args.env_url and (args.slot_ports or args.first_slot is not None or args.slot is not None):
        raise BadInputError("--env-url attaches to running servers: leave out --slot, --first-slot and --slot-ports")
    if args.slot_ports:
        specs = parse_slot_ports(args.slot_ports)
        if len(specs) != 1:
            raise BadInputError(f"--slot-ports: a battle runs on one slot, give one ENV:APIS:GATEWAY triple, got "
                                f"{len(specs)}")
        return specs[0]
    if args.first_slot is not None:
        return choose_slots(1, args.first_slot)[0]
    return None


def exit_code(result: BattleResult) -> int:
    """0 when judged (whoever won), 3 when the battle could not be judged."""
    return 3 if result.status == "infra_error" else 0


def summary(result: BattleResult) -> str:
    """A few human lines about one battle: the verdict explained (with the expected answer: this is local), then
    the figures. Every line is `one_line` (the Blue's texts, e.g. its card name or its answer, stay one line each)."""
    lines = [f"battle {result.battle_id}: task {result.task_id}, blue {result.blue}"
             + (f" ({one_line(result.blue_agent_name, 80)})" if result.blue_agent_name else "")]
    lines += [f"  {one_line(line, 400)}" for line in plain_lines(explain(result, local=True), max_failed=5)]
    lines.append(f"  status {result.status}, winner {result.winner or 'none'}, outcome {result.outcome}")
    if result.paraphrase:
        p = result.paraphrase
        lines.append(f"  asked in a {p.strength} paraphrase (variant {p.variant}, {one_line(p.source, 80)}, set "
                     f"{p.set_digest[:12]}); the trace's task message has its text")
    if result.trajectory:
        t = result.trajectory
        injected = sum(t.faults_injected.values())
        faults = (f"{injected} injected fault(s), {sum(t.faults_recovered.values())} recovered; " if result.faults
                  else "")
        lines.append(f"  calls {t.total_calls} ({faults}{t.failed_calls} failed, {t.out_of_scope_calls} out of scope)")
    lines.append("  timings " + ", ".join(f"{k} {v:.2f}s" for k, v in result.timings.items()))
    for problem in result.report_problems:
        lines.append(f"  not reported: {one_line(problem, 300)}")
    if result.cleanup and not result.cleanup.ok:
        lines.append(f"  cleanup incomplete: {one_line('; '.join(result.cleanup.errors), 400)}")
    lines.append(f"  result {Path(result.run_dir or '.') / 'result.json'}")
    page = Path(result.run_dir or ".") / "trace.html"
    if page.is_file():
        lines.append(f"  trace  {page} (the battle's story: open it in a browser, or `appworld-green trace`)")
    return "\n".join(lines)
