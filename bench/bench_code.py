"""Code mode: one `execute` round trip with one API call, ours vs AppWorld's own `/execute`; the sandbox's start.

Run: `.venv/bin/python bench/bench_code.py [--trials N] [--root DIR] [--quick]`; with `CODE_SANDBOX=landlock`
(and an `APPWORLD_PYTHON` other users can run) every figure is taken under the landlock fallback, not bubblewrap.

One world slot (APIs server + env server + MCP gateway, free ports) is started once and one task world is
opened in remote-APIs mode. The same code, `print(apis.supervisor.show_profile()['email'])`, then runs
alternately:
- ours: the gateway's `execute` tool over MCP (one session kept open, as an agent does), in the battle's
  bubblewrap sandbox, its API call relayed through the gateway's per-battle path to the APIs server;
- baseline: AppWorld's `POST /execute` on the env server, whose REPL calls the same APIs server.
Figures: `code_execute_round_trip` (ours vs AppWorld's, ratio value/baseline; target <= 1.2x) and
`code_sandbox_start` (spawning one battle's sandbox vs the battle's `/initialize`, ratio value/baseline;
target <= 0.2 s), with the REPL's ready time (IPython and AppWorld's helpers imported) beside it.
Then `code_battle_vs_tools`: whole battles of one dev task by the reference Blue (its reference solution),
alternately in tools mode and in code mode on the same slot and Blue, wall time per battle (engine start to
result), median code / median tools (target <= 1.2x): the steady state of a run. The slot is a code run's (its
gateway readies its spare REPLs as it starts); the first `WARMUP` battles of each mode are set apart
(`warmup_s`). Beside it, `first_battle_ratio` (target <= 1.5x): the first battle of a run, each on a fresh slot
started for its mode (slot and Blue up, then one battle at once), median code / median tools over `FIRST_RUNS`
slots a mode (`first_battle_s`): what the first battle of `eval --interaction code` pays against a tools run's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from typing import Any
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (bench_settings, dev_tasks, emit, figure, print_machine, remove_experiments, spread,  # noqa: E402
                    start_slot)

CODE = "print(apis.supervisor.show_profile()['email'])"
BATTLE_TARGET_RATIO = 1.2
FIRST_BATTLE_TARGET_RATIO = 1.5
FIRST_RUNS = 3
"""Fresh slots a mode for `first_battle_ratio`: three, so its median is one battle's time, not the mean of two."""
WARMUP = 2
TARGET_RATIO = 1.2
TARGET_START_S = 0.2


