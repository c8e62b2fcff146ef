"""What the live OpenTelemetry export costs: a dev eval exporting live to a collector that is not there vs the same
eval with no endpoint, side by side in one run.

Run: `.venv/bin/python bench/bench_otlp.py [--split dev] [--runs K] [--quick]`.

Each measurement is a fresh `appworld-green eval --split S --blue reference --predictor ground_truth --workers 1`
subprocess on free ports, after one warm-up eval that is dropped. The live side sets `OTEL_EXPORTER_OTLP_ENDPOINT` to
a loopback port nothing listens on (the worst a battle meets: every export fails; `green_agent.trace.otel.live`
gives the collector up after the first failure and drops the rest, counted); the other side leaves it unset (nothing
of OpenTelemetry imported). The sides alternate (live, unset, then unset, live, ...), so load drift on the shared
machine hits both. Both must score TGC 100; the live side must report every span dropped in results.json
(`otlp_spans_dropped` > 0) and the unset side none (None, no `otlp_export.json`), or the script fails.

Figures (one JSON line each, see bench/common.py):
- `otlp_live_cost_per_battle`: the eval's wall seconds per battle, live vs unset; ratio = value/baseline,
  target < 1.05 (the live export adds < 5 % to a battle's time, start-up and the final flush included);
- `otlp_live_cost_battle_phase`: seconds from the first battle's start to the last battle's end (result.json
  timestamps: every battle and the export queued after each, without slot start-up), live vs unset;
- `otlp_live_cost_cpu`: the CPU seconds (user + system) of the eval and every process it reaped, live vs unset.
Each line also has `paired_ratios` (live / unset of each pair, which ran back to back) and their median,
`paired_ratio_median`, on which the target is judged: the machine is shared, and a load that comes and goes between
pairs moves the sides' medians apart while a pair's two evals see the same load.
Beside them, from the live side's battles themselves: `build_ms_per_battle`, the median time a battle's own thread
spent building its spans and queuing them (each battle's `otlp_export.json`: the whole of the export's work in the
battle; the sending is the worker thread's), `battle_ms` the median battle (result.json's start to end), and
`build_share_of_battle` their ratio: the cost per battle that the machine's load scales on both sides alike.
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
TARGET = 1.05


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_eval(root: Path, split: str, live: bool, out: Path, tmp: Path) -> dict:
    ports = free_ports(4)
    env = {"APPWORLD_ROOT": str(root), "RUNS_DIR": str(tmp / "runs"), "OPENAI_API_KEY": "",
           "PATH": str(CLI.parent) + ":/usr/bin:/bin", "HOME": os.environ.get("HOME", str(tmp)),
           "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
           **{k: v for k, v in os.environ.items() if k == "APPWORLD_GREEN_PORT_BAND"}}
    if live:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{ports[3]}"  # nothing listens there
    argv = [str(CLI), "eval", "--split", split, "--blue", "reference", "--predictor", "ground_truth",
            "--workers", "1", "--out", str(out), "--slot-ports", ":".join(map(str, ports[:3])), "--json"]
    cpu_before = _children_cpu_s()
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=3600)
    wall = time.perf_counter() - started
    cpu = _children_cpu_s() - cpu_before
    side = "live" if live else "unset"
    if proc.returncode != 0:
        sys.exit(f"eval ({side}) failed ({proc.returncode}): {proc.stderr[-2000:]}")
    results = json.loads(proc.stdout)
    if results["aggregates"]["tgc"] != 100.0:
        sys.exit(f"eval ({side}): TGC {results['aggregates']['tgc']}, expected 100 with the reference Blue")
    dropped = results.get("otlp_spans_dropped")
    if (live and not dropped) or (not live and (dropped is not None or list(out.rglob("otlp_export.json")))):
        sys.exit(f"eval ({side}): otlp_spans_dropped {dropped}: the export did not run as this side asks")
    folders = [(out / r["result_path"]).parent for r in results["rows"]]
    stamps = [json.loads((f / "result.json").read_text()) for f in folders]
    first = min(datetime.fromisoformat(s["started_at"]) for s in stamps)
    last = max(datetime.fromisoformat(s["finished_at"]) for s in stamps)
    battle_ms = [1000 * (datetime.fromisoformat(s["finished_at"]) - datetime.fromisoformat(s["started_at"]))
                 .total_seconds() for s in stamps]
    build_ms = [json.loads((f / "otlp_export.json").read_text())["build_ms"] for f in folders] if live else []
    return {"wall_s": wall, "cpu_s": cpu, "battle_phase_s": (last - first).total_seconds(), "battles": len(folders),
            "dropped": dropped or 0, "battle_ms": battle_ms, "build_ms": build_ms}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="dev")
    parser.add_argument("--runs", type=int, default=2, help="evals per side (alternating)")
    parser.add_argument("--quick", action="store_true", help="one eval per side")
    parser.add_argument("--root", help="AppWorld root (default: the built world, APPWORLD_ROOT)")
    args = parser.parse_args()
    print_machine("bench_otlp")
    runs = 1 if args.quick else args.runs
    measured: dict[bool, list[dict]] = {True: [], False: []}
    with tempfile.TemporaryDirectory(prefix="bench-otlp-") as tmp_name:
        tmp, root = Path(tmp_name), built_world(args.root)
        if not args.quick:
            run_eval(root, args.split, False, tmp / "warmup", tmp)
        for r in range(runs):
            for live in ((True, False) if r % 2 == 0 else (False, True)):
                m = run_eval(root, args.split, live, tmp / f"run-{'live' if live else 'unset'}-{r}", tmp)
                print(json.dumps({"live": live, "run": r, **{k: round(v, 3) for k, v in m.items()
                                                             if not isinstance(v, list)}}), file=sys.stderr, flush=True)
                measured[live].append(m)
    battles = measured[True][0]["battles"]
    build_ms = statistics.median(b for m in measured[True] for b in m["build_ms"])
    battle_ms = statistics.median(b for m in measured[True] for b in m["battle_ms"])
    extra = {"split": args.split, "battles": battles, "evals_per_side": runs,
             "spans_dropped_per_eval": statistics.median(m["dropped"] for m in measured[True]),
             "build_ms_per_battle": round(build_ms, 2), "battle_ms": round(battle_ms, 1),
             "build_share_of_battle": round(build_ms / battle_ms, 4)}
    per_battle = {live: [m["wall_s"] / m["battles"] for m in measured[live]] for live in (True, False)}
    rows = (("otlp_live_cost_per_battle", per_battle[True], per_battle[False],
             "the eval's wall seconds per battle (start-up and the final flush included), live to a collector "
             "that is not there vs no endpoint"),
            ("otlp_live_cost_battle_phase", [m["battle_phase_s"] for m in measured[True]],
             [m["battle_phase_s"] for m in measured[False]], "every battle of the eval (first start to last end), "
             "live vs unset"),
            ("otlp_live_cost_cpu", [m["cpu_s"] for m in measured[True]], [m["cpu_s"] for m in measured[False]],
             "CPU seconds of the eval and every process it reaped, live vs unset"))
    for name, ours, base, note in rows:
        value, baseline = statistics.median(ours), statistics.median(base)
        pairs = [round(o / b, 3) for o, b in zip(ours, base)]  # each pair ran back to back: the same load
        paired = statistics.median(pairs)
        emit(figure(name, "s", value, baseline, ours, base, note, ratio="value/baseline",
                    target=f"< {TARGET}x (the live export adds < 5 %; judged on the paired ratios' median)",
                    meets_target=paired < TARGET, extra={**extra, "paired_ratios": pairs,
                                                         "paired_ratio_median": paired}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
