"""World build time and the memory of one running world slot.

Run: `.venv/bin/python bench/bench_world.py [--builds K] [--root DIR] [--slot-starts K] [--quick]`.

- Build: `appworld-green world build --root <temp>` (the real builder, in .venv-appworld), K times,
  each into a fresh temp root; baseline = copying the built `data/` tree (`shutil.copytree`), the
  floor of producing the same files on this disk. Figure `world_build_time` (ratio = value/baseline).
  The builder's own step split (api_docs, base_dbs, tasks) is kept in `builder_steps_s`.
- Memory: one slot (APIs server + env server + MCP gateway, free ports) is started on the world
  just built (or `--root` when no build ran); RSS is summed over each server's process tree
  (psutil; shared library pages counted once per process, so the sum overstates a little) and
  sampled 3 times, idle and after one battle with the reference Blue (the Blue is not part of the
  slot and not counted). Figures: `slot_memory_after_battle` (value = after, baseline = idle, ratio =
  growth) and `gateway_memory_share` (value = the gateway, baseline = the two AppWorld servers, idle).
- Slot start-up, fork vs exec (`--slot-starts K`, alternating): a slot whose AppWorld servers are
  forked from the already-warm fork server (`APPWORLD_SERVER_LAUNCH=fork`, the default) against one
  whose servers are fresh processes (`exec`), each from `WorldSlot.start()` to every server
  answering. Figure `slot_start_time_forked` (ratio = baseline/value, the speed-up; the first forked
  slot of a process, which warms the fork server, is in `first_forked_slot_s`), and
  `appworld_servers_pss_forked`: PSS (private + fair share of shared pages) of the two AppWorld
  servers of a forked slot vs an exec'd one, idle (ratio = value/baseline).
- What a gateway forked from a warm parent could share (issue 49, not built): `gateway_import_share`, the
  private (anonymous) memory a fresh interpreter holds once it has imported the gateway's modules (value,
  measured in a subprocess of this virtualenv), against the slot's running gateway's private anonymous memory
  after the battle (baseline); ratio = value/baseline. A warm parent holding those imports (the garbage
  collector frozen, as the AppWorld fork server does) would share that much with every gateway it forks,
  before copy-on-write; exec'd gateways share only library code.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_probe import anonymous_mib  # noqa: E402
from common import (BENCH_DIR, bench_settings, dev_tasks, emit, figure, print_machine, pss_mib, slot_pids,  # noqa: E402
                    start_slot, tree_rss_mib)

SAMPLES = 3
SAMPLE_EVERY_S = 1.0
SETTLE_S = 2.0
BUILD_TIMEOUT_S = 1800
_STEPS = re.compile(r"(\w+) ([0-9.]+)s")


def build_once(root: Path) -> tuple[float, dict[str, float]]:
    """Build a world into `root` with the CLI; return (wall seconds, builder step seconds)."""
    cli = Path(sys.executable).parent / "appworld-green"
    started = time.perf_counter()
    proc = subprocess.run([str(cli), "world", "build", "--root", str(root)], capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT_S)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"world build into {root} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    built = next((line for line in proc.stdout.splitlines() if line.startswith("built ")), "")
    steps = {name: float(value) for name, value in _STEPS.findall(built.split("(", 1)[-1])} if "(" in built else {}
    return seconds, steps


def copy_once(source: Path, target: Path) -> float:
    started = time.perf_counter()
    shutil.copytree(source, target)
    return time.perf_counter() - started


def build_figures(builds: int, tmp: Path) -> tuple[list[dict], Path]:
    """Build `builds` times; return the build figure and the last built root (kept for the memory part)."""
    times, copies, steps = [], [], []
    root = tmp / "build-0"
    for i in range(builds):
        root = tmp / f"build-{i}"
        seconds, step = build_once(root)
        times.append(seconds)
        steps.append(step)
        copy = tmp / f"copy-{i}"
        copies.append(copy_once(root / "data", copy))
        shutil.rmtree(copy)
        if i < builds - 1:
            shutil.rmtree(root)
    tasks = sum(1 for p in (root / "data" / "tasks").iterdir() if p.is_dir())
    size = sum(p.stat().st_size for p in (root / "data").rglob("*") if p.is_file()) / 2**20
    median_steps = {k: round(statistics.median(s.get(k, 0.0) for s in steps), 2) for k in steps[0]} if steps[0] else {}
    line = figure("world_build_time", "s", statistics.median(times), statistics.median(copies), times, copies,
                  f"`appworld-green world build` into a fresh root ({tasks} tasks, {size:.0f} MiB of data), "
                  "vs copying the built data/ tree; ratio = value/baseline", ratio="value/baseline",
                  extra={"builder_steps_s": median_steps, "tasks": tasks, "data_mib": round(size, 1)})
    return [line], root


def sample(pids: dict[str, int]) -> dict[str, float]:
    """Per-role tree RSS (MiB), median of SAMPLES samples."""
    samples = []
    for i in range(SAMPLES):
        if i:
            time.sleep(SAMPLE_EVERY_S)
        rss = tree_rss_mib(pids.values())
        samples.append({role: rss[pid] for role, pid in pids.items()})
    return {role: round(statistics.median(s[role] for s in samples), 1) for role in pids}


GATEWAY_IMPORTS = ("mcp_gateway.cli", "mcp_gateway.server", "mcp_gateway.gateway", "mcp_gateway.code_mode")
"""What a gateway has imported by the time it serves (`python -m mcp_gateway` -> cli.run -> server)."""


def imported_gateway_anonymous_mib() -> float:
    """Anonymous memory of a fresh interpreter of this virtualenv once it imported `GATEWAY_IMPORTS` (import_probe)."""
    appworld_dir = Path(BENCH_DIR).parent / "scenarios" / "appworld"
    proc = subprocess.run([sys.executable, str(Path(BENCH_DIR) / "import_probe.py"), *GATEWAY_IMPORTS],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(appworld_dir)})
    if proc.returncode != 0:
        raise SystemExit(f"importing the gateway's modules failed: {proc.stderr[-1500:]}")
    return float(proc.stdout.split()[-1])


def memory_figures(root: str | None, tmp: Path) -> list[dict]:
    from bench_overhead import run_one
    from green_agent.local_battle import open_blue

    settings = bench_settings(str(tmp), root)
    started = time.perf_counter()
    slot = start_slot(settings, str(tmp))
    start_s = time.perf_counter() - started
    try:
        pids = slot_pids(slot)
        time.sleep(SETTLE_S)
        idle = sample(pids)
        with open_blue("reference", settings, slot.urls, tmp / "logs") as blue_url:
            row = run_one(settings, slot.urls, blue_url, dev_tasks(settings)[0], 0, "ground_truth", tmp)
        time.sleep(SETTLE_S)
        after = sample(pids)
        gateway_anonymous = anonymous_mib(pids["gateway"])
    finally:
        slot.stop()
    imported = imported_gateway_anonymous_mib()
    idle_total, after_total = sum(idle.values()), sum(after.values())
    appworld_idle = idle["apis"] + idle["environment"]
    return [
        figure("slot_memory_after_battle", "MiB", after_total, idle_total, [after_total], [idle_total],
               "RSS of one world slot (APIs + env server + gateway, each summed over its process tree), after one "
               "reference battle (value) vs idle after start (baseline); ratio = value/baseline (growth)",
               ratio="value/baseline", extra={"idle_mib": idle, "after_battle_mib": after,
                                              "slot_start_s": round(start_s, 2), "battle_outcome": row["outcome"]}),
        figure("gateway_memory_share", "MiB", idle["gateway"], appworld_idle, [idle["gateway"]], [appworld_idle],
               "idle RSS of our MCP gateway (value) vs AppWorld's two servers (baseline); ratio = value/baseline",
               ratio="value/baseline"),
        figure("gateway_import_share", "MiB", imported, gateway_anonymous, [imported], [gateway_anonymous],
               "anonymous memory of a fresh interpreter that imported the gateway's modules (value) vs the running "
               "gateway's after a battle (baseline): what a warm parent forking the gateways could share with each, "
               "before copy-on-write (not built); ratio = value/baseline", ratio="value/baseline"),
    ]


def timed_slot(settings: object, tmp: Path, launch: str) -> tuple[float, float]:
    """Start a slot with `launch`; return (start seconds, idle PSS MiB of its two AppWorld servers); stop it."""
    started = time.perf_counter()
    slot = start_slot(settings, str(tmp), launch=launch)
    seconds = time.perf_counter() - started
    try:
        pids = slot_pids(slot)
        time.sleep(SETTLE_S)
        pss = pss_mib([pids["apis"], pids["environment"]])
    finally:
        slot.stop()
    return seconds, sum(pss.values())


def slot_start_figures(root: str | None, tmp: Path, repeats: int) -> list[dict]:
    settings = bench_settings(str(tmp), root)
    first_forked_s, _ = timed_slot(settings, tmp, "fork")  # warms this process's fork server
    runs: dict[str, list[tuple[float, float]]] = {"fork": [], "exec": []}
    for i in range(repeats):
        for launch in (("exec", "fork") if i % 2 == 0 else ("fork", "exec")):
            runs[launch].append(timed_slot(settings, tmp, launch))
    start = {k: [s for s, _ in v] for k, v in runs.items()}
    pss = {k: [m for _, m in v] for k, v in runs.items()}
    med = {k: statistics.median(v) for k, v in start.items()}
    med_pss = {k: statistics.median(v) for k, v in pss.items()}
    return [
        figure("slot_start_time_forked", "s", med["fork"], med["exec"], start["fork"], start["exec"],
               "world slot start (APIs + env server + gateway answering): AppWorld servers forked from the warm "
               "fork server (value) vs fresh processes (baseline); ratio = speed-up",
               extra={"first_forked_slot_s": round(first_forked_s, 2)}),
        figure("appworld_servers_pss_forked", "MiB", med_pss["fork"], med_pss["exec"], pss["fork"], pss["exec"],
               "idle PSS of a slot's two AppWorld servers, forked (value) vs exec'd (baseline); ratio = value/baseline",
               ratio="value/baseline"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=int, default=2, help="world builds (default 2; 0 skips the build figure)")
    parser.add_argument("--root", help="world for the memory part when no build runs (default: APPWORLD_ROOT)")
    parser.add_argument("--slot-starts", type=int, default=3, help="fork/exec slot starts each (0 skips them)")
    parser.add_argument("--quick", action="store_true", help="smoke mode: no build, memory on the existing world")
    args = parser.parse_args(argv)
    print_machine("bench_world")
    builds = 0 if args.quick else args.builds
    with tempfile.TemporaryDirectory(prefix="bench-world-") as tmp_name:
        tmp = Path(tmp_name)
        root = args.root
        if builds > 0:
            lines, built = build_figures(builds, tmp)
            for line in lines:
                emit(line)
            root = str(built)
        for line in memory_figures(root, tmp):
            emit(line)
        starts = min(args.slot_starts, 1) if args.quick else args.slot_starts
        if starts > 0:
            for line in slot_start_figures(root, tmp, starts):
                emit(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
