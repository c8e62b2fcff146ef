"""`make bench`: run every bench script in turn, stream their figure lines, fail if any script fails.

Run: `.venv/bin/python bench/run_all.py [--quick] [--only NAME ...] [--out FILE]`.

Scripts (in order; a missing optional one is skipped with a note): bench_trajectory.py,
bench_stats.py, bench_stats_coverage.py, bench_batch.py, bench_overhead.py, bench_completion.py, bench_world.py,
bench_ray.py, bench_a2a.py, bench_code.py, bench_trace.py, bench_otlp.py, bench_faults.py, bench_paraphrase.py, bench_capacity.py. Each
script's stdout (one
JSON figure per line) is copied to stdout as it arrives, its stderr goes straight to stderr. A
script fails if it exits non-zero or prints no figure; the others still run, and the exit code is
1 if any failed. `--quick` gives every script its smallest sizes (`--quick`, or for
bench_trajectory `--lines 20000 --runs 1
--calls-per-battle 100`); `--out FILE` also writes every figure line to FILE.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from common import BENCH_DIR, print_machine

SCRIPTS = ("bench_trajectory", "bench_stats", "bench_stats_coverage", "bench_batch", "bench_overhead", "bench_completion",
           "bench_world", "bench_ray", "bench_a2a", "bench_code", "bench_trace", "bench_otlp", "bench_faults", "bench_paraphrase",
           "bench_capacity")
OPTIONAL = ("bench_batch",)
QUICK_ARGS = {"bench_trajectory": ["--lines", "20000", "--runs", "1", "--calls-per-battle", "100"]}
REQUIRED_KEYS = ("name", "value", "unit", "baseline", "ratio", "runs")


def quick_args(name: str, script: Path) -> list[str]:
    """Smallest sizes for `name`: a known override, else `--quick` if the script's --help offers it."""
    if name in QUICK_ARGS:
        return QUICK_ARGS[name]
    helptext = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120).stdout
    return ["--quick"] if "--quick" in helptext else []


def run_script(name: str, args: list[str], out: list[dict]) -> tuple[int, int, float]:
    """Run one script, forwarding its figure lines; returns (exit code, figures printed, seconds)."""
    script = Path(BENCH_DIR) / f"{name}.py"
    print(f"== {name} {' '.join(args)}".rstrip(), file=sys.stderr, flush=True)
    started = time.monotonic()
    figures = 0
    with subprocess.Popen([sys.executable, str(script), *args], stdout=subprocess.PIPE, text=True, bufsize=1) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            text = line.strip()
            if not text:
                continue
            try:
                item = json.loads(text)
            except ValueError:
                print(f"[{name}] {text}", file=sys.stderr, flush=True)
                continue
            if isinstance(item, dict) and all(k in item for k in REQUIRED_KEYS):
                figures += 1
                item.setdefault("script", name)
                out.append(item)
            print(json.dumps(item), flush=True)
    return proc.returncode, figures, time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest sizes (smoke run, a few minutes)")
    parser.add_argument("--only", nargs="+", choices=SCRIPTS, metavar="NAME", help=f"run only these of {', '.join(SCRIPTS)}")
    parser.add_argument("--out", type=Path, help="also write every figure line to this JSONL file")
    args = parser.parse_args(argv)
    print_machine("run_all")
    collected: list[dict] = []
    summary: list[tuple[str, str, float]] = []
    for name in args.only or SCRIPTS:
        script = Path(BENCH_DIR) / f"{name}.py"
        if not script.is_file():
            status = "skipped (not present)" if name in OPTIONAL else "FAILED (script missing)"
            summary.append((name, status, 0.0))
            continue
        code, figures, seconds = run_script(name, quick_args(name, script) if args.quick else [], collected)
        ok = code == 0 and figures > 0
        summary.append((name, f"ok, {figures} figures" if ok else f"FAILED (exit {code}, {figures} figures)", seconds))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("".join(json.dumps(item) + "\n" for item in collected))
    print("== summary", file=sys.stderr)
    for name, status, seconds in summary:
        print(f"  {name:<18} {status:<32} {seconds:7.1f} s", file=sys.stderr)
    return 1 if any("FAILED" in status for _, status, _ in summary) else 0


if __name__ == "__main__":
    sys.exit(main())
