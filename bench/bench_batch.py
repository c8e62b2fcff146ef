"""Split evaluation throughput: `appworld-green eval --workers 2` vs `--workers 1`, side by side in one run.

Run: `.venv/bin/python bench/bench_batch.py [--split dev] [--runs K] [--trials T] [--model-think-s S] [--quick]`.

Each measurement is a fresh `appworld-green eval --split S --blue reference --predictor ground_truth`
subprocess on free ports (its own world slots, started once per worker and reused across tasks),
timed from launch to exit: slot start-up, every battle, shutdown and the report. The two worker
counts alternate (1, 2, then 2, 1, ...), so load drift on the shared machine hits both sides.
Both must score TGC 100 (the reference Blue), otherwise the script fails.

Figures (one JSON line each, see bench/common.py):
- `eval_wall_s_workers2`: wall seconds of the whole eval; baseline = `--workers 1`;
  ratio = baseline/value = the speed-up (target >= 1.6).
- `eval_tasks_per_minute_workers2`: battles (tasks x trials) / wall minutes; ratio = value/baseline = the same speed-up.
- `eval_battle_phase_tasks_per_minute_workers2`: tasks per minute between the first battle's start
  and the last battle's end (`result.json` timestamps), i.e. without slot start-up and shutdown.
- The same three with the suffix `_model_bound`: the reference Blue waits `--model-think-s` (default
  1 s) before each tool call (`REFERENCE_BLUE_THINK_S`), standing in for an LLM agent waiting for its
  model (real models take 1-5 s per turn on AppWorld's prompts). The reference Blue alone is the
  worst case for concurrency: every process of a battle is on the CPU, and 2 cores are nearly busy
  with one battle; a real agent mostly waits, which is what a second worker overlaps.

The world is the one `make world` built (APPWORLD_ROOT, or `--root`); `--quick` makes one run.
"""

from __future__ import annotations

import argparse
import json
import socket
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
TARGET = 1.6


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def run_eval(root: Path, split: str, workers: int, out: Path, tmp: Path, trials: int, think_s: float = 0.0) -> dict:
    ports = free_ports(3 * workers)
    slot_ports = ",".join(":".join(map(str, ports[i:i + 3])) for i in range(0, len(ports), 3))
    env = {"APPWORLD_ROOT": str(root), "RUNS_DIR": str(tmp / "runs"), "OPENAI_API_KEY": "",
           "REFERENCE_BLUE_THINK_S": str(think_s), "PATH": str(CLI.parent) + ":/usr/bin:/bin"}
    argv = [str(CLI), "eval", "--split", split, "--blue", "reference", "--predictor", "ground_truth",
            "--workers", str(workers), "--trials", str(trials), "--out", str(out), "--slot-ports", slot_ports,
            "--json"]
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=3600)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"eval --workers {workers} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    results = json.loads(proc.stdout)
    tgc, tasks = results["aggregates"]["tgc"], len(results["rows"])
    if tgc != 100.0:
        sys.exit(f"eval --workers {workers}: TGC {tgc}, expected 100 with the reference Blue")
    stamps = [json.loads((out / r["result_path"]).read_text()) for r in results["rows"]]
    first = min(datetime.fromisoformat(s["started_at"]) for s in stamps)
    last = max(datetime.fromisoformat(s["finished_at"]) for s in stamps)
    return {"wall_s": wall, "tasks": tasks, "battle_phase_s": (last - first).total_seconds()}


def measure(root: Path, split: str, tmp: Path, runs: int, trials: int, think_s: float) -> dict[int, list[dict]]:
    """`runs` evals per worker count, alternating the order (1, 2, then 2, 1, ...)."""
    measured: dict[int, list[dict]] = {1: [], 2: []}
    for r in range(runs):
        for workers in ((1, 2) if r % 2 == 0 else (2, 1)):
            m = run_eval(root, split, workers, tmp / f"run-w{workers}-{r}-think{think_s}", tmp, trials, think_s)
            print(json.dumps({"workers": workers, "run": r, "think_s": think_s, **{k: round(v, 3) for k, v in m.items()}}),
                  file=sys.stderr, flush=True)
            measured[workers].append(m)
    return measured


def emit_figures(measured: dict[int, list[dict]], split: str, root: Path, trials: int, think_s: float) -> None:
    tasks = measured[1][0]["tasks"]
    wall = {w: [m["wall_s"] for m in ms] for w, ms in measured.items()}
    tpm = {w: [m["tasks"] / m["wall_s"] * 60 for m in ms] for w, ms in measured.items()}
    phase = {w: [m["tasks"] / m["battle_phase_s"] * 60 for m in ms] for w, ms in measured.items()}
    med = {name: {w: statistics.median(v) for w, v in d.items()} for name, d in
           (("wall", wall), ("tpm", tpm), ("phase", phase))}
    speedup = med["wall"][1] / med["wall"][2]
    suffix = "_model_bound" if think_s else ""
    blue = (f"reference Blue waiting {think_s:g} s before each tool call (a model-bound agent)" if think_s
            else "reference Blue, CPU-bound: no model")
    context = {"split": split, "battles": tasks, "trials": trials, "blue_think_s": think_s,
               "world": str(root)}
    emit(figure(f"eval_wall_s_workers2{suffix}", "s", med["wall"][2], med["wall"][1], wall[2], wall[1],
                f"wall time of `eval --split {split}` ({tasks} battles, {blue}) with 2 workers vs 1",
                target=f">= {TARGET}x speed-up", meets_target=speedup >= TARGET, extra=context))
    emit(figure(f"eval_tasks_per_minute_workers2{suffix}", "tasks/min", med["tpm"][2], med["tpm"][1], tpm[2], tpm[1],
                "tasks per wall minute, slot start-up included; ratio = speed-up of 2 workers",
                ratio="value/baseline", target=f">= {TARGET}x", meets_target=med["tpm"][2] / med["tpm"][1] >= TARGET,
                extra=context))
    emit(figure(f"eval_battle_phase_tasks_per_minute_workers2{suffix}", "tasks/min", med["phase"][2], med["phase"][1],
                phase[2], phase[1], "tasks per minute from first battle start to last battle end (no slot start-up)",
                ratio="value/baseline", extra=context))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="dev")
    parser.add_argument("--runs", type=int, default=1, help="measurements per worker count (alternating)")
    parser.add_argument("--trials", type=int, default=1,
                        help="battles per task (more battles per slot start-up: the steady state)")
    parser.add_argument("--model-think-s", type=float, default=1.0,
                        help="also measure a model-bound Blue waiting this long per tool call (0: skip)")
    parser.add_argument("--quick", action="store_true", help="one run")
    parser.add_argument("--root", help="AppWorld root (default: the built world, APPWORLD_ROOT)")
    args = parser.parse_args()
    print_machine("bench_batch")
    runs = 1 if args.quick else args.runs
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp_name:
        tmp = Path(tmp_name)
        root, split = built_world(args.root), args.split
        emit_figures(measure(root, split, tmp, runs, args.trials, 0.0), split, root, args.trials, 0.0)
        if args.model_think_s > 0:
            think = min(args.model_think_s, 0.2) if args.quick else args.model_think_s
            emit_figures(measure(root, split, tmp, runs, args.trials, think), split, root, args.trials, think)
    return 0


if __name__ == "__main__":
    sys.exit(main())