def run_bench(trials: int, root: str | None) -> list[dict]:
    from blue_agent.code_mode import execute
    from blue_agent.gateway_client import GatewaySession
    from green_agent.appworld_client import AppWorldClient
    from green_agent.gateway_client import GatewayClient
    from mcp_gateway.code.sandbox import require_isolation
    from mcp_gateway.code.session import ApiAnswer, CodeSession

    with tempfile.TemporaryDirectory() as workdir:
        settings = bench_settings(workdir, root)
        slot = start_slot(settings, workdir)
        try:
            urls = slot.urls
            client = AppWorldClient(urls.env_url, credentials=slot.credentials)
            control = GatewayClient.for_slot(urls.gateway_url, urls.apis_url)
            task_id = dev_tasks(settings)[0]
            started = time.perf_counter()
            task = client.initialize(task_id, "bench-code", urls.apis_url)
            initialize_s = time.perf_counter() - started
            base = control.start_battle("bench-code", task_id, None, interaction="code", task_datetime=task.datetime)
            ours, theirs = [], []
            with GatewaySession(f"{base}/mcp") as session:
                first = execute(session, CODE)
                assert "@" in first, first
                assert "@" in client.execute(task_id, CODE)
                for _ in range(trials):
                    t0 = time.perf_counter()
                    execute(session, CODE)
                    ours.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    client.execute(task_id, CODE)
                    theirs.append(time.perf_counter() - t0)
            control.end_battle()
            client.close(task_id)
            python = settings.appworld_python  # CODE_SANDBOX=landlock measures the fallback (the slot's gateway too)
            isolation = require_isolation(python, choice=settings.code_sandbox)
            spawns, readies = [], []
            for _ in range(max(3, trials // 5)):
                with CodeSession(python=python, isolation=isolation, task_datetime=task.datetime, apis={},
                                 relay=lambda call: ApiAnswer(status_code=200)) as repl:
                    repl.execute("pass")
                    spawns.append(repl.spawn_s or 0.0)
                    readies.append(repl.ready_s or 0.0)
        finally:
            slot.stop()
            remove_experiments(settings.appworld_root, ["bench-code"])
        battles = battle_times(settings, trials=max(1, trials // 3), workdir=workdir)
        first = first_battle_times(settings, runs=1 if trials < 6 else FIRST_RUNS, workdir=workdir)
    median = sorted(ours)[len(ours) // 2]
    baseline = sorted(theirs)[len(theirs) // 2]
    spawn = sorted(spawns)[len(spawns) // 2]
    return [
        figure("code_execute_round_trip", "s", median, baseline, ours, theirs,
               "one execute with one API call: our gateway + sandbox (MCP) vs AppWorld's /execute (HTTP)",
               ratio="value/baseline", target=f"<= {TARGET_RATIO}x", meets_target=median <= TARGET_RATIO * baseline),
        figure("code_sandbox_start", "s", spawn, initialize_s, spawns, [initialize_s],
               "spawning one battle's sandbox vs the battle's /initialize (the REPL imports while the battle is set "
               "up; ready_s is when the first execution can run)", ratio="value/baseline",
               target=f"<= {TARGET_START_S} s", meets_target=spawn <= TARGET_START_S,
               extra={"ready_s": sorted(readies)[len(readies) // 2], "isolation": isolation.summary()}),
        battle_figure(battles, first),
    ]


def battle_times(settings: Any, trials: int, workdir: str) -> dict[str, list[float]]:
    """Wall seconds of `WARMUP + trials` reference battles per mode, alternating tools and code on one fresh slot."""
    slot = start_slot(settings, workdir, code=True)
    times: dict[str, list[float]] = {"tools": [], "code": []}
    try:
        with _blue(settings, slot, workdir) as blue_url:
            for i in range(WARMUP + trials):
                for mode in ("tools", "code"):
                    times[mode].append(_battle(settings, slot, blue_url, workdir, mode, f"bench-code-{mode}-{i}"))
    finally:
        slot.stop()
        remove_experiments(settings.appworld_root, [f"bench-code-{m}-{i}" for m in times
                                                    for i in range(WARMUP + trials)])
    return times


def first_battle_times(settings: Any, runs: int, workdir: str) -> dict[str, list[float]]:
    """Wall seconds of the first battle of a run, per mode: a fresh slot (a code run's readies its spares as it
    starts, as `eval --interaction code` does) and the reference Blue started, then one battle at once; `runs`
    times per mode, alternating."""
    times: dict[str, list[float]] = {"tools": [], "code": []}
    names = []
    try:
        for i in range(runs):
            for mode in ("tools", "code"):
                slot = start_slot(settings, workdir, code=mode == "code")
                try:
                    with _blue(settings, slot, workdir) as blue_url:
                        names.append(f"bench-code-first-{mode}-{i}")
                        times[mode].append(_battle(settings, slot, blue_url, workdir, mode, names[-1]))
                finally:
                    slot.stop()
    finally:
        remove_experiments(settings.appworld_root, names)
    return times


def _blue(settings: Any, slot: Any, workdir: str) -> Any:
    from green_agent.local_battle import open_blue
    return open_blue("reference", settings, slot.urls, Path(workdir) / "logs")


def _battle(settings: Any, slot: Any, blue_url: str, workdir: str, mode: str, battle_id: str) -> float:
    """One reference battle of the first dev task in `mode`: wall seconds, engine start to result."""
    from green_agent.engine.config import BattleChoices
    from green_agent.local_battle import run_on_slot

    choices = BattleChoices(blue="reference", predictor="ground_truth", interaction=mode)
    started = time.perf_counter()
    result = run_on_slot(dev_tasks(settings)[0], choices, settings, slot.urls, blue_url,
                         Path(workdir) / battle_id, battle_id)
    if result.outcome != "passed":
        raise SystemExit(f"the {mode} battle did not pass ({result.outcome}: {result.reason})")
    return time.perf_counter() - started


def battle_figure(times: dict[str, list[float]], first: dict[str, list[float]]) -> dict:
    code, tools = times["code"][WARMUP:], times["tools"][WARMUP:]
    median, baseline = statistics.median(code), statistics.median(tools)
    first_ratio = statistics.median(first["code"]) / statistics.median(first["tools"])
    steady_ok, first_ok = median <= BATTLE_TARGET_RATIO * baseline, first_ratio <= FIRST_BATTLE_TARGET_RATIO
    return figure("code_battle_vs_tools", "s", median, baseline, code, tools,
                  "one reference battle of the same task in code mode vs tools mode (same slot and Blue, "
                  "alternating; wall time per battle, after the warm-up); first_battle_ratio: the first battle of "
                  "a run on a fresh slot, code vs tools", ratio="value/baseline",
                  target=f"<= {BATTLE_TARGET_RATIO}x steady, first_battle_ratio <= {FIRST_BATTLE_TARGET_RATIO}x",
                  meets_target=steady_ok and first_ok,
                  extra={"first_battle_ratio": round(first_ratio, 3),
                         "first_battle_target": f"<= {FIRST_BATTLE_TARGET_RATIO}x",
                         "first_battle_meets_target": first_ok, "steady_meets_target": steady_ok,
                         "first_battle_s": {mode: spread(first[mode]) for mode in first},
                         "warmup_s": {mode: [round(t, 4) for t in times[mode][:WARMUP]] for mode in times}})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30, help="round trips per side (default 30)")
    parser.add_argument("--root", help="AppWorld root (default: settings / APPWORLD_ROOT)")
    parser.add_argument("--quick", action="store_true", help="smoke mode: 3 round trips per side")
    args = parser.parse_args(argv)
    print_machine("bench_code")
    for line in run_bench(3 if args.quick else args.trials, args.root):
        emit(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
