"""`appworld-green eval --executor ray` end to end, on a 2-node Ray cluster in a private network namespace.

Real AppWorld servers, the real gateway and the shipped reference Blue on every node; the CLI runs
beside the cluster (`tests/ray_support.py`: one cluster for the module, in a namespace whose only
interface is `lo`; the fixture fails a test that leaves any process behind in it). Compared with the
local executor run in the same namespace.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import signal
import subprocess
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pytest

from green_agent.batch.checkpoint import read_events
from green_agent.models.eval_run import EvalResults
from kernel.world_data import WorldData
from faults_support import files_text
from ray_support import CLI, NetnsCluster, netns_cluster

TOKEN_PATH = re.compile(r"/b/(?!\[REDACTED\])([A-Za-z0-9_-]{8,})")
"""A battle's token URL path, unless redacted (as tests/test_hostile_runfiles.py looks for it)."""

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]
RUN_TIMEOUT_S = 600
COMPARED_TASKS = 8
"""Dev tasks run locally and on Ray (three scenarios, enough for both nodes to run several battles each)."""
SERVER_MARKS = ("world/serve.py", "appworld_forkserver", "blue_agent.", " mcp --remote-apis-url")


@pytest.fixture(scope="module")
def cluster(appworld_root: Path) -> NetnsCluster:
    # The nodes' own APPWORLD_ROOT: the built world (a driver pointed elsewhere is compared with it).
    with netns_cluster(nodes=2, slots_per_node=1, env={**os.environ, "APPWORLD_ROOT": str(appworld_root)}) as running:
        yield running


def cli_env(root: Path, tmp: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "APPWORLD_ROOT": str(root), "RUNS_DIR": str(tmp / "runs"), "OPENAI_API_KEY": "", **extra}


def eval_argv(out: Path, executor: str, cluster: NetnsCluster, *which: str, workers: int = 2) -> list[str]:
    argv = [CLI, "eval", *(which or ("--split", "dev")), "--blue", "reference", "--workers", str(workers),
            "--out", str(out), "--executor", executor]
    return argv + (["--ray-address", cluster.address] if executor == "ray" else [])


def results(out: Path) -> EvalResults:
    return EvalResults.model_validate_json((out / "results.json").read_text())


def verdicts(run: EvalResults) -> dict[tuple[str, int], tuple]:
    return {(r.task_id, r.trial): (r.outcome, r.passed, r.tests_passed, r.tests_total, r.calls, r.api_f1)
            for r in run.rows}


def judged(out: Path) -> dict[str, str]:
    """result.json path -> battle id, judged results only (earlier attempts excluded)."""
    found = {}
    for path in (out / "tasks").rglob("result.json"):
        record = json.loads(path.read_text())
        if "attempts" not in path.relative_to(out).parts and record["status"] != "infra_error":
            found[str(path.relative_to(out))] = record["battle_id"]
    return found


def battle_in_flight(out: Path, after_s: float = 1.5) -> bool:
    """A battle has been running for `after_s` and at least one other has finished."""
    events = read_events(out)
    starts = [e for e in events if e["event"] == "start"]
    finishes = [e for e in events if e["event"] == "finish"]
    if not finishes or len(starts) <= len(finishes):
        return False
    return time.time() - datetime.fromisoformat(starts[-1]["time"]).timestamp() > after_s


def wait_for(predicate, proc: subprocess.Popen, timeout_s: float = 300) -> None:
    """Return once `predicate` held while the run ran. (Asking it again after the loop failed a run whose
    battle in flight finished in between: "in flight" does not stay true.)"""
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None and time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("the run never reached the state the test waits for")


def servers_left(cluster: NetnsCluster, wait_s: float = 30) -> list[str]:
    """Slot processes (AppWorld servers, gateways, Blues) still running in the namespace after `wait_s`."""
    deadline = time.monotonic() + wait_s
    while True:
        left = []
        for proc in cluster.processes():
            try:
                line = " ".join(proc.cmdline())
            except Exception:
                continue
            if any(mark in line for mark in SERVER_MARKS):
                left.append(f"{proc.pid} {line[:100]}")
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(1)


