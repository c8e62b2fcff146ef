"""Capacity: how many battles one machine holds in flight, and the memory per slot that bounds it.

Run: `.venv/bin/python bench/bench_capacity.py [--slots 4,8,16] [--modes tools,code] [--think-s 5]
[--battles-per-slot 2] [--task-id ID] [--interval-s 2] [--code-spares 2,0] [--quick] [--root DIR]`.

Each measurement is a fresh `appworld-green eval --task-ids T --trials K --blue reference --predictor
ground_truth --workers N` subprocess on free ports, K = N x `--battles-per-slot`: the same task every
battle, so every battle does the same work and N slots are compared with 1 on equal terms. The reference
Blue waits `--think-s` (default 5 s) for its "model" before each tool call (tools mode) or each code
reply (code mode, where it sends its solution as one execution): `REFERENCE_BLUE_THINK_S`. While it runs,
a sampler (`capacity_probe.py`) reads the PSS (/proc/PID/smaps_rollup) of every process every
`--interval-s`, by slot and role: AppWorld's APIs and environment servers, the gateway, the REPLs under it
(code mode); the fork server, which every slot's AppWorld servers are forked from, is the machine's; the
Blue and the eval process are apart. The 1-slot run comes first in each mode; every N follows.

Code mode is measured once per `--code-spares` count K (the setting `CODE_SPARES`: spare REPLs each gateway keeps
importing, ~95 MiB each); M is `code` for the default (2) and `code_spares{K}` for another K.

Figures per mode M and slot count N (one JSON line each, see bench/common.py):
- `capacity_pss_per_slot_{M}_{N}`: memory each slot beyond the first adds, (peak total at N - peak total at
  1) / (N - 1), where a total is every slot's processes plus the fork server, taken at the sample with the
  most memory while all N slots were up; baseline = the 1-slot total (the first slot, fork server
  included); target <= 250 MiB (tools) / <= 350 MiB (code). `by_role_mib` splits the peak sample.
- `capacity_tasks_per_minute_{M}_{N}`: battles / minutes from the first battle's start to the last one's
  finish (result.json's timestamps: the slots' start-up before their first battle is not in it); baseline =
  the 1-slot rate; ratio = value/baseline. The target at 8 slots is the issue's (>= 7x); every other N gets
  the same share of linear scaling (>= 0.875 N). `steady_ratio` beside it: N x the median warm battle time
  at 1 / the median at N (slots kept fed, no tail of a last round).
- `capacity_max_slots_holding_overhead_{M}`: the largest N whose median referee time per battle (the
  battle's time minus the agent's turn, the `wait` step: set-up, scoping, dispatch, archive, judging,
  report, clean-up, AppWorld's calls included; each slot's first battle, on cold servers, set apart) stays
  within 1.10x the 1-slot median: contention on the
  machine costs the referee no more than the 10 % the overhead target allows.
Load average is printed with every line (`loadavg`); the machine line goes to stderr. `--quick`: 2 slots,
one battle per slot, 2 s think (make bench's quick path). A slot count that would not fit in the memory
available now (the 1-slot total x N, with a 2 GiB margin) is skipped and said so on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from capacity_probe import Sample, Sampler, SlotPorts
from common import built_world, emit, figure, free_ports, print_machine
from kernel.settings import DEFAULT_CODE_SPARES, MAX_CODE_SPARES

REPO = Path(__file__).resolve().parent.parent
CLI = REPO / ".venv" / "bin" / "appworld-green"
TARGET_MIB = {"tools": 250.0, "code": 350.0}
SCALING_TARGET = 7 / 8
"""The issue's target, 7x at 8 slots, as a share of linear scaling: N slots >= 0.875 N x 1 slot."""
OVERHEAD_HOLD = 1.10
EVAL_TIMEOUT_S = 3600
MARGIN_KIB = 2 * 2**20


