"""The small holes, each against the real thing where it can be:

1. SIGHUP to `appworld-green battle` (its own slot, the built-in reference Blue): result.json is
   written, it exits 130 like after Ctrl-C, and nothing listens on the gateway's, servers' or Blue's port;
2. SIGKILL to `appworld-green eval` while its slot runs: the slot reaper ends the servers, gateway and
   Blue (nothing is orphaned); a `--resume` whose slot is busy says so instead of moving to another slot;
3. a full disk (a 256 kB tmpfs mounted as root) under a run: `report` exits 3 naming the file, and
   says what was judged and is intact; nothing half-written;
4. the LLM Green's tools are bound to the model's own battle (an earlier battle's id, an invented
   one, a non-string id are answered with JSON errors, never an exception).
"""

from __future__ import annotations

import asyncio
import importlib.util
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from batch_fakes import FakeBattles, FakeSlots
from faults_support import wait_until
from green_agent.engine.config import BattleChoices
from green_agent.agentbeats import registry
from green_agent.agentbeats.battle_start import parse_battle_start
from green_agent.batch.evaluate import EvalRequest, run_eval
from green_agent.batch.live import choose_slots
from green_agent.cli import main
from kernel.errors import DiskFullError, SlotBusyError
from kernel.ports import free_port, port_is_free
from kernel.settings import SCENARIO_DIR, Settings
from workers import free_slot

pytest_plugins = ["faults_support"]
CLI = str(Path(sys.executable).parent / "appworld-green")


def _cli(args: list[str], settings: Settings, out: Path, **extra: str) -> subprocess.Popen:
    env = {**os.environ, "APPWORLD_ROOT": str(settings.appworld_root), "RUNS_DIR": str(settings.runs_dir),
           "AGENTBEATS_MCP_LOG_PATH": str(out / "calls.jsonl"), "DEFAULT_SPLIT": settings.default_split, **extra}
    env.pop("OPENAI_API_KEY", None)
    out.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([CLI, "--env-file", "/dev/null", *args], env=env, stdout=open(out / "stdout.txt", "wb"),
                            stderr=open(out / "stderr.txt", "wb"))


def _tree(pid: int) -> dict[int, str]:
    try:
        return {c.pid: " ".join(c.cmdline())[:160] for c in psutil.Process(pid).children(recursive=True)}
    except psutil.Error:
        return {}


def _alive(pids: dict[int, str]) -> list[str]:
    alive = []
    for pid, cmd in pids.items():
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(f"{pid}: {cmd}")
        except psutil.NoSuchProcess:
            continue
    return alive


# -- 1. SIGHUP ----------------------------------------------------------------------------------

@pytest.mark.e2e
def test_sighup_to_battle_writes_result_and_leaves_no_process(shared_env: Settings, shared_task: str,
                                                              tmp_path: Path) -> None:
    spec = free_slot()
    run = tmp_path / "run"
    proc = _cli(["battle", "--task-id", shared_task, "--blue", "reference", "--predictor", "none", "--slot",
                 str(spec.index), "--out", str(run), "--deadline", "120"], shared_env, tmp_path,
                REFERENCE_BLUE_THINK_S="8")
    seen: dict[int, str] = {}
    try:
        def blue_working() -> bool:  # the Blue has the task (it thinks 8 s before its first call)
            seen.update(_tree(proc.pid))
            return any("replaying the reference solution" in p.read_text(errors="replace")
                       for p in (run / "logs").glob("blue-reference-*.log"))
        wait_until(blue_working, 120, "the Blue to get the task")
        seen.update(_tree(proc.pid))
        proc.send_signal(signal.SIGHUP)
        code = proc.wait(timeout=60)
        assert code == 130, (tmp_path / "stderr.txt").read_text()[-1500:]
        record = json.loads((run / "result.json").read_text())
        assert record["error"]["type"] == "Interrupted"
        wait_until(lambda: not _alive({p: c for p, c in seen.items() if "slot_reaper" not in c}), 10,
                   f"the battle's children to end: {_alive(seen)}")
        ports = (spec.env_port, spec.apis_port, spec.gateway_port)
        wait_until(lambda: all(port_is_free(p) for p in ports), 10, "the slot's ports to be free")
    finally:
        if proc.poll() is None:
            proc.kill()
        for line in _alive(seen):  # what a failed run left (the old code's orphans)
            os.kill(int(line.split(":")[0]), signal.SIGKILL)


