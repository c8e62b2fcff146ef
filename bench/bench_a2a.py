"""The A2A assessment: throughput by `workers`, and the in-band protocol's own cost per tool call.

Run: `.venv/bin/python bench/bench_a2a.py [--num-tasks N] [--think-s S] [--workers 1,2,4] [--quick]`.

One `appworld-green serve` and one model-bound reference purple (`purple --kind reference`, waiting
`--think-s` before each tool call, like an agent waiting for its model) are started on free ports;
then, for each worker count (in the order given), one assessment of the first N dev tasks is sent
with a plain a2a-sdk client and timed from the request to the `completed` artifact. Every
assessment must score TGC 100, otherwise the script fails.

Figures (one JSON line each, see bench/common.py):
- `a2a_tasks_per_minute_workers{W}`: tasks / wall minutes at W workers; baseline = `workers` 1
  (ratio = value/baseline, the speed-up).
- `a2a_green_time_per_step_ms`: per tool call, the bridge's own time (reading the purple's reply,
  running the call through the gateway, writing the result; `BridgeReport.green_s / tool_calls`)
  against the MCP path's cost of the same calls (the MCP round trip an MCP Blue pays:
  `gateway_s / tool_calls`), over every battle of the 1-worker run; ratio = value/baseline, target <= 1.2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from common import built_world, emit, figure, print_machine

REPO = Path(__file__).resolve().parent.parent
CLI = REPO / ".venv" / "bin" / "appworld-green"
sys.path.insert(0, str(REPO / "scenarios" / "appworld"))


def free_ports(count: int) -> list[int]:
    import socket

    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def start(argv: list[str], env: dict[str, str], log: Path) -> tuple[subprocess.Popen, str]:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([str(CLI), *argv, "--port", str(port)], env=env, stdout=log.open("w"),
                               stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    import requests

    for _ in range(300):
        try:
            if requests.get(f"{url}/.well-known/agent-card.json", timeout=1).status_code == 200:
                return process, url
        except requests.RequestException:
            time.sleep(0.1)
    raise RuntimeError(f"{argv[0]} did not answer its card; see {log}")


async def assess(green: str, request: dict) -> dict:
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types import DataPart, Message, Part, Role, TextPart

    message = Message(role=Role.user, parts=[Part(root=TextPart(text=json.dumps(request)))],
                      message_id=uuid.uuid4().hex)
    async with httpx.AsyncClient(timeout=3600) as http:
        card = await A2ACardResolver(http, green).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
        last = None
        async for event in client.send_message(message):
            last = event
    task = last[0]
    if task.status.state.value != "completed":
        raise RuntimeError(f"assessment ended {task.status.state.value}")
    return next(p.root.data for a in task.artifacts for p in a.parts if isinstance(p.root, DataPart))


def bridge_timings(data: dict) -> list[tuple[float, float, int]]:
    """(green_s, gateway_s, tool_calls) of every battle of an assessment, from its result.json files."""
    rows = []
    for row in data["rows"]:
        result = json.loads((Path(data["run_dir"]) / "tasks" / row["task_id"] / "result.json").read_text())
        report = result["completion"]["bridge_report"]
        rows.append((report["green_s"], report["gateway_s"], report["tool_calls"]))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-tasks", type=int, default=21)
    parser.add_argument("--think-s", type=float, default=1.0)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--root", type=Path, default=None)
    parser.add_argument("--quick", action="store_true", help="6 tasks, workers 1 and 2")
    args = parser.parse_args()
    root = built_world(args.root)
    print_machine("bench_a2a")
    workers = [1, 2] if args.quick else [int(w) for w in args.workers.split(",")]
    num_tasks = 6 if args.quick else args.num_tasks
    with tempfile.TemporaryDirectory(prefix="bench-a2a-") as tmp_text:
        tmp = Path(tmp_text)
        env = {**os.environ, "APPWORLD_ROOT": str(root), "RUNS_DIR": str(tmp / "runs"), "OPENAI_API_KEY": "",
               "REFERENCE_BLUE_THINK_S": str(args.think_s)}
        slots = ",".join(":".join(str(p) for p in free_ports(3)) for _ in range(max(workers)))
        green, green_url = start(["serve", "--slot-ports", slots], env, tmp / "green.log")
        purple, purple_url = start(["purple", "--kind", "reference"], env, tmp / "purple.log")
        try:
            measured = {}
            for count in workers:
                request = {"participants": {"agent": purple_url},
                           "config": {"num_tasks": num_tasks, "workers": count, "predictor": "ground_truth"}}
                started = time.monotonic()
                data = asyncio.run(assess(green_url, request))
                wall = time.monotonic() - started
                if data["tgc"] != 100.0:
                    raise RuntimeError(f"workers {count}: TGC {data['tgc']}, expected 100; outcomes {data['outcomes']}, "
                                       f"{[r['reason'] for r in data['rows']][:2]}")
                measured[count] = (wall, data, bridge_timings(data))
        finally:
            for process in (green, purple):
                os.killpg(process.pid, 15)
                process.wait(timeout=30)
    base_wall = measured[workers[0]][0]
    base_tpm = num_tasks / (base_wall / 60)
    for count in workers[1:]:
        wall = measured[count][0]
        tpm = num_tasks / (wall / 60)
        emit(figure(f"a2a_tasks_per_minute_workers{count}", "tasks/min", tpm, base_tpm, [tpm], [base_tpm],
                    f"A2A assessment of {num_tasks} dev tasks, reference purple thinking {args.think_s:g} s per call, "
                    f"{count} workers vs {workers[0]}", ratio="value/baseline",
                    extra={"wall_s": round(wall, 2), "baseline_wall_s": round(base_wall, 2)}))
    timings = measured[workers[0]][2]
    green_ms = [1000 * g / n for g, _, n in timings if n]
    gateway_ms = [1000 * w / n for _, w, n in timings if n]
    value, baseline = statistics.median(green_ms), statistics.median(gateway_ms)
    emit(figure("a2a_green_time_per_step_ms", "ms", value, baseline, green_ms, gateway_ms,
                "per tool call: the bridge's own time (parse the reply, the gateway call, render the result) vs "
                "the MCP round trip of the same calls (what an MCP Blue pays)", ratio="value/baseline",
                target="<= 1.2 (within 20 %)", meets_target=value / baseline <= 1.2,
                extra={"battles": len(timings), "tool_calls": sum(n for _, _, n in timings)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
