"""The Ray executor against the local pool, model-bound Blue, side by side in one run.

Run: `.venv/bin/python bench/bench_ray.py [--split dev] [--tasks N] [--runs K] [--think-s S] [--quick]`.

Ray is started as a 2-node `ray.cluster_utils.Cluster` on this host (one `appworld_slot` per node)
inside a private network namespace whose only interface is `lo` (the script reruns itself under
`unshare --net` when needed: this machine allows loopback traffic only, and Ray binds to the
interface address otherwise). Each measurement is one `appworld-green eval --split S --blue
reference --predictor ground_truth --json` subprocess on the split's first `--tasks` tasks, with
the reference Blue waiting `--think-s` before each tool call (`REFERENCE_BLUE_THINK_S`, an agent
waiting for its model; 1.5 s by default, so that the battles stay model-bound on a shared 2-core
machine where the CPU part of a battle stretches under load). Three runs per round, their order
rotating each round: local pool with 2 slots, Ray with 2 slot actors (one per node), Ray with 1.
All must score TGC 100.

Figures (one JSON line each, see bench/common.py):
- `ray_overhead_per_battle`: mean driver-side seconds per battle (the runner's `start` -> `finish`
  events: for Ray the actor call, the world work on the node and landing the files on the driver),
  Ray with 2 slots vs the local pool with 2 slots; ratio = value/baseline (target < 1.05, i.e. < 5 %).
- `ray_speedup_2_slots`: battle-phase wall (first battle start -> last battle finish) of Ray with 1
  slot vs 2; ratio = baseline/value (target >= 1.8).
- `ray_eval_wall_s`: the whole eval (connect, slot actors' start, battles, report) on Ray vs local,
  both with 2 slots: the fixed cost of joining the cluster and starting actors.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from common import built_world, emit, figure, print_machine

REPO = Path(__file__).resolve().parent.parent
CLI = REPO / ".venv" / "bin" / "appworld-green"
OVERHEAD_TARGET = 1.05
SPEEDUP_TARGET = 1.8
DEFAULT_TASKS = 6
QUICK_TASKS = 4
SETUPS = (("local", 2), ("ray", 2), ("ray", 1))


def ensure_private_netns() -> None:
    """Rerun this script in a loopback-only network namespace unless it already is in one."""
    from green_agent.batch.ray.local import NETNS_MARK, only_loopback, private_netns_argv

    if only_loopback():
        return
    command = private_netns_argv([sys.executable, *sys.argv])
    if command is None:
        sys.exit("bench_ray needs a loopback-only network namespace (root with unshare and ip)")
    sys.stdout.flush()
    os.execvpe(command[0], command, {**os.environ, NETNS_MARK: "1"})


def start_cluster():  # noqa: ANN201
    from ray.cluster_utils import Cluster

    from green_agent.batch.ray.executor import SLOT_RESOURCE

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "resources": {SLOT_RESOURCE: 1},
                                                            "include_dashboard": False})
    cluster.add_node(num_cpus=1, resources={SLOT_RESOURCE: 1})
    cluster.wait_for_nodes()
    return cluster


def events_of(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines() if line.strip()]


def run_eval(root: Path, which: list[str], executor: str, workers: int, out: Path, tmp: Path, think_s: float,
             trials: int, address: str) -> dict:
    env = {**os.environ, "APPWORLD_ROOT": str(root), "RUNS_DIR": str(tmp / "runs"), "OPENAI_API_KEY": "",
           "REFERENCE_BLUE_THINK_S": str(think_s)}
    argv = [str(CLI), "eval", *which, "--blue", "reference", "--predictor", "ground_truth", "--workers",
            str(workers), "--trials", str(trials), "--out", str(out), "--executor", executor, "--json"]
    argv += ["--ray-address", address] if executor == "ray" else []
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=3600)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"eval --executor {executor} --workers {workers} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    results = json.loads(proc.stdout)
    if results["aggregates"]["tgc"] != 100.0 or results["aggregates"]["infra_errors"]:
        sys.exit(f"eval --executor {executor}: TGC {results['aggregates']['tgc']}, expected 100 with the reference Blue")
    events = events_of(out)
    begun = {(e["battle_id"]): datetime.fromisoformat(e["time"]) for e in events if e["event"] == "start"}
    ended = {(e["battle_id"]): datetime.fromisoformat(e["time"]) for e in events if e["event"] == "finish"}
    per_battle = [(ended[b] - begun[b]).total_seconds() for b in ended]
    return {"wall_s": wall, "battles": len(per_battle), "per_battle_s": statistics.mean(per_battle),
            "battle_phase_s": (max(ended.values()) - min(begun.values())).total_seconds(),
            "nodes": len(results["manifest"]["nodes"])}


def measure(root: Path, which: list[str], tmp: Path, runs: int, think_s: float, trials: int,
            address: str) -> dict[tuple[str, int], list[dict]]:
    measured: dict[tuple[str, int], list[dict]] = {setup: [] for setup in SETUPS}
    for r in range(runs):
        order = SETUPS[r % len(SETUPS):] + SETUPS[:r % len(SETUPS)]
        for executor, workers in order:
            out = tmp / f"run-{executor}-w{workers}-{r}"
            m = run_eval(root, which, executor, workers, out, tmp, think_s, trials, address)
            print(json.dumps({"executor": executor, "workers": workers, "run": r,
                              **{k: round(v, 3) for k, v in m.items()}}), file=sys.stderr, flush=True)
            measured[(executor, workers)].append(m)
    return measured


def emit_figures(measured: dict[tuple[str, int], list[dict]], context: dict) -> None:
    def values(setup: tuple[str, int], key: str) -> list[float]:
        return [m[key] for m in measured[setup]]

    def med(setup: tuple[str, int], key: str) -> float:
        return statistics.median(values(setup, key))

    local2, ray2, ray1 = ("local", 2), ("ray", 2), ("ray", 1)
    overhead = med(ray2, "per_battle_s") / med(local2, "per_battle_s")
    emit(figure("ray_overhead_per_battle", "s", med(ray2, "per_battle_s"), med(local2, "per_battle_s"),
                values(ray2, "per_battle_s"), values(local2, "per_battle_s"),
                "mean driver-side time per battle: Ray, 2 slot actors on 2 nodes, vs the local pool, 2 slots",
                ratio="value/baseline", target=f"< {OVERHEAD_TARGET}", meets_target=overhead < OVERHEAD_TARGET,
                extra=context))
    speedup = med(ray1, "battle_phase_s") / med(ray2, "battle_phase_s")
    emit(figure("ray_speedup_2_slots", "s", med(ray2, "battle_phase_s"), med(ray1, "battle_phase_s"),
                values(ray2, "battle_phase_s"), values(ray1, "battle_phase_s"),
                "battle-phase wall on Ray with 2 slot actors vs 1", target=f">= {SPEEDUP_TARGET}x speed-up",
                meets_target=speedup >= SPEEDUP_TARGET, extra=context))
    emit(figure("ray_eval_wall_s", "s", med(ray2, "wall_s"), med(local2, "wall_s"), values(ray2, "wall_s"),
                values(local2, "wall_s"), "whole eval wall, Ray (2 slot actors) vs local pool (2 slots): "
                "connecting and starting actors included", ratio="value/baseline", extra=context))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="dev")
    parser.add_argument("--runs", type=int, default=1, help="rounds of the three setups (order rotating)")
    parser.add_argument("--trials", type=int, default=1, help="battles per task")
    parser.add_argument("--tasks", type=int, default=DEFAULT_TASKS, help="the split's first N tasks (0: all)")
    parser.add_argument("--think-s", type=float, default=1.5, help="the reference Blue's wait before each tool call")
    parser.add_argument("--quick", action="store_true", help=f"one round on the first {QUICK_TASKS} tasks, 1 s think")
    parser.add_argument("--root", help="AppWorld root (default: the built world, APPWORLD_ROOT)")
    args = parser.parse_args()
    ensure_private_netns()
    print_machine("bench_ray")
    root = built_world(args.root)
    from kernel.world_data import WorldData

    tasks = WorldData(root).split(args.split)
    count = QUICK_TASKS if args.quick else args.tasks
    which = ["--task-ids", ",".join(tasks[:count])] if count else ["--split", args.split]
    think_s = 1.0 if args.quick else args.think_s
    cluster = start_cluster()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp_name:
            measured = measure(root, which, Path(tmp_name), 1 if args.quick else args.runs, think_s,
                               args.trials, cluster.address)
        context = {"split": args.split, "battles": measured[("ray", 2)][0]["battles"], "trials": args.trials,
                   "blue_think_s": think_s, "ray_nodes": 2, "world": str(root)}
        emit_figures(measured, context)
    finally:
        cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