# -- 2. a killed eval leaves nothing; a busy slot on --resume is named ------------------------------

@pytest.mark.e2e
def test_sigkill_to_eval_leaves_no_slot_process(shared_env: Settings, shared_task: str, tmp_path: Path) -> None:
    ports = [free_port() for _ in range(3)]
    proc = _cli(["eval", "--task-ids", shared_task, "--blue", "reference", "--predictor", "none", "--out",
                 str(tmp_path / "eval"), "--slot-ports", ":".join(map(str, ports)), "--deadline", "60",
                 "--max-infra-retries", "0"], shared_env, tmp_path)
    seen: dict[int, str] = {}
    try:
        def slot_up() -> bool:
            seen.update(_tree(proc.pid))
            return all(not port_is_free(p) for p in ports)
        wait_until(slot_up, 120, "the eval's slot to listen")
        seen.update(_tree(proc.pid))
        proc.kill()
        proc.wait(timeout=10)
        wait_until(lambda: not _alive({p: c for p, c in seen.items() if "slot_reaper" not in c}), 20,
                   f"the slot's processes to be reaped: {_alive(seen)}")
        wait_until(lambda: all(port_is_free(p) for p in ports), 10, "the slot's ports to be free")
    finally:
        for line in _alive(seen):
            os.kill(int(line.split(":")[0]), signal.SIGKILL)


def test_a_resume_whose_slot_is_busy_says_so() -> None:
    spec = free_slot()
    holder = socket.socket()
    holder.bind(("127.0.0.1", spec.apis_port))
    holder.listen()
    try:
        with pytest.raises(SlotBusyError, match=rf"slot {spec.index} is busy .*{spec.apis_port}.*pid {os.getpid()}"):
            choose_slots(1, spec.index, exact=True, wait_s=0.3)
    finally:
        holder.close()
    assert choose_slots(1, spec.index, exact=True, wait_s=0.3)[0].index == spec.index


# -- 3. a full disk -----------------------------------------------------------------------------

