"""`appworld-green eval` end to end: real AppWorld servers, the real gateway, the shipped reference Blue.

The CLI runs as a subprocess on free ports (`--slot-ports`), on the built world (`appworld_root`).
Kept small for the shared 2-core machine: a few tasks, the ground-truth scope (so the reference
Blue's calls are all in scope).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import psutil
import pytest

from green_agent.batch.checkpoint import read_events
from green_agent.models.eval_run import EvalResults
from green_agent.engine.sequencer import STEPS
from kernel.ports import free_port, port_is_free
from kernel.world_data import WorldData

pytestmark = pytest.mark.e2e
CLI = str(Path(sys.executable).parent / "appworld-green")


def first_tasks(root: Path, count: int) -> list[str]:
    return WorldData(root).split("dev")[:count]


def slot_ports(workers: int) -> tuple[str, list[int]]:
    ports = [free_port() for _ in range(3 * workers)]
    return ",".join(":".join(map(str, ports[i:i + 3])) for i in range(0, len(ports), 3)), ports


def eval_argv(tasks: list[str], out: Path, ports: str, workers: int, *extra: str) -> list[str]:
    return [CLI, "eval", "--task-ids", ",".join(tasks), "--blue", "reference", "--predictor", "ground_truth",
            "--workers", str(workers), "--out", str(out), "--slot-ports", ports, "--deadline", "120", *extra]


def cli_env(root: Path, tmp: Path) -> dict[str, str]:
    return {**os.environ, "APPWORLD_ROOT": str(root), "RUNS_DIR": str(tmp / "runs"), "OPENAI_API_KEY": ""}


def assert_nothing_left(ports: list[int]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not all(port_is_free(p) for p in ports):
        time.sleep(0.5)
    assert all(port_is_free(p) for p in ports), f"still listening: {[p for p in ports if not port_is_free(p)]}"
    # a port as a number of its own: not the digits of a longer one (a run folder's 20261206T...)
    marks = re.compile("|".join(rf"(?<!\d){p}(?!\d)" for p in ports))
    leftovers = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        if any(marks.search(arg) for arg in cmdline) and proc.pid != os.getpid():
            leftovers.append((proc.pid, " ".join(cmdline)[:120]))
    assert not leftovers, f"processes left behind: {leftovers}"


def judged(out: Path) -> dict[str, str]:
    """result.json path -> battle id, judged results only."""
    found = {}
    for path in (out / "tasks").rglob("result.json"):
        record = json.loads(path.read_text())
        if record["status"] != "infra_error":
            found[str(path.relative_to(out))] = record["battle_id"]
    return found


def in_flight_dispatched(out: Path) -> bool:
    """A battle after the first judged one has started and is past its dispatch (Blue is working)."""
    events = read_events(out)
    starts = [e for e in events if e["event"] == "start"]
    finishes = [e for e in events if e["event"] == "finish"]
    if len(starts) <= len(finishes) or not finishes:
        return False
    current = starts[-1]
    started = time.time() - datetime.fromisoformat(current["time"]).timestamp()
    return started > 2.0


def test_interrupted_run_resumes_without_rerunning_finished_battles(tmp_path: Path, appworld_root: Path) -> None:
    root = appworld_root
    tasks = first_tasks(root, 2)
    out = tmp_path / "run"
    ports_arg, ports = slot_ports(1)
    argv = eval_argv(tasks, out, ports_arg, 1, "--trials", "2")
    env = {**cli_env(root, tmp_path), "REFERENCE_BLUE_THINK_S": "0.5"}  # battles of a few seconds: Ctrl-C lands in one
    with open(tmp_path / "first.log", "wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + 300
            while not (judged(out) and in_flight_dispatched(out)) and proc.poll() is None \
                    and time.monotonic() < deadline:
                time.sleep(0.05)
            assert judged(out), f"no battle finished: {(tmp_path / 'first.log').read_text()[-3000:]}"
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert code == 130, (tmp_path / "first.log").read_text()[-3000:]
    assert_nothing_left(ports)
    first = judged(out)
    assert 1 <= len(first) < 2 * len(tasks), "the run was not interrupted mid-way"
    interim = EvalResults.model_validate_json((out / "results.json").read_text())
    assert interim.status == "interrupted" and interim.aggregates.judged == len(first)
    cut = [json.loads(p.read_text()) for p in (out / "tasks").rglob("result.json") if "attempts" not in p.parts]
    cut = [r for r in cut if r["status"] == "infra_error"]
    assert len(cut) == 1, "the battle in flight left no record"
    assert cut[0]["error"]["type"] == "Interrupted" and cut[0]["error"]["step"] in STEPS
    assert "gateway died" not in cut[0]["reason"]
    starts_before = len([e for e in read_events(out) if e["event"] == "start"])

    second = subprocess.run(argv + ["--resume"], capture_output=True, text=True, env=env, timeout=600)
    assert second.returncode == 0, second.stderr[-3000:]
    assert_nothing_left(ports)
    final = judged(out)
    assert len(final) == 2 * len(tasks)
    assert {k: final[k] for k in first} == first, "a finished battle was run again"
    new_starts = [e for e in read_events(out) if e["event"] == "start"][starts_before:]
    rerun = {f"tasks/{e['task_id']}/trial-{e['trial']}/result.json" for e in new_starts}
    assert not rerun & set(first)
    results = EvalResults.model_validate_json((out / "results.json").read_text())
    agg = results.aggregates
    assert results.status == "completed" and (agg.judged, agg.infra_errors, agg.tgc, agg.sgc) == (4, 0, 100.0, 100.0)
    assert agg.pass_hat_k == {"1": 1.0, "2": 1.0}
    rerun_dir = Path(cut[0]["run_dir"])
    kept = json.loads((rerun_dir / "attempts" / cut[0]["battle_id"] / "result.json").read_text())
    assert kept["error"]["type"] == "Interrupted"  # the interrupted attempt's record stays beside the re-run
    again = json.loads((rerun_dir / "result.json").read_text())
    assert again["battle_id"] != cut[0]["battle_id"] and again["battle_id"].endswith("-a2")
    calls = [json.loads(line) for line in (rerun_dir / "mcp_calls.jsonl").read_text().splitlines()]
    assert {c["battle_id"] for c in calls} == {again["battle_id"]}
    clean = [r for r in results.rows if r.task_id == again["task_id"] and r.battle_id != again["battle_id"]]
    assert again["trajectory"]["total_calls"] == len(calls) == clean[0].calls  # only its own calls, as a clean run
    regenerated = subprocess.run([CLI, "report", str(out), "--json"], capture_output=True, text=True, env=env,
                                 timeout=120)
    assert regenerated.returncode == 0
    assert EvalResults.model_validate_json(regenerated.stdout).aggregates == agg


def test_reference_blue_on_two_workers_passes_every_task(tmp_path: Path, appworld_root: Path) -> None:
    root = appworld_root
    tasks = first_tasks(root, 4)
    out = tmp_path / "run"
    ports_arg, ports = slot_ports(2)
    proc = subprocess.run(eval_argv(tasks, out, ports_arg, 2), capture_output=True, text=True,
                          env=cli_env(root, tmp_path), timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "TGC 100.0" in proc.stdout and "battles | passed" in proc.stderr  # summary and progress line
    assert_nothing_left(ports)
    results = EvalResults.model_validate_json((out / "results.json").read_text())
    assert [r.task_id for r in results.rows] == tasks
    assert results.aggregates.tgc == 100.0 and results.aggregates.sgc == 100.0
    assert all(r.calls and r.calls > 0 and r.api_f1 is not None for r in results.rows)
    slots_used = {e["slot"] for e in read_events(out) if e["event"] == "start"}
    assert slots_used == ({0, 1} if len(tasks) > 1 else {0})
    html = (out / "report.html").read_text()
    assert all(t in html for t in tasks)
    # `analyze` reads one battle of this run (its archived calls), not a slot's log of two battles nor another run's
    row = results.rows[1]
    done = subprocess.run([CLI, "analyze", str(out), "--task-id", row.task_id], capture_output=True, text=True,
                          env=cli_env(root, tmp_path), timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    metrics = json.loads(done.stdout)
    assert (metrics["battle_id"], metrics["total_calls"]) == (row.battle_id, row.calls)
    done = subprocess.run([CLI, "analyze", str(out)], capture_output=True, text=True, env=cli_env(root, tmp_path),
                          timeout=120)
    assert done.returncode == 2 and "name one with --task-id" in done.stderr


def test_a_second_eval_into_a_run_being_written_exits_2_naming_the_first(tmp_path: Path, appworld_root: Path) -> None:
    tasks = first_tasks(appworld_root, 1)
    out = tmp_path / "run"
    ports_arg, ports = slot_ports(1)
    argv = eval_argv(tasks, out, ports_arg, 1)
    env = cli_env(appworld_root, tmp_path)
    with open(tmp_path / "first.log", "wb") as log:
        first = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + 120
            while not (out / "run.json").is_file() and first.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert first.poll() is None, (tmp_path / "first.log").read_text()[-3000:]
            second = subprocess.run(argv + ["--resume"], capture_output=True, text=True, env=env, timeout=120)
            first.send_signal(signal.SIGINT)
            first.wait(timeout=120)
        finally:
            if first.poll() is None:
                first.kill()
    assert second.returncode == 2, second.stderr[-3000:]
    assert f"pid {first.pid} (eval), started at" in second.stderr and "Traceback" not in second.stderr
    assert_nothing_left(ports)
    ids = [e["battle_id"] for e in read_events(out) if e["event"] == "start"]
    assert len(ids) == len(set(ids)) <= 1  # only the first writer ever started a battle
