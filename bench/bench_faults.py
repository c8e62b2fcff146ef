"""Faults are free when off: the gateway's call path with no fault spec, this tree vs the code before faults existed.

Run: `.venv/bin/python bench/bench_faults.py [--base REV] [--calls N] [--runs K] [--quick]`.

The base tree is `git archive REV` (default: the merge base of HEAD and `main`) unpacked into a temp folder; each
measurement is a fresh subprocess with one tree on PYTHONPATH that builds a real `mcp_gateway.gateway.Gateway`
(real call log and trace writers in a temp folder, the battle set through its scope) over a stand-in forwarder that
answers every call at once (200, `{}`): so the figure is the gateway's own time per call, its worst case, with
no HTTP round trip to hide in. Each subprocess runs `--calls` calls of two tools after 200 warm-up calls and
reports the median microseconds per call. The sides alternate (ours, base, then base, ours, ...) so load drift on
the shared machine hits both.

Figures (one JSON line each, see bench/common.py):
- `faults_off_call_overhead`: median µs per call with no spec, this tree vs the base tree; ratio = value/baseline,
  target < 1.05 (within the noise of today's);
- `faults_on_call_cost`: the same with a spec that faults every call (`rate=1,kinds=error`: answered by the
  gateway, nothing forwarded) vs no spec, in this tree: what a planned fault costs the gateway beyond its
  delay (a `timeout` adds its `timeout_s`, by design).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from common import emit, figure, print_machine

REPO = Path(__file__).resolve().parent.parent
PYTHON = REPO / ".venv" / "bin" / "python"
TARGET = 1.05

WORKER = r'''
import asyncio, json, statistics, sys, tempfile, time
from pathlib import Path
from kernel.call_log import CallLogWriter
from kernel.world_data import ApiDoc
from mcp_gateway.forwarding import ApiReply
from mcp_gateway.gateway import Gateway
from mcp_gateway.models import BattleScope
from mcp_gateway.tools import tool_spec

calls, spec = int(sys.argv[1]), sys.argv[2]


class Instant:
    """Stands in for ApiForwarder.forward(spec, arguments, gate) -> ApiReply: admits, answers 200 {} at once."""

    def forward(self, tool, arguments, gate=None):
        refusal = gate.admit() if gate is not None else None
        if refusal is not None:
            return ApiReply(status_code=None, refused=refusal)
        reply = ApiReply(status_code=200, body={})
        if gate is not None:
            gate.settled(reply)
        return reply


docs = [ApiDoc(app_name="spotify", api_name=n, method="GET", path=f"/spotify/{n}", parameters=[])
        for n in ("show_song", "show_album")]
specs = {s.name: s for s in map(tool_spec, docs)}
folder = Path(tempfile.mkdtemp())
gateway = Gateway(specs, Instant(), CallLogWriter(folder / "calls.jsonl"))
scope = {"battle_id": "bench", "task_id": "t_1", "launch_url_allowed": True}
if spec != "none":
    from kernel.fault_spec import parse_fault_spec
    scope["faults"] = parse_fault_spec(spec)
gateway.scope.set_battle(BattleScope(**scope))


async def main():
    names = list(specs)
    times = []
    for i in range(200 + calls):
        started = time.perf_counter()
        await gateway.call_tool(names[i % 2], {"song_id": i})
        if i >= 200:
            times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


print(json.dumps({"us_per_call": asyncio.run(main())}))
'''


def measure(tree: Path, calls: int, spec: str) -> float:
    env = {"PYTHONPATH": str(tree / "scenarios" / "appworld"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([str(PYTHON), "-c", WORKER, str(calls), spec], env=env, capture_output=True, text=True,
                         timeout=600, check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1])["us_per_call"])


def base_tree(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "scenarios/appworld"], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="revision before faults existed (default: merge base of HEAD and main)")
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="500 calls, 2 runs")
    args = parser.parse_args()
    calls, runs = (500, 2) if args.quick else (args.calls, args.runs)
    rev = args.base or subprocess.run(["git", "-C", str(REPO), "merge-base", "HEAD", "main"], capture_output=True,
                                      text=True, check=True).stdout.strip()
    print_machine("bench_faults")
    with tempfile.TemporaryDirectory(prefix="bench-faults-") as tmp:
        base = base_tree(rev, Path(tmp))
        ours, theirs, faulted = [], [], []
        for run in range(runs):
            order = [(ours, REPO, "none"), (theirs, base, "none")]
            for side, tree, spec in (order if run % 2 == 0 else order[::-1]):
                side.append(measure(tree, calls, spec))
            faulted.append(measure(REPO, calls, "rate=1,seed=1,kinds=error"))
    off = figure("faults_off_call_overhead", "us/call", _median(ours), _median(theirs), ours, theirs,
                 f"gateway call path with no fault spec, this tree vs {rev[:12]} (before faults), stand-in forwarder "
                 f"answering at once, {calls} calls x {runs} runs", ratio="value/baseline", target=f"< {TARGET}",
                 meets_target=_median(ours) / _median(theirs) < TARGET)
    emit(off)
    emit(figure("faults_on_call_cost", "us/call", _median(faulted), _median(ours), faulted, ours,
                "every call answered by a planned fault (rate=1, kinds=error) vs no spec, this tree",
                ratio="value/baseline"))
    return 0


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if len(ordered) % 2 else (ordered[len(ordered) // 2 - 1]
                                                                + ordered[len(ordered) // 2]) / 2


if __name__ == "__main__":
    sys.exit(main())