@pytest.fixture()
def tiny_disk(tmp_path: Path):  # noqa: ANN201
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode()[-200:]}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _fill(directory: Path) -> None:
    with open(directory / "filler", "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError:
            pass


def test_a_full_disk_exits_3_naming_the_path_and_what_is_intact(tiny_disk: Path, tmp_path: Path, world_copy,
                                                                 mini_tasks: tuple[str, str],
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings(appworld_root=world_copy(splits={"mini": mini_tasks}), runs_dir=tmp_path / "runs")
    out = tiny_disk / "run"
    run_eval(EvalRequest(split="mini", choices=BattleChoices(blue="fake", predictor="ground_truth"), out=out, workers=1), settings,
             progress_stream=io.StringIO(), factory=FakeSlots(), battle=FakeBattles())
    before = {p: p.read_bytes() for p in out.rglob("result.json")}
    (out / "results.json").unlink()
    (out / "report.html").unlink()
    _fill(tiny_disk)
    capsys.readouterr()
    assert main(["report", str(out)]) == 3
    err = capsys.readouterr().err
    assert "no space left" in err and (str(out / "results.json") in err or str(out / "report.html") in err), err
    assert "Intact: 2 judged battle(s) of 2" in err and "Traceback" not in err, err
    assert {p: p.read_bytes() for p in out.rglob("result.json")} == before
    assert not list(out.glob(".*.tmp"))
    (tiny_disk / "filler").unlink()
    assert main(["report", str(out)]) == 0  # with space again, the run's outputs come back from disk


def test_the_atomic_seam_turns_enospc_into_disk_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kernel import atomic

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", full)
    with pytest.raises(DiskFullError, match="no space left on the device writing .*x.json") as caught:
        atomic.atomic_write_text(tmp_path / "x.json", "{}")
    assert caught.value.exit_code == 3 and not list(tmp_path.iterdir())


def test_the_event_log_on_a_full_disk_is_disk_full_naming_it(tiny_disk: Path) -> None:
    """events.jsonl is appended to for every battle: a full disk mid-run names it, not a raw OSError."""
    from green_agent.batch.checkpoint import BattleKey, append_event

    _fill(tiny_disk)
    with pytest.raises(DiskFullError, match="no space left on the device writing .*events.jsonl"):
        for trial in range(1, 200):  # one line is small: fill the last blocks
            append_event(tiny_disk, "finish", BattleKey("f0a1c01_1", trial), battle_id="b" * 200)


# -- 4. the LLM Green's tools are bound to its own battle --------------------------------------------

def _start(battle_id: str) -> str:
    return json.dumps({"type": "battle_start", "battle_id": battle_id,
                       "green_battle_context": {"battle_id": battle_id, "backend_url": "http://127.0.0.1:9",
                                                "agent_name": "AppWorld Green", "task_config": ""},
                       "red_battle_contexts": {}, "opponent_infos": [{"name": "blue_agent",
                                                                      "agent_url": "http://127.0.0.1:9/"}]})


def test_the_tools_are_bound_to_the_models_own_battle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry.clear()
    (tmp_path / "scenario.toml").write_text(
        '[appworld]\ntask = "7c1a0e2_1"\npredictor = "none"\ndeadline_s = 5\nenv_url = "http://127.0.0.1:9"\n'
        'apis_url = "http://127.0.0.1:9"\ngateway_url = ""\nruns_dir = "runs"\ngreen_mode = "llm"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RUNS_DIR", str(tmp_path / "runs"))
    spec = importlib.util.spec_from_file_location("orchestration_tools", SCENARIO_DIR / "green_agent" / "orchestration_tools.py")
    tools = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tools)
    try:
        registry.open_session(parse_battle_start(_start("earlier")))
        registry.open_session(parse_battle_start(_start("current")))
        for call in (tools.setup_appworld_environment("earlier"), tools.get_complete_task_metrics("earlier"),
                     tools.report_battle_result("invented")):
            answer = json.loads(asyncio.run(call))
            assert answer["ok"] is False and "not this Green's battle (current)" in answer["error"], answer
        for bad in (123, None, {"battle_id": "current"}, ["current"]):
            for tool in (tools.get_complete_task_metrics, tools.save_appworld_state, tools.check_task_completed):
                answer = json.loads(asyncio.run(tool(bad)))
                assert answer["ok"] is False and "battle_id" in answer["error"], (tool.__name__, bad, answer)
    finally:
        registry.clear()


# -- 5. a reaper ends only what its own process started ------------------------------------------------

def test_a_killed_commands_reaper_spares_processes_its_parent_tagged(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A command run under a parent that carries a reaper tag (a test process, a driver) gets a tag of its own:
    SIGKILLing it must not end the parent's other processes (a shared slot, a Ray cluster holder)."""
    from green_agent.runtime.reaper import GRACE_S, POLL_S, TAG_ENV, reaped_if_killed

    monkeypatch.setenv(TAG_ENV, "the-parents-tag")
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    command = subprocess.Popen([sys.executable, "-c", (
        "import time, os\n"
        "from green_agent.runtime.reaper import reaped_if_killed\n"
        "with reaped_if_killed():\n"
        "    print(os.environ['APPWORLD_GREEN_SLOT_TAG'], flush=True)\n"
        "    time.sleep(60)\n")], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        own_tag = command.stdout.readline().strip()
        time.sleep(3)  # the reaper is up and watching (a real command runs far longer than its start-up)
        os.kill(command.pid, signal.SIGKILL)
        command.wait(timeout=10)
        time.sleep(POLL_S + GRACE_S + 2)  # the reaper has seen its process die and reaped what carries its tag
        assert bystander.poll() is None, "the parent's process was ended by another command's reaper"
        assert own_tag and own_tag != "the-parents-tag"
    finally:
        bystander.kill()
        bystander.wait(timeout=10)
        command.stdout.close()
    with reaped_if_killed():  # in-process use leaves the environment as it found it
        assert os.environ[TAG_ENV] not in ("the-parents-tag", "")
    assert os.environ[TAG_ENV] == "the-parents-tag"
    monkeypatch.delenv(TAG_ENV)
    with reaped_if_killed():
        pass
    assert TAG_ENV not in os.environ
