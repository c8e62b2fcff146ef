"""bench_capacity.py and its sampler: processes named by slot and role, PSS read, peak and per-role figures.

The classification test starts real processes that show what the real ones show (a `serve.py` listening
on a slot's port, one not listening: the fork server; an `mcp --port P` with a child: a gateway and its
REPL; a `blue_agent` argv: the Blue), so `classify` reads real /proc entries. The quick run is the real
bench: a 1-slot and a 2-slot eval in tools mode, and it must leave no slot process behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from kernel.ports import free_port

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import bench_capacity  # noqa: E402
from capacity_probe import Sample, SlotPorts, classify, pss_kib  # noqa: E402

SLEEP = "import time; time.sleep(60)"
LISTEN = ("import socket, sys, time; s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); "
          "time.sleep(60)")
SPAWN_CHILD = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {SLEEP!r}]); time.sleep(60)"


def test_pss_of_a_live_and_a_gone_process() -> None:
    assert pss_kib(os.getpid()) > 1000  # a Python interpreter holds more than 1 MiB of its own
    done = subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert done.returncode == 0
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert pss_kib(gone.pid) == 0


def _wait_listening(pid: int, port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if any(c.laddr.port == port for c in psutil.Process(pid).net_connections(kind="tcp")):
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} never listened on {port}")


def test_classify_names_each_process_by_slot_and_role(tmp_path: Path) -> None:
    serve = tmp_path / "serve.py"
    serve.write_text("import sys\nexec(sys.argv[1]) if len(sys.argv) > 1 else __import__('time').sleep(60)\n")
    slot = SlotPorts(env=free_port(), apis=free_port(), gateway=free_port())
    procs = [subprocess.Popen([sys.executable, str(serve)]),  # the fork server: serve.py, listening on nothing
             subprocess.Popen([sys.executable, str(serve), LISTEN.replace("int(sys.argv[1])", str(slot.apis))]),
             subprocess.Popen([sys.executable, "-c", SPAWN_CHILD, "mcp", "--port", str(slot.gateway)]),
             subprocess.Popen([sys.executable, "-c", SLEEP, "blue_agent.reference"])]
    try:
        _wait_listening(procs[1].pid, slot.apis)
        deadline = time.monotonic() + 20
        while not psutil.Process(procs[2].pid).children() and time.monotonic() < deadline:
            time.sleep(0.05)
        repl = psutil.Process(procs[2].pid).children()[0].pid
        names = classify(os.getpid(), [slot])
        assert names[procs[0].pid] == ("machine", "forkserver")
        assert names[procs[1].pid] == ("slot0", "apis")
        assert names[procs[2].pid] == ("slot0", "gateway")
        assert names[repl] == ("slot0", "repl")
        assert names[procs[3].pid] == ("outside", "blue")
        assert names[os.getpid()] == ("outside", "eval")
        assert classify(procs[0].pid, [slot]) == {procs[0].pid: ("outside", "eval")}  # no children, no slot
    finally:
        for proc in procs:
            for child in psutil.Process(proc.pid).children(recursive=True):
                child.kill()
            proc.kill()
            proc.wait()


def _sample(pss: dict[tuple[str, str], int]) -> Sample:
    return Sample(0.0, pss, {key: 1 for key in pss})


def test_peak_takes_the_largest_sample_with_every_slot_up() -> None:
    partial = _sample({("slot0", "gateway"): 900_000, ("machine", "forkserver"): 100_000})
    full_small = _sample({("slot0", "gateway"): 80_000, ("slot1", "gateway"): 80_000, ("machine", "forkserver"): 1})
    full_big = _sample({("slot0", "gateway"): 90_000, ("slot1", "gateway"): 90_000, ("slot1", "repl"): 10_000,
                        ("outside", "blue"): 5_000_000})
    top = bench_capacity.peak([partial, full_small, full_big], 2)
    assert top is full_big and top.slot_total_kib() == 190_000  # the Blue is not the slots'
    roles = bench_capacity.by_role_mib(top, 2)
    assert roles["per_slot_mib"] == {"gateway": 87.9, "repl": 4.9}
    assert roles["total_mib"]["outside_blue"] == pytest.approx(4882.8, abs=0.1)


def test_bad_arguments_are_refused() -> None:
    for argv in (["--slots", "1"], ["--slots", "x"], ["--modes", "mcp"], ["--code-spares", "9"],
                 ["--code-spares", "x"], ["--code-spares", ","]):
        with pytest.raises(SystemExit) as raised:
            bench_capacity.parse_args(argv)
        assert raised.value.code == 2
    assert bench_capacity.parse_args(["--quick"]).slots == [2]
    # code mode is measured with the default spares and with none (CODE_SPARES=0); --quick only the default
    assert bench_capacity.parse_args([]).code_spares == [2, 0]
    assert bench_capacity.parse_args(["--quick"]).code_spares == [2]
    assert bench_capacity.parse_args(["--code-spares", "1"]).code_spares == [1]
    names = [bench_capacity.label(mode, spares) for mode, spares in (("tools", None), ("code", 2), ("code", 0))]
    assert names == ["tools", "code", "code_spares0"]  # the default's figure names unchanged


@pytest.mark.e2e
def test_capacity_quick_tools(appworld_root: Path) -> None:
    proc = subprocess.run([sys.executable, str(BENCH / "bench_capacity.py"), "--quick", "--modes", "tools",
                           "--root", str(appworld_root), "--interval-s", "0.5"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = {line["name"]: line for line in map(json.loads, proc.stdout.splitlines())}
    assert set(figures) == {"capacity_pss_per_slot_tools_2", "capacity_tasks_per_minute_tools_2",
                            "capacity_max_slots_holding_overhead_tools"}
    memory = figures["capacity_pss_per_slot_tools_2"]
    per_slot = memory["by_role_at_n"]["per_slot_mib"]
    assert all(per_slot[role] > 20 for role in ("apis", "environment", "gateway")), per_slot
    assert memory["baseline"] > 100 and "meets_target" in memory and memory["loadavg"]
    assert figures["capacity_tasks_per_minute_tools_2"]["value"] > 0
    leftovers = [p.pid for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"]
                 and any("bench-capacity-" in part for part in p.info["cmdline"])]
    assert not leftovers, f"bench_capacity left processes behind: {leftovers}"


def test_each_slots_first_battle_is_set_apart_as_cold(tmp_path: Path) -> None:
    from datetime import datetime, timedelta

    t0 = datetime(2026, 12, 6)
    events = [{"event": "start", "battle_id": b, "slot": s} for b, s in (("a", 0), ("b", 1), ("c", 0), ("d", 1))]
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    battles = [{"battle_id": b, "started": t0 + timedelta(seconds=i), "referee_s": r, "duration_s": 10.0 + r}
               for i, (b, r) in enumerate((("a", 9.0), ("b", 8.0), ("c", 1.0), ("d", 3.0)))]
    run = {"rows": bench_capacity._steady(battles, tmp_path)}
    assert [b["warm"] for b in run["rows"]] == [False, False, True, True]
    assert bench_capacity.warm_median(run, "referee_s") == 2.0  # the cold first battles (9 s, 8 s) left out
    single = {"rows": bench_capacity._steady(battles[:2], tmp_path)}
    assert bench_capacity.warm_median(single, "referee_s") == 8.5  # no slot played twice: every battle counts
