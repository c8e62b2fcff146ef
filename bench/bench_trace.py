"""What the battle trace costs: a dev eval traced vs the same eval untraced, side by side in one run.

Run: `.venv/bin/python bench/bench_trace.py [--split dev] [--runs K] [--quick]`.

Each measurement is a fresh `appworld-green eval --split S --blue reference --predictor ground_truth --workers 1`
subprocess on free ports, timed like `bench_batch.py`, after one warm-up eval that is dropped. The untraced side runs with `APPWORLD_GREEN_TRACE_OFF=1`
(`kernel.trace_log.TRACE_OFF_ENV`: every process drops its records, the Green gathers nothing and writes no
page; a setting only this bench uses). The sides alternate (traced, untraced, then untraced, traced, ...), so
load drift on the shared machine hits both. Both must score TGC 100; the traced side must have a `trace.html`
per battle and the untraced side none, or the script fails.

Figures (one JSON line each, see bench/common.py):
- `trace_cost_battle_phase`: seconds from the first battle's start to the last battle's end (`result.json`
  timestamps: every battle, without slot start-up), traced vs untraced; ratio = value/baseline, target < 1.05
  (tracing adds < 5 %);
- `trace_cost_eval_wall`: the whole eval's wall seconds, traced vs untraced (the same ratio, start-up included);
- `trace_cost_eval_cpu`: the CPU seconds (user + system) of the eval and every process it waited for (slot
  servers, Blues), traced vs untraced: on a shared machine the steadiest of the three, since another job's load
  stretches wall time but not the CPU our processes use.
`trace_bytes_per_battle` in both lines: the mean size of a traced battle's trace.jsonl; `step_median_ms`: per
side, the median time per battle of the engine's steps (result.json's `timings`), to see where tracing costs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from common import built_world, emit, figure, free_ports, print_machine

REPO = Path(__file__).resolve().parent.parent
CLI = REPO / ".venv" / "bin" / "appworld-green"
TRACE_OFF_ENV = "APPWORLD_GREEN_TRACE_OFF"  # kernel.trace_log.TRACE_OFF_ENV
TARGET = 1.05
STEPS = ("setup", "task_message", "wait", "archive", "metrics", "report")
"""The engine's steps whose median time per battle is reported beside the figures (where tracing costs)."""


def _children_cpu_s() -> float:
    """CPU seconds (user + system) of every waited-for descendant so far: the eval and the servers it reaped."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_eval(root: Path, split: str, traced: bool, out: Path, tmp: Path) -> dict:
    ports = free_ports(3)
    env = {"APPWORLD_ROOT": str(root), "RUNS_DIR": str(tmp / "runs"), "OPENAI_API_KEY": "",
           "PATH": str(CLI.parent) + ":/usr/bin:/bin", "HOME": os.environ.get("HOME", str(tmp))}
    if not traced:
        env[TRACE_OFF_ENV] = "1"
    argv = [str(CLI), "eval", "--split", split, "--blue", "reference", "--predictor", "ground_truth",
            "--workers", "1", "--out", str(out), "--slot-ports", ":".join(map(str, ports)), "--json"]
    cpu_before = _children_cpu_s()
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=3600)
    wall = time.perf_counter() - started
    cpu = _children_cpu_s() - cpu_before
    side = "traced" if traced else "untraced"
    if proc.returncode != 0:
        sys.exit(f"eval ({side}) failed ({proc.returncode}): {proc.stderr[-2000:]}")
    results = json.loads(proc.stdout)
    if results["aggregates"]["tgc"] != 100.0:
        sys.exit(f"eval ({side}): TGC {results['aggregates']['tgc']}, expected 100 with the reference Blue")
    folders = [(out / r["result_path"]).parent for r in results["rows"]]
    pages = sum((f / "trace.html").is_file() for f in folders)
    if pages != (len(folders) if traced else 0):
        sys.exit(f"eval ({side}): {pages} trace page(s) for {len(folders)} battles")
    stamps = [json.loads((f / "result.json").read_text()) for f in folders]
    first = min(datetime.fromisoformat(s["started_at"]) for s in stamps)
    last = max(datetime.fromisoformat(s["finished_at"]) for s in stamps)
    sizes = [(f / "trace.jsonl").stat().st_size for f in folders if (f / "trace.jsonl").is_file()]
    steps = {k: statistics.median(s["timings"].get(k, 0.0) for s in stamps) for k in STEPS}
    return {"wall_s": wall, "cpu_s": cpu, "battle_phase_s": (last - first).total_seconds(), "battles": len(folders),
            "trace_bytes": statistics.mean(sizes) if sizes else 0, "steps": steps}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="dev")
    parser.add_argument("--runs", type=int, default=2, help="evals per side (alternating)")
    parser.add_argument("--quick", action="store_true", help="one eval per side")
    parser.add_argument("--root", help="AppWorld root (default: the built world, APPWORLD_ROOT)")
    args = parser.parse_args()
    print_machine("bench_trace")
    runs = 1 if args.quick else args.runs
    measured: dict[bool, list[dict]] = {True: [], False: []}
    with tempfile.TemporaryDirectory(prefix="bench-trace-") as tmp_name:
        tmp, root = Path(tmp_name), built_world(args.root)
        if not args.quick:  # the first eval of a session pays cold caches (imports, the world's files): dropped
            run_eval(root, args.split, True, tmp / "warmup", tmp)
        for r in range(runs):
            for traced in ((True, False) if r % 2 == 0 else (False, True)):
                m = run_eval(root, args.split, traced, tmp / f"run-{'on' if traced else 'off'}-{r}", tmp)
                print(json.dumps({"traced": traced, "run": r, **{k: v if k == "steps" else round(v, 3)
                                                                   for k, v in m.items()}}),
                      file=sys.stderr, flush=True)
                measured[traced].append(m)
    extra = {"split": args.split, "battles": measured[True][0]["battles"], "evals_per_side": runs,
             "trace_bytes_per_battle": round(statistics.mean(m["trace_bytes"] for m in measured[True])),
             "step_median_ms": {side: {k: round(1000 * statistics.median(m["steps"][k] for m in measured[on]), 1)
                                       for k in STEPS} for side, on in (("traced", True), ("untraced", False))}}
    for key, name, note in (("battle_phase_s", "trace_cost_battle_phase",
                             "every battle of the eval (first start to last end), traced vs untraced"),
                            ("wall_s", "trace_cost_eval_wall", "the whole eval's wall time, traced vs untraced"),
                            ("cpu_s", "trace_cost_eval_cpu", "CPU seconds of the eval and every process it reaped "
                             "(servers, Blues, REPLs), traced vs untraced: the work tracing adds, "
                             "which the machine's load does not stretch the way it stretches wall time")):
        ours, base = [m[key] for m in measured[True]], [m[key] for m in measured[False]]
        value, baseline = statistics.median(ours), statistics.median(base)
        emit(figure(name, "s", value, baseline, ours, base, note, ratio="value/baseline",
                    target=f"< {TARGET}x (tracing adds < 5 %)", meets_target=value / baseline < TARGET, extra=extra))
    return 0


if __name__ == "__main__":
    sys.exit(main())