def run_eval(root: Path, mode: str, task_id: str, workers: int, battles: int, think_s: float, tmp: Path,
             interval_s: float, spares: int | None = None) -> dict:
    """One eval; returns its per-battle rows (from result.json and events.jsonl) and the sampler's samples.

    Its ports are free when picked, but on a shared machine another process may take one before the eval
    binds it: an eval that failed for a port in use is run once more on fresh ports."""
    for attempt in range(2):
        out = tmp / f"{label(mode, spares)}-w{workers}-{attempt}"
        code, stdout, samples = _eval(root, mode, task_id, workers, battles, think_s, tmp, interval_s, out, spares)
        tail = out.with_suffix(".stderr").read_text(errors="replace")[-2000:]
        if code == 0 or attempt == 1 or "already in use" not in tail:
            break
        print(json.dumps({"retry": f"{mode} {workers} slots", "why": "a port was taken"}), file=sys.stderr, flush=True)
    if code != 0:
        sys.exit(f"eval --workers {workers} --interaction {mode} failed ({code}): {tail}")
    rows = json.loads(stdout)["rows"]
    if not all(r["passed"] for r in rows) or len(rows) != battles:
        sys.exit(f"eval --workers {workers} --interaction {mode}: {len(rows)} battles, not all passed; see {out}")
    played = _steady([_battle(out, r) for r in rows], out)
    phase = (max(b["finished"] for b in played) - min(b["started"] for b in played)).total_seconds()
    return {"rows": played, "phase_s": phase, "samples": samples}


def _eval(root: Path, mode: str, task_id: str, workers: int, battles: int, think_s: float, tmp: Path,
          interval_s: float, out: Path, spares: int | None) -> tuple[int, bytes, list[Sample]]:
    """Run the eval subprocess into `out` (its stderr beside it) while sampling; (exit code, stdout, samples)."""
    ports = free_ports(3 * workers)
    slots = [SlotPorts(*ports[i:i + 3]) for i in range(0, len(ports), 3)]
    env = {**os.environ, "APPWORLD_ROOT": str(root), "RUNS_DIR": str(tmp / "runs"), "OPENAI_API_KEY": "",
           "REFERENCE_BLUE_THINK_S": str(think_s), **({} if spares is None else {"CODE_SPARES": str(spares)})}
    argv = [str(CLI), "eval", "--task-ids", task_id, "--trials", str(battles), "--blue", "reference",
            "--predictor", "ground_truth", "--workers", str(workers), "--interaction", mode, "--out", str(out),
            "--slot-ports", ",".join(f"{s.env}:{s.apis}:{s.gateway}" for s in slots), "--json"]
    with open(out.with_suffix(".stderr"), "wb") as errors:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors, env=env, start_new_session=True)
        sampler = Sampler(proc.pid, slots, interval_s)
        sampler.start()
        try:
            stdout, _ = proc.communicate(timeout=EVAL_TIMEOUT_S)
        finally:
            samples = sampler.stop()
            _stop(proc)
    return proc.returncode, stdout, samples


def _stop(proc: subprocess.Popen) -> None:
    """Interrupt the eval (it stops its slots) if it is still running; kill its group after 60 s."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _battle(out: Path, row: dict) -> dict:
    result = json.loads((out / row["result_path"]).read_text())
    started, finished = (datetime.fromisoformat(result[key].replace("Z", "+00:00"))
                         for key in ("started_at", "finished_at"))
    duration = (finished - started).total_seconds()
    return {"battle_id": result["battle_id"], "started": started, "finished": finished, "duration_s": duration,
            "referee_s": duration - result["timings"].get("wait", 0.0), "timings": result["timings"]}


def _steady(battles: list[dict], out: Path) -> list[dict]:
    """`battles` with `warm`: False for each slot's first battle (its AppWorld servers' first world, cold caches)."""
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines() if line.strip()]
    slot_of = {e["battle_id"]: e.get("slot") for e in events if e["event"] == "start"}
    seen: set = set()
    for battle in sorted(battles, key=lambda b: b["started"]):
        slot = slot_of.get(battle["battle_id"])
        battle["warm"] = slot in seen
        seen.add(slot)
    return battles


def warm_median(run: dict, key: str) -> float:
    """Median of `key` over the warm battles (over every battle when no slot played twice)."""
    warm = [b[key] for b in run["rows"] if b["warm"]] or [b[key] for b in run["rows"]]
    return statistics.median(warm)


def peak(samples: list[Sample], workers: int) -> Sample:
    """The sample with the most slot memory while all `workers` slots were up."""
    full = [s for s in samples if s.slots_present() == workers] or samples
    return max(full, key=Sample.slot_total_kib)


def by_role_mib(sample: Sample, workers: int) -> dict:
    roles: dict[str, float] = {}
    for (owner, role), kib in sample.pss_kib.items():
        key = role if owner != "outside" else f"outside_{role}"
        roles[key] = roles.get(key, 0.0) + kib / 1024
    per_slot = {k: round(v / workers, 1) for k, v in roles.items() if k in ("apis", "environment", "gateway", "repl")}
    repls = sum(n for (owner, role), n in sample.processes.items() if role == "repl")
    return {"total_mib": {k: round(v, 1) for k, v in sorted(roles.items())}, "per_slot_mib": per_slot,
            "repl_processes": repls}


def label(mode: str, spares: int | None) -> str:
    """A measurement's name in its figures: the mode, and in code mode a spare count other than the default."""
    return mode if spares is None or spares == DEFAULT_CODE_SPARES else f"{mode}_spares{spares}"