def test_dev_tasks_on_two_nodes_give_the_local_verdicts(cluster: NetnsCluster, tmp_path: Path,
                                                         appworld_root: Path) -> None:
    env = cli_env(appworld_root, tmp_path)
    which = ("--task-ids", ",".join(WorldData(appworld_root).split("dev")[:COMPARED_TASKS]))
    local = cluster.run(eval_argv(tmp_path / "local", "local", cluster, *which), capture_output=True, text=True,
                        env=env, timeout=RUN_TIMEOUT_S)
    assert local.returncode == 0, local.stderr[-3000:]
    on_ray = cluster.run(eval_argv(tmp_path / "ray", "ray", cluster, *which), capture_output=True, text=True, env=env,
                         timeout=RUN_TIMEOUT_S)
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]
    local_run, ray_run = results(tmp_path / "local"), results(tmp_path / "ray")
    assert ray_run.aggregates.tgc == 100.0 and ray_run.aggregates.judged == COMPARED_TASKS
    assert verdicts(ray_run) == verdicts(local_run)
    assert ray_run.manifest.config.executor == "ray" and local_run.manifest.config.executor == "local"
    assert len({n.node_id for n in ray_run.manifest.nodes}) == 2, "both nodes ran battles"
    for row in ray_run.rows:  # the driver holds the same evidence as a local run
        here = tmp_path / "ray" / Path(row.result_path).parent
        there = tmp_path / "local" / Path(row.result_path).parent
        assert sorted(p.name for p in here.iterdir()) == sorted(p.name for p in there.iterdir())
        record = json.loads((here / "result.json").read_text())
        assert record["run_dir"] == str(here)
        calls = (here / "mcp_calls.jsonl").read_text().splitlines()
        assert {json.loads(c)["battle_id"] for c in calls} == {row.battle_id}
    shipped = [json.loads(line) for p in (tmp_path / "ray" / "logs").glob("mcp-calls-ray-slot*.jsonl")
               for line in p.read_text().splitlines()]
    assert len(shipped) == ray_run.aggregates.total_calls
    for name in ("report.html", "agentbeats_results.json"):
        assert (tmp_path / "ray" / name).is_file()
    leaked = {where: TOKEN_PATH.findall(text) for where, text in files_text(tmp_path / "ray").items()}
    assert {where: found for where, found in leaked.items() if found} == {}  # no battle token in any run file
    assert not servers_left(cluster, wait_s=5)


