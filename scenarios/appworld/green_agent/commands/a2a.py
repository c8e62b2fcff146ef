"""`appworld-green serve | purple | assess`: today's AgentBeats front door (docs/a2a.md).

- `serve --host H --port P [--card-url URL]`: the A2A assessment server (the platform's container contract).
- `purple --kind reference|reference-retry|reference-careful|instruction-bound|reference-traced|noop|llm --port P`:
  a purple we ship, speaking `appworld-a2a-tools/1` (`reference-traced`: the reference purple sending its own
  OpenTelemetry spans under the battle's trace context, `blue_agent.purple.traced`).
- `assess SCENARIO.toml [--out FILE] [--run-dir DIR]`: the platform's local runner: start the agents, send the
  request, print the updates, write the artifact's data. Everything else it and the agents it starts write goes into
  its run folder (`--run-dir`; default `FILE`'s name without its extension plus `-run`, beside it, or a new
  `RUNS_DIR/assess-<time>-<id>/` without `--out`): never a file another run shares. Exit 0 when the assessment
  completed, 1 otherwise.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kernel.errors import BadInputError
from kernel.settings import Settings

PURPLE_KINDS = ("reference", "reference-retry", "reference-careful", "instruction-bound", "reference-traced", "noop",
                "llm")


def register(subparsers: argparse._SubParsersAction) -> None:
    serve = subparsers.add_parser("serve", help="serve the A2A assessment server (today's AgentBeats platform)")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1; 0.0.0.0 in a container)")
    serve.add_argument("--port", type=int, default=9009, help="port (default 9009)")
    serve.add_argument("--card-url", help="the URL the agent card advertises (default http://HOST:PORT/)")
    serve.add_argument("--heartbeat", type=float, default=30.0, help="seconds between heartbeats (default 30)")
    serve.add_argument("--slot-ports", help="world slots to use, ENV:APIS:GATEWAY[,...] (default: the first free "
                                            "slots 0..7); `workers` is capped at their number")
    serve.set_defaults(func=run_serve)
    purple = subparsers.add_parser("purple", help="serve a purple agent that plays AppWorld in-band")
    purple.add_argument("--kind", choices=PURPLE_KINDS, required=True)
    purple.add_argument("--host", default="127.0.0.1")
    purple.add_argument("--port", type=int, default=9019, help="port (default 9019)")
    purple.add_argument("--card-url", help="the URL the agent card advertises (default http://HOST:PORT/)")
    purple.add_argument("--model", default=None, help="chat model of the llm purple")
    purple.set_defaults(func=run_purple)
    assess = subparsers.add_parser("assess", help="run a platform scenario.toml locally (green + participants)")
    assess.add_argument("scenario", type=Path, help="scenario.toml ([green_agent], [[participants]], [config])")
    assess.add_argument("--out", type=Path, help="write the artifact's data here (JSON)")
    assess.add_argument("--run-dir", type=Path, help="the run folder: the agents' logs and the Green's run (default: "
                                                     "beside --out, FILE-run/; without --out a new RUNS_DIR/assess-*/)")
    assess.set_defaults(func=run_assess)


def run_serve(args: argparse.Namespace, settings: Settings) -> int:
    from green_agent.a2a.card_first import serve  # light: a2a-sdk is imported after the card is up
    from kernel.process_exit import exit_without_teardown

    slots = None
    if args.slot_ports:
        from green_agent.batch.live import parse_slot_ports

        slots = parse_slot_ports(args.slot_ports)
    serve(args.host, args.port, args.card_url, settings, heartbeat_s=args.heartbeat, slot_specs=slots)
    exit_without_teardown(0)
    return 0


def run_purple(args: argparse.Namespace, settings: Settings) -> int:
    from blue_agent.purple import instruction_bound, llm, noop, reference
    from blue_agent.purple.server import purple_card, serve
    from blue_agent.replay_policy import BLUE_POLICIES
    from kernel.process_exit import exit_without_teardown
    from kernel.world_data import WorldData

    name, description = None, None
    if args.kind == "reference-traced":
        from blue_agent.purple import traced

        module, factory = traced, reference.player_factory(WorldData(settings.appworld_root).require(),
                                                           settings.reference_blue_think_s)
        serve = traced.serve
    elif args.kind in BLUE_POLICIES:
        policy = BLUE_POLICIES[args.kind]
        module, factory = reference, reference.player_factory(WorldData(settings.appworld_root).require(),
                                                              settings.reference_blue_think_s, policy)
        if policy == "retry":
            name, description = reference.RETRY_NAME, reference.RETRY_DESCRIPTION
        elif policy == "careful":
            name, description = reference.CAREFUL_NAME, reference.CAREFUL_DESCRIPTION
    elif args.kind == "instruction-bound":
        module, factory = instruction_bound, instruction_bound.player_factory(
            WorldData(settings.appworld_root).require(), settings.reference_blue_think_s)
    elif args.kind == "noop":
        module, factory = noop, noop.make_player
    else:
        if not settings.openai_api_key:
            raise BadInputError("--kind llm needs OPENAI_API_KEY (in the environment or .env)")
        module, factory = llm, llm.player_factory(settings.openai_api_key.get_secret_value(), settings.openai_base_url,
                                                  args.model or llm.DEFAULT_MODEL)
    url = args.card_url or f"http://{'127.0.0.1' if args.host == '0.0.0.0' else args.host}:{args.port}/"
    card = purple_card(name or module.NAME, description or module.DESCRIPTION, url,
                       f"purple_{args.kind.replace('-', '_')}")
    serve(card, factory, args.host, args.port)
    exit_without_teardown(0)
    return 0


def run_assess(args: argparse.Namespace, settings: Settings) -> int:
    from green_agent.a2a.local_runner import run_scenario_file
    from green_agent.output_paths import check_output_dir, check_output_file

    if args.out is not None:
        check_output_file(args.out, "--out")
    run_dir = check_output_dir(args.run_dir or assess_run_dir(args.out, settings), "--run-dir")
    print(f"run folder {run_dir}: the agents' logs (logs/agent-<k>.log) and the Green's run", flush=True)
    return run_scenario_file(args.scenario, args.out, run_dir, assess_score_line)


def assess_run_dir(out: Path | None, settings: Settings) -> Path:
    """`FILE-run/` beside `--out FILE` (its extension dropped), else a new `RUNS_DIR/assess-<time>-<id>/`."""
    if out is not None:
        return out.parent / f"{out.stem}-run"
    from datetime import datetime, timezone
    from uuid import uuid4

    return settings.runs_dir / f"assess-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{uuid4().hex[:8]}"


def assess_score_line(item: dict[str, Any]) -> str:
    """The assessment's TGC as `eval`'s summary prints it, with the interval the artifact's `intervals` carry."""
    from green_agent.commands.eval import ci_text
    from green_agent.models.eval_run import Interval

    intervals = item.get("intervals") or {}
    bounds = intervals.get("tgc_ci")
    interval = (Interval(low=bounds[0], high=bounds[1], level=intervals.get("confidence_level") or 0.95,
                         method=intervals.get("tgc_ci_method") or "") if bounds else None)
    return (f"TGC {item['tgc']:.1f}{ci_text(interval)} ({item['score']}/{item['max_score']} tasks passed)"
            + (" - incomplete: a task was not judged and counts as not passed" if item.get("incomplete") else ""))