def measure_mode(args: argparse.Namespace, root: Path, mode: str, tmp: Path, spares: int | None = None) -> None:
    name = label(mode, spares)
    base = run_eval(root, mode, args.task_id, 1, args.battles_per_slot, args.think_s, tmp, args.interval_s, spares)
    base_peak = peak(base["samples"], 1)
    _log(name, 1, base, base_peak)
    holds: list[int] = [1]
    base_referee = warm_median(base, "referee_s")
    for workers in args.slots:
        need = base_peak.slot_total_kib() * workers + MARGIN_KIB
        available = _available_kib()
        if need > available:
            print(json.dumps({"skipped": f"{name} {workers} slots", "need_mib": need // 1024,
                              "available_mib": available // 1024}), file=sys.stderr, flush=True)
            continue
        run = run_eval(root, mode, args.task_id, workers, workers * args.battles_per_slot, args.think_s, tmp,
                       args.interval_s, spares)
        top = peak(run["samples"], workers)
        _log(name, workers, run, top)
        emit_pair(mode, workers, base, base_peak, run, top, args, spares)
        if warm_median(run, "referee_s") <= OVERHEAD_HOLD * base_referee:
            holds.append(workers)
    referee = {"1": round(base_referee, 3)}
    emit(figure(f"capacity_max_slots_holding_overhead_{name}", "slots", max(holds), 1, holds, [1],
                f"largest measured slot count whose median referee time per battle (battle minus the agent's turn) "
                f"is within {OVERHEAD_HOLD}x the 1-slot median, {name}",
                ratio="value/baseline", target=f"referee time at N <= {OVERHEAD_HOLD}x 1 slot",
                meets_target=max(holds) >= max(args.slots),
                extra={"slots_measured": args.slots, "slots_holding": holds, "referee_s_median_1_slot": referee,
                       "code_spares": spares, "loadavg": _load()}))


def emit_pair(mode: str, workers: int, base: dict, base_peak: Sample, run: dict, top: Sample,
              args: argparse.Namespace, spares: int | None = None) -> None:
    name = label(mode, spares)
    first_mib, total_mib = base_peak.slot_total_kib() / 1024, top.slot_total_kib() / 1024
    marginal = (total_mib - first_mib) / (workers - 1)
    context = {"task_id": args.task_id, "think_s": args.think_s, "battles": len(run["rows"]),
               "loadavg": _load(), "total_mib_at_n": round(total_mib, 1), "first_slot_mib": round(first_mib, 1),
               "by_role_at_n": by_role_mib(top, workers), "by_role_at_1": by_role_mib(base_peak, 1),
               "samples": len(run["samples"]), "code_spares": spares}
    emit(figure(f"capacity_pss_per_slot_{name}_{workers}", "MiB", marginal, first_mib, [marginal], [first_mib],
                f"PSS each {mode} slot beyond the first adds with {workers} in flight (AppWorld's two servers, "
                "gateway, REPLs" + ("" if spares is None else f", {spares} spare REPLs a gateway") +
                "); baseline = the first slot with the fork server",
                ratio="value/baseline", target=f"<= {TARGET_MIB[mode]:.0f} MiB per slot beyond the first",
                meets_target=marginal <= TARGET_MIB[mode], extra=context))
    rate = len(run["rows"]) / run["phase_s"] * 60
    base_rate = len(base["rows"]) / base["phase_s"] * 60
    durations = [r["duration_s"] for r in run["rows"]]
    want = workers * SCALING_TARGET
    extra = {"steady_ratio": round(workers * warm_median(base, "duration_s") / warm_median(run, "duration_s"), 3),
             "battle_s": {"median": round(statistics.median(durations), 3), "max": round(max(durations), 3)},
             "referee_s_median": round(warm_median(run, "referee_s"), 3), "loadavg": _load(), "think_s": args.think_s,
             "code_spares": spares}
    emit(figure(f"capacity_tasks_per_minute_{name}_{workers}", "tasks/min", rate, base_rate, [rate], [base_rate],
                f"battles per minute with {workers} {name} slots vs 1 (first start to last finish)",
                ratio="value/baseline", target=f">= {want:g}x 1 slot", meets_target=rate / base_rate >= want,
                extra=extra))


def _log(mode: str, workers: int, run: dict, top: Sample) -> None:
    print(json.dumps({"mode": mode, "workers": workers, "phase_s": round(run["phase_s"], 2),
                      "peak_total_mib": round(top.slot_total_kib() / 1024, 1), "by_role": by_role_mib(top, workers),
                      "loadavg": _load()}), file=sys.stderr, flush=True)


def _available_kib() -> int:
    import psutil

    return psutil.virtual_memory().available // 1024


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slots", default="4,8,16", help="slot counts to measure beside 1 (comma-separated)")
    parser.add_argument("--modes", default="tools,code", help="tools, code or both (comma-separated)")
    parser.add_argument("--think-s", type=float, default=5.0, help="the Blue's wait for its model per call")
    parser.add_argument("--battles-per-slot", type=int, default=2)
    parser.add_argument("--task-id", help="the task every battle plays (default: the dev split's first)")
    parser.add_argument("--interval-s", type=float, default=2.0, help="seconds between memory samples")
    parser.add_argument("--quick", action="store_true", help="2 slots, 1 battle per slot, 2 s think")
    parser.add_argument("--root", help="AppWorld root (default: the built world, APPWORLD_ROOT)")
    parser.add_argument("--code-spares", help=f"code mode: spare REPL counts a gateway keeps (CODE_SPARES), each "
                                              f"measured (default {DEFAULT_CODE_SPARES},0; --quick "
                                              f"{DEFAULT_CODE_SPARES})")
    args = parser.parse_args(argv)
    try:
        args.slots = sorted({int(n) for n in args.slots.split(",") if n.strip()})
    except ValueError:
        parser.error(f"--slots takes comma-separated whole numbers, got {args.slots!r}")
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not args.slots or min(args.slots) < 2 or any(m not in TARGET_MIB for m in args.modes):
        parser.error("--slots needs counts >= 2; --modes takes tools and/or code")
    if args.quick:
        args.slots, args.battles_per_slot, args.think_s = [2], 1, min(args.think_s, 2.0)
    default_spares = f"{DEFAULT_CODE_SPARES}" if args.quick else f"{DEFAULT_CODE_SPARES},0"
    try:
        args.code_spares = [int(n) for n in (args.code_spares or default_spares).split(",") if n.strip()]
    except ValueError:
        parser.error(f"--code-spares takes comma-separated whole numbers, got {args.code_spares!r}")
    if not args.code_spares or not all(0 <= n <= MAX_CODE_SPARES for n in args.code_spares):
        parser.error(f"--code-spares takes counts from 0 to {MAX_CODE_SPARES}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print_machine("bench_capacity")
    root = built_world(args.root)
    if not args.task_id:
        args.task_id = (root / "data" / "datasets" / "dev.txt").read_text().split()[0]
    with tempfile.TemporaryDirectory(prefix="bench-capacity-") as tmp:
        for mode in args.modes:
            for spares in (args.code_spares if mode == "code" else [None]):
                measure_mode(args, root, mode, Path(tmp), spares)
    return 0


if __name__ == "__main__":
    sys.exit(main())
