"""`appworld-green demo`: two battles on the offline world, reference Blue then no-op Blue."""

from __future__ import annotations

import argparse
import logging

from green_agent.batch.checkpoint import REPORT_FILE
from green_agent.batch.evaluate import EvalRequest, run_eval
from green_agent.engine.config import BattleChoices, world_data
from green_agent.local_battle import BattleRequest, new_battle_id, open_blue, open_slot, plan_slot, run_call_log, run_on_slot
from green_agent.commands.battle import summary
from green_agent.commands.eval import summary as eval_summary
from kernel.errors import InfrastructureError
from kernel.settings import Settings
from kernel.task_ids import resolve_task

log = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="run a battle with the reference Blue, then with the no-op Blue")
    parser.add_argument("--task-id", default="1", help="task (default: the first task of the default split)")
    parser.add_argument("--slot", type=int, default=0, help="world slot to use")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    world = world_data(settings)
    if world is None:
        raise InfrastructureError(f"no offline world at {settings.appworld_root}/data: run `make world` first")
    ref = resolve_task(args.task_id, world, settings.default_split)
    task_id = ref.task_id
    stem = new_battle_id()
    base = BattleRequest(task=task_id, choices=BattleChoices(blue="reference"), slot=args.slot)
    codes = []
    print(f"demo: task {task_id} of split {settings.default_split!r} on world slot {args.slot}")
    logs = settings.runs_dir / f"demo-{stem}" / "logs"
    plan = plan_slot(base, settings)
    if plan.spec is not None:  # the demo's own gateway logs its calls into the demo's folder
        settings = settings.model_copy(update={"agentbeats_mcp_log_path": run_call_log(logs)})
    with open_slot(plan, settings, logs) as urls:
        for blue, note in (("reference", "the reference Blue replays the task's reference solution through the MCP "
                                         "gateway: it should win"),
                           ("noop", "the no-op Blue accepts the task and completes it without doing the work: "
                                    "it should lose")):
            print(f"\n== {blue}: {note}")
            run_dir = settings.runs_dir / f"demo-{stem}" / blue
            with open_blue(blue, settings, urls, run_dir / "logs") as blue_url:
                result = run_on_slot(ref, BattleChoices(blue=blue), settings, urls, blue_url, run_dir,
                                     f"demo-{stem}-{blue}")
            print(summary(result))
            codes.append(3 if result.status == "infra_error" else 0)
    split = "dev" if "dev" in world.splits() else settings.default_split
    print(f"\n== eval: the whole {split!r} split with the reference Blue on 2 workers (TGC, SGC, HTML report)")
    out = settings.runs_dir / f"demo-{stem}" / f"eval-{split}"
    outcome = run_eval(EvalRequest(split=split, choices=BattleChoices(blue="reference"), workers=2, out=out), settings)
    print(eval_summary(outcome.results, out, outcome))
    print(f"\nopen the report: file://{(out / REPORT_FILE).resolve()}")
    codes.append(130 if outcome.interrupted else 3 if outcome.results.aggregates.infra_errors else 0)
    return max(codes)
