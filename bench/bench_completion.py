"""Completion detection latency: Blue's `complete_task` -> the Green's wait step returning, ours vs the seed's 5 s poll.

Run: `.venv/bin/python bench/bench_completion.py [--trials N] [--root DIR] [--quick]`.

One world slot (APIs server + env server + MCP gateway, free ports) is started once. Each trial
opens a task world (`/initialize`), tells the gateway about the battle (`PUT /control/battle`),
then a thread standing in for Blue sleeps a random delay and calls `supervisor__complete_task`
through the gateway over MCP (one session kept open, as a Blue does), while the main thread runs
a wait step. Latency = wait step returned - the moment the complete_task call was issued (one
process, one monotonic clock). It includes the gateway forwarding the call to the APIs server.

- ours: `green_agent.steps.wait.wait_for_completion` with the gateway (long-poll of
  `/control/completion`, confirmed with `/task_completed`), exactly as step 6 runs it.
- baseline: the seed's loop, really run: `POST /task_completed`, sleep 5 s, repeat.

Trials alternate ours/baseline with the same seeded delays (uniform over 0.2-5.2 s, one full
poll period, so the baseline's phase is uniform). Figures: `completion_detection_p50` and
`completion_detection_p95` (value = ours, baseline = 5 s poll, ratio = baseline/value, a speed-up;
target p95 < 0.5 s).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (bench_settings, dev_tasks, emit, figure, percentile, print_machine, remove_experiments,  # noqa: E402
                    spread, start_slot)

SEED_POLL_S = 5.0
DEADLINE_S = 60.0
TARGET_P95_S = 0.5
COMPLETE_TASK = "supervisor__complete_task"


def seed_wait(client: Any, task_id: str, deadline_s: float, poll_s: float = SEED_POLL_S) -> bool:
    """The seed's wait: ask `/task_completed`, sleep `poll_s`, until true or the deadline."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if client.task_completed(task_id):
            return True
        time.sleep(poll_s)
    return False


def trial(client: Any, control: Any, blue: Any, apis_url: str, task_id: str, battle_id: str, delay_s: float,
          impl: str, appworld_root: Path) -> dict:
    """One trial: open the world, Blue completes after `delay_s`, wait with `impl`; returns timings."""
    from green_agent.steps.wait import wait_for_completion

    client.initialize(task_id, battle_id, apis_url)
    control.start_battle(battle_id, task_id, None, launch_url_allowed=True)  # one Blue session serves every trial
    marks: dict[str, Any] = {}

    def act() -> None:
        time.sleep(delay_s)
        marks["called"] = time.monotonic()
        marks["reply"] = blue.call_tool(COMPLETE_TASK, {"status": "success"})
        marks["returned"] = time.monotonic()

    actor = threading.Thread(target=act, name=f"blue-{battle_id}", daemon=True)
    try:
        actor.start()
        if impl == "ours":
            result = wait_for_completion(client, task_id, battle_id, DEADLINE_S, control)
            completed, via, reported = result.completed, result.detected_via, result.detection_latency_s
        else:
            completed, via, reported = seed_wait(client, task_id, DEADLINE_S), "task_completed", None
        done = time.monotonic()
        actor.join(timeout=30)
    finally:
        control.end_battle()
        client.close(task_id)
        remove_experiments(appworld_root, [battle_id])  # our own experiment's outputs
    reply = marks.get("reply") or {}
    if not completed or "called" not in marks or (isinstance(reply.get("response"), dict) and reply["response"].get("is_error")):
        raise SystemExit(f"trial {battle_id} ({impl}) did not complete: completed={completed}, reply={reply!r:.300}")
    return {"latency_s": done - marks["called"], "call_s": marks["returned"] - marks["called"], "detected_via": via,
            "gateway_reported_s": reported}


def run_bench(trials: int, root: str | None, delay_range: tuple[float, float], seed: int) -> list[dict]:
    from blue_agent.gateway_client import GatewaySession
    from green_agent.runtime.slot_clients import slot_env_client, slot_gateway

    rng = random.Random(seed)
    delays = [rng.uniform(*delay_range) for _ in range(trials)]
    rows: dict[str, list[dict]] = {"ours": [], "seed": []}
    with tempfile.TemporaryDirectory(prefix="bench-completion-") as tmp:
        settings = bench_settings(tmp, root)
        tasks = dev_tasks(settings)
        slot = start_slot(settings, tmp)
        try:
            client = slot_env_client(slot.urls.env_url, slot.urls.apis_url)
            control = slot_gateway(slot.urls.gateway_url, slot.urls.apis_url)
            with GatewaySession(f"{slot.urls.gateway_url}/mcp") as blue:
                trial(client, control, blue, slot.urls.apis_url, tasks[0], f"bench-completion-warmup-{int(time.time())}",
                      0.1, "ours", settings.appworld_root)  # warm-up (first /initialize loads AppWorld), dropped
                for i, delay in enumerate(delays):
                    for impl in (("ours", "seed") if i % 2 == 0 else ("seed", "ours")):
                        battle_id = f"bench-completion-{impl}-{i:03d}-{int(time.time())}"
                        rows[impl].append(trial(client, control, blue, slot.urls.apis_url, tasks[i % len(tasks)],
                                                battle_id, delay, impl, settings.appworld_root))
        finally:
            slot.stop()
    return figures(rows, delay_range)


def figures(rows: dict[str, list[dict]], delay_range: tuple[float, float]) -> list[dict]:
    ours = [r["latency_s"] for r in rows["ours"]]
    seed = [r["latency_s"] for r in rows["seed"]]
    reported = [r["gateway_reported_s"] for r in rows["ours"] if r["gateway_reported_s"] is not None]
    via = {v: sum(1 for r in rows["ours"] if r["detected_via"] == v) for v in {r["detected_via"] for r in rows["ours"]}}
    extra_common = {"complete_task_call_s": spread([r["call_s"] for r in rows["ours"] + rows["seed"]]),
                    "detected_via": via}
    out = []
    for q in (50, 95):
        value, base = percentile(ours, q), percentile(seed, q)
        extra = dict(extra_common)
        if reported:
            extra["gateway_reported_latency_s"] = {"p": q, "value": round(percentile(reported, q), 4)}
        out.append(figure(
            f"completion_detection_p{q}", "s", value, base, ours, seed,
            f"p{q} over {len(ours)} trials each, Blue's complete_task (MCP call issued) -> wait step returned; "
            f"ours = gateway long-poll + /task_completed, baseline = /task_completed every {SEED_POLL_S:.0f} s "
            f"(seed), same delays uniform {delay_range[0]}-{delay_range[1]} s; ratio = baseline/value (speed-up)",
            target=f"p95 < {TARGET_P95_S} s" if q == 95 else None,
            meets_target=(value < TARGET_P95_S) if q == 95 else None, extra=extra))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20, help="trials per implementation (default 20)")
    parser.add_argument("--root", help="AppWorld root (default: settings / APPWORLD_ROOT)")
    parser.add_argument("--seed", type=int, default=11, help="seed of the random delays")
    parser.add_argument("--quick", action="store_true", help="smoke mode: 2 trials each, delays 0.1-0.6 s")
    args = parser.parse_args(argv)
    print_machine("bench_completion")
    trials, delays = (2, (0.1, 0.6)) if args.quick else (args.trials, (0.2, 0.2 + SEED_POLL_S))
    for line in run_bench(trials, args.root, delays, args.seed):
        emit(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
