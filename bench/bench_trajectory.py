"""Trajectory analysis: one battle out of a 1,000,000-line call log, ours vs a naive load-everything parse.

Run: `.venv/bin/python bench/bench_trajectory.py [--lines N] [--runs K]`.

The script writes two logs in a temp dir, in the gateway's `CallRecord` JSONL shape: N lines and
N/10 lines, both made of battles of `--calls-per-battle` calls each, interleaved round-robin (so the
analyzed battle has the same calls in both logs and only the other battles grow), with a few
malformed lines. Each measurement runs in a fresh subprocess that imports everything first, then
reports the wall time of the analysis and the growth of its peak RSS (`ru_maxrss` after minus
before), so the figures include all the memory the analysis itself touched. Ours and the naive
implementation alternate, K runs each. Prints one JSON object per figure:
`{name, value, unit, baseline, ratio, runs}` where `runs` holds the median and spread (max - min)
of both sides and every value.

- naive: `json.loads` every line into a list, then keep the battle's records and compute the same
  metrics from them (what the seed did, plus a filter).
- ours: `green_agent.trajectory.analyze_log` (streaming, prefiltered, one pass).
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
from pathlib import Path

TARGET_INDEX = 7
TARGET_BATTLE = f"battle-{TARGET_INDEX:06d}"
TOOLS = ("spotify__login", "spotify__show_song_library", "simple_note__search_notes", "venmo__show_balance",
         "supervisor__show_profile", "gmail__send_email", "todoist__create_task", "supervisor__complete_task")


def generate(path: Path, lines: int, calls_per_battle: int) -> None:
    """Write `lines` lines: battles of `calls_per_battle` calls, round-robin, ~1 truncated line per 10,000.

    A battle's records depend only on (battle, step), so the target battle is identical in logs of
    any size; truncated lines replace other battles' records.
    """
    battles = max(1, lines // calls_per_battle)
    template = ('{{"schema_version":1,"timestamp":"2025-03-01T{h:02d}:{m:02d}:{s:02d}.{us:06d}Z","battle_id":"battle-{b:06d}",'
                '"task_id":"task{t:04d}_1","tool_name":"{tool}","arguments":{{"page_index":{p},"access_token":"***"}},'
                '"success":{ok},"error":{err},"status_code":{code},"duration_ms":{ms}.{ms_frac},"in_scope":true,'
                '"result_items":{items},"seq":{seq}}}\n')
    with path.open("w", buffering=1 << 20) as out:
        for i in range(lines):
            b, step = i % battles, i // battles
            if i % 10_007 == 5_000 and b != TARGET_INDEX:  # truncated line of another battle
                out.write('{"schema_version":1,"timestamp":"2025-03-01T10:00:00Z","battle_id":"battle-0\n')
                continue
            second = step * 3 + b % 3
            ok = (step * 7 + b) % 10 != 0
            out.write(template.format(
                h=(second // 3600) % 24, m=(second // 60) % 60, s=second % 60, us=(b * 37) % 1_000_000, b=b, t=b % 500,
                tool=TOOLS[(step + b) % len(TOOLS)], p=step % 3, ok="true" if ok else "false",
                err="null" if ok else '"HTTP 422"', code=200 if ok else 422, ms=5 + (step * 13 + b * 7) % 400, ms_frac=(step + b) % 10,
                items=5 if step % 3 < 2 else 2, seq=step))


def _naive(log: Path, battle_id: str) -> dict:
    from green_agent.trajectory import analyze_records
    from kernel.call_log_reader import to_record

    records = []
    with log.open("rb") as handle:
        for line in handle:
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
    mine = [to_record(r) for r in records if isinstance(r, dict) and r.get("battle_id") == battle_id]
    return analyze_records([r for r in mine if r is not None], log_path=str(log), battle_id=battle_id).model_dump(mode="json")


def _ours(log: Path, battle_id: str) -> dict:
    from green_agent.trajectory import analyze_log

    return analyze_log(log, battle_id=battle_id).model_dump(mode="json")


def worker(impl: str, log: Path, battle_id: str) -> None:
    """Measure one analysis in this (fresh) process and print {seconds, peak_rss_delta_mb, metrics}."""
    import green_agent.trajectory  # noqa: F401  (imports are not part of the measured memory)
    import kernel.call_log_reader  # noqa: F401

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    metrics = (_ours if impl == "ours" else _naive)(log, battle_id)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    keys = ("total_calls", "failed_calls", "retry_count", "p95_duration_ms", "unique_tools")
    print(json.dumps({"seconds": seconds, "peak_rss_delta_mb": (after - before) / 1024.0,
                      "metrics": {k: metrics[k] for k in keys}}))


def measure(impl: str, log: Path) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", impl, "--log", str(log)],
                          capture_output=True, text=True, timeout=900, check=True)
    return json.loads(proc.stdout)


def spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "spread": max(values) - min(values), "values": [round(v, 4) for v in values]}


def figure(name: str, unit: str, ours: list[float], baseline: list[float], note: str, value_over_baseline: bool = False) -> dict:
    """One figure; ratio = baseline / value (a speed-up or saving), or value / baseline if asked."""
    value, base = statistics.median(ours), statistics.median(baseline)
    ratio = (value / base if base else None) if value_over_baseline else (base / value if value else None)
    return {"name": name, "value": round(value, 4), "unit": unit, "baseline": round(base, 4),
            "ratio": None if ratio is None else round(ratio, 2), "runs": {"ours": spread(ours), "baseline": spread(baseline)},
            "note": note}


def run_bench(lines: int, runs: int, calls_per_battle: int) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="bench-trajectory-") as tmp:
        big, small = Path(tmp) / "big.jsonl", Path(tmp) / "small.jsonl"
        generate(big, lines, calls_per_battle)
        generate(small, max(calls_per_battle, lines // 10), calls_per_battle)
        results: dict[str, list[dict]] = {"ours": [], "naive": [], "ours_small": []}
        for _ in range(runs):
            results["ours"].append(measure("ours", big))
            results["naive"].append(measure("naive", big))
            results["ours_small"].append(measure("ours", small))
        reference = results["ours"][0]["metrics"]
        for result in results["naive"] + results["ours_small"]:
            if result["metrics"] != reference:
                raise SystemExit(f"implementations disagree: {result['metrics']} != {reference}")
        col = lambda key, impl: [r[key] for r in results[impl]]  # noqa: E731
        size = f"{lines:,} lines, {big.stat().st_size / 2**20:.0f} MiB"
        small_lines = max(calls_per_battle, lines // 10)
        return [
            figure("trajectory_analyze_time", "s", col("seconds", "ours"), col("seconds", "naive"),
                   f"one battle ({reference['total_calls']} calls) out of {size}; baseline = naive load-all; ratio = speed-up"),
            figure("trajectory_analyze_peak_rss_delta", "MiB", col("peak_rss_delta_mb", "ours"), col("peak_rss_delta_mb", "naive"),
                   f"peak RSS growth during the analysis, {size}; ratio = naive / ours"),
            figure("trajectory_memory_vs_log_size", "MiB", col("peak_rss_delta_mb", "ours"), col("peak_rss_delta_mb", "ours_small"),
                   f"ours on {lines:,} lines (value) vs {small_lines:,} lines (baseline), same battle; ratio = value / baseline, near 1 = independent of size", value_over_baseline=True),
            figure("trajectory_time_vs_log_size", "s", col("seconds", "ours"), col("seconds", "ours_small"),
                   f"ours on {lines:,} lines (value) vs {small_lines:,} lines (baseline); ratio = value / baseline (the scan is linear)", value_over_baseline=True),
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--calls-per-battle", type=int, default=1000)
    parser.add_argument("--worker", choices=["ours", "naive"], help=argparse.SUPPRESS)
    parser.add_argument("--log", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.log, TARGET_BATTLE)
        return
    for item in run_bench(args.lines, args.runs, args.calls_per_battle):
        print(json.dumps(item))
    print(json.dumps({"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]}}), file=sys.stderr)


if __name__ == "__main__":
    main()