def test_killing_a_slot_actor_loses_no_battle_and_runs_none_twice(cluster: NetnsCluster, tmp_path: Path,
                                                                  appworld_root: Path) -> None:
    tasks = WorldData(appworld_root).split("dev")[:6]
    out = tmp_path / "run"
    env = cli_env(appworld_root, tmp_path, REFERENCE_BLUE_THINK_S="0.4")  # battles of a few seconds
    scratch_before = set(Path(tempfile.gettempdir()).glob("appworld-green-ray-slot*"))
    with open(tmp_path / "eval.log", "wb") as log:
        proc = cluster.popen(eval_argv(out, "ray", cluster, "--task-ids", ",".join(tasks)), stdout=log,
                             stderr=subprocess.STDOUT, env=env)
        try:
            wait_for(lambda: battle_in_flight(out) and len(cluster.slot_actors()) == 2, proc)
            victim = cluster.slot_actors()[0]
            victim.send_signal(signal.SIGKILL)
            code = proc.wait(timeout=RUN_TIMEOUT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert code == 0, (tmp_path / "eval.log").read_text()[-3000:]
    run = results(out)
    assert run.status == "completed" and run.aggregates.judged == len(tasks) and run.aggregates.tgc == 100.0
    events = read_events(out)
    judged_finishes = [(e["task_id"], e["trial"]) for e in events
                       if e["event"] == "finish" and e["status"] != "infra_error"]
    assert sorted(judged_finishes) == sorted((t, 1) for t in tasks), "a battle was lost or judged twice"
    died = [e for e in events if e["event"] == "finish" and e["status"] == "infra_error"]
    assert died, "the killed actor's battle left no infra-error attempt"
    for event in died:  # its record is kept beside the re-run, as an unscored infra error
        kept = out / "tasks" / event["task_id"] / "attempts" / event["battle_id"] / "result.json"
        assert json.loads(kept.read_text())["error"]["type"] == "SlotActorDiedError"
    assert len(judged(out)) == len(tasks)
    assert not servers_left(cluster), "the killed actor's servers were not reaped"
    deadline = time.monotonic() + 15  # the reaper also removes the killed actor's scratch directory
    while (left := set(Path(tempfile.gettempdir()).glob("appworld-green-ray-slot*")) - scratch_before) \
            and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left, f"scratch directories left behind: {sorted(map(str, left))}"


def test_resume_after_an_interrupt_works_across_executors(cluster: NetnsCluster, tmp_path: Path,
                                                          appworld_root: Path) -> None:
    tasks = WorldData(appworld_root).split("dev")[:4]
    out = tmp_path / "run"
    env = cli_env(appworld_root, tmp_path, REFERENCE_BLUE_THINK_S="0.4")
    which = ("--task-ids", ",".join(tasks))
    with open(tmp_path / "first.log", "wb") as log:
        proc = cluster.popen(eval_argv(out, "local", cluster, *which, workers=1), stdout=log,
                             stderr=subprocess.STDOUT, env=env)
        try:
            wait_for(lambda: bool(judged(out)) and battle_in_flight(out), proc)
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert code == 130, (tmp_path / "first.log").read_text()[-3000:]
    first = judged(out)
    assert 1 <= len(first) < len(tasks)
    second = cluster.run(eval_argv(out, "ray", cluster, *which) + ["--resume"], capture_output=True, text=True,
                         env=env, timeout=RUN_TIMEOUT_S)
    assert second.returncode == 0, second.stderr[-3000:]
    final = judged(out)
    assert len(final) == len(tasks) and {k: final[k] for k in first} == first, "a judged battle was run again"
    run = results(out)
    assert run.status == "completed" and run.aggregates.tgc == 100.0
    assert run.manifest.config.executor == "ray"
    assert {n.executor for n in run.manifest.nodes} == {"local", "ray"}
    assert not servers_left(cluster, wait_s=5)


def test_a_node_whose_world_differs_is_refused_by_name(cluster: NetnsCluster, tmp_path: Path,
                                                       appworld_root: Path) -> None:
    driver_root = tmp_path / "world"
    shutil.copytree(appworld_root / "data", driver_root / "data")
    task = WorldData(appworld_root).split("dev")[0]
    spec = driver_root / "data" / "tasks" / task / "specs.json"
    spec.write_text(spec.read_text().replace("}", ' }', 1))  # one byte more: another world
    done = cluster.run(eval_argv(tmp_path / "run", "ray", cluster, "--task-ids", task),
                       capture_output=True, text=True, env=cli_env(driver_root, tmp_path), timeout=RUN_TIMEOUT_S)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "is not the driver's" in done.stderr and "ray node" in done.stderr and str(appworld_root) in done.stderr
    assert not servers_left(cluster, wait_s=5)


def test_a_blue_given_as_a_url_is_reached_from_the_slot_actors(cluster: NetnsCluster, tmp_path: Path,
                                                                appworld_root: Path) -> None:
    from kernel.ports import free_port  # a port of the test's namespace is as free as any: both are empty

    port = free_port()
    env = cli_env(appworld_root, tmp_path)
    with open(tmp_path / "blue.log", "wb") as log:
        blue = cluster.popen([str(Path(CLI).parent / "python"), "-m", "blue_agent.reference", "--port", str(port)],
                             stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            tasks = WorldData(appworld_root).split("dev")[:2]
            argv = [CLI, "eval", "--task-ids", ",".join(tasks), "--blue", f"http://127.0.0.1:{port}", "--workers", "1",
                    "--out", str(tmp_path / "run"), "--executor", "ray", "--ray-address", cluster.address]
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # the Blue's card answers once it is up
                probe = cluster.run(["curl", "-sf", f"http://127.0.0.1:{port}/.well-known/agent.json"],
                                    capture_output=True, timeout=10)
                if probe.returncode == 0:
                    break
                time.sleep(0.5)
            done = cluster.run(argv, capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT_S)
        finally:
            blue.terminate()
            blue.wait(timeout=30)
    assert done.returncode == 0, done.stderr[-3000:]
    run = results(tmp_path / "run")
    assert run.aggregates.tgc == 100.0 and run.manifest.config.blue == f"http://127.0.0.1:{port}"
