"""A run folder is untrusted input: each hostile folder is refused before any large read, under a 3 GB memory cap.

One real run is made once for the module (`appworld-green eval` of one dev task with the reference Blue), and
every hostile folder is a copy of it with one thing changed, the way a red team would hand one over:
- `trials` of 10**9 in run.json and results.json (a reader that builds tasks x trials keys runs out of memory);
- run.json, results.json or trace.jsonl of 2 GB (sparse files: the test stays cheap; a reader that reads the
  whole file runs out of memory before it sees the file is not JSON);
- a task id that climbs out of the folder into another run (`../../victim/tasks/<id>`), and one that is an
  absolute path to it (a reader that joins it reads, and links, the other run's files);
- JSON nested 100,000 levels deep in run.json and results.json.
Each is given to every command that reads it (`report`, `rejudge`, `export`, `compare`, `trace`), each run as a
subprocess under `RLIMIT_AS` of 3 GB: it must exit 2 with one `error:` line naming the file and the problem, no
traceback, and nothing of the victim run in what it wrote, having read (by the kernel's count of the bytes the
process read, `/proc/self/io`) less than `MAX_READ_BYTES`: the refusal came before any large read. That is the
evidence, whatever the machine's load; `SAFETY_NET_S` only stops a command that hangs (a loaded shared machine once
took 27 s to start the CLI and refuse). And `trace` of a trace whose
verdict outcome and execution kill reason hold escape sequences prints none of them raw.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from kernel.ports import free_port
from kernel.settings import load_settings

pytestmark = pytest.mark.e2e
CLI = str(Path(sys.executable).parent / "appworld-green")
TASK = "f0a7c07_1"
MEMORY_CAP = 3 << 30
SAFETY_NET_S = 300.0
"""Seconds a refusal may take, start-up of the CLI included: a safety net against a hang, not the measure (a refusal
takes a few seconds on an idle machine; a loaded one took 27)."""
MAX_READ_BYTES = 128 << 20
"""Bytes a refused command may read in all: a refusal reads ~12 MiB (nearly all of it Python's imports), a reader that
read a hostile 2 GB file would read it all."""
IO_PROBE = ("import atexit, os, sys\n"
            "def _io():\n"
            "    with open(os.environ['IO_PROBE_FILE'], 'w') as out, open('/proc/self/io') as io:\n"
            "        out.write(io.read())\n"
            "atexit.register(_io)\n"
            "from green_agent.cli import main\n"
            "sys.exit(main())\n")
"""The CLI as its console script runs it, writing the kernel's I/O counts of the process when it exits."""
HUGE = 2 << 30
VICTIM_MARK = "VICTIM-RUN-INSTRUCTION-7f3a"
"""Text only the victim run holds (its task.json's instruction): it must never reach what a hostile run writes."""
ESCAPES = ("\x1b]0;pwned\x07", "\x1b[2J", "\x1b[31m", "\x9b2J")


class Done(NamedTuple):
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    read_bytes: int
    """Bytes the process read (`rchar`: files, pipes and sockets, its imports included); -1 if it never said."""


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "APPWORLD_ROOT": str(load_settings().appworld_root), "RUNS_DIR": str(tmp / "runs"),
            "OPENAI_API_KEY": ""}


def cli(tmp: Path, *args: str, capped: bool = True, timeout: float = SAFETY_NET_S) -> Done:
    started = time.monotonic()
    probe = tmp / f"io-{os.getpid()}-{time.monotonic_ns()}.txt"
    done = subprocess.run([sys.executable, "-c", IO_PROBE, *args], capture_output=True, text=True,
                          env={**_env(tmp), "IO_PROBE_FILE": str(probe)}, timeout=timeout,
                          preexec_fn=_capped if capped else None, errors="replace")
    counts = dict(line.split(": ") for line in probe.read_text().splitlines()) if probe.is_file() else {}
    probe.unlink(missing_ok=True)
    return Done(done.returncode, done.stdout, done.stderr, time.monotonic() - started, int(counts.get("rchar", -1)))


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("runfolder")


@pytest.fixture(scope="module")
def real_run(tmp: Path) -> Path:
    out = tmp / "real"
    ports = ":".join(str(free_port()) for _ in range(3))  # this worker's own ports, never a fixed slot's
    done = cli(tmp, "eval", "--task-ids", TASK, "--blue", "reference", "--predictor", "ground_truth", "--out",
               str(out), "--slot-ports", ports, capped=False, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (out / "tasks" / TASK / "trace.jsonl").is_file() and (out / "results.json").is_file()
    return out


@pytest.fixture(scope="module")
def victim(real_run: Path, tmp: Path) -> Path:
    """Another run beside the hostile ones: its task.json holds `VICTIM_MARK`."""
    folder = tmp / "victim"
    shutil.copytree(real_run, folder)
    info = folder / "tasks" / TASK / "task.json"
    info.write_text(json.dumps(json.loads(info.read_text()) | {"instruction": VICTIM_MARK}))
    return folder


def _edit_json(path: Path, edit: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def hostile(real_run: Path, tmp: Path, name: str, edit: Callable[[Path], None]) -> Path:
    folder = tmp / name
    if not folder.exists():
        shutil.copytree(real_run, folder)
        edit(folder)
    return folder


def _trials(folder: Path) -> None:
    _edit_json(folder / "run.json", lambda d: d["config"].update(trials=10**9))
    _edit_json(folder / "results.json", lambda d: d["manifest"]["config"].update(trials=10**9))


def _huge(name: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        os.truncate(folder / name, HUGE)  # sparse: the valid start, then 2 GB of NULs that take no disk
    return edit


def _task_id(task_id: Callable[[Path], str]) -> Callable[[Path], None]:
    """Name `task_id(folder)` in place of the run's task, in run.json and in results.json (rows included)."""
    def edit(folder: Path) -> None:
        other = task_id(folder)
        shutil.rmtree(folder / "tasks" / TASK)
        for name, manifest in (("run.json", lambda d: d), ("results.json", lambda d: d["manifest"])):
            def change(data: dict, manifest: Callable[[dict], dict] = manifest) -> None:
                manifest(data)["task_ids"] = [other]
                manifest(data)["task_digests"] = {other: manifest(data)["task_digests"][TASK]}
                for row in data.get("rows", []):
                    row["task_id"] = other
                    row["result_path"] = f"tasks/{other}/result.json"
            _edit_json(folder / name, change)
    return edit


def _deep(folder: Path) -> None:
    for name in ("run.json", "results.json"):
        (folder / name).write_text('{"run_id": ' + "[" * 100_000 + "]" * 100_000 + "}")


FOLDERS: dict[str, Callable[[Path], None]] = {
    "trials": _trials,
    "huge-run-json": _huge("run.json"),
    "huge-results-json": _huge("results.json"),
    "traversal": _task_id(lambda folder: f"../../victim/tasks/{TASK}"),
    "absolute": _task_id(lambda folder: str(folder.parent / "victim" / "tasks" / TASK)),
    "deep": _deep,
}
"""Each hostile folder and how it is made from the real run."""
CASES = [("trials", "report", "run.json", "trials"), ("trials", "rejudge", "run.json", "trials"),
         ("trials", "export", "results.json", "trials"), ("trials", "compare", "results.json", "trials"),
         ("huge-run-json", "report", "run.json", "bytes"), ("huge-run-json", "rejudge", "run.json", "bytes"),
         ("huge-results-json", "export", "results.json", "bytes"),
         ("huge-results-json", "compare", "results.json", "bytes"),
         ("traversal", "report", "run.json", "task id"), ("traversal", "rejudge", "run.json", "task id"),
         ("traversal", "export", "results.json", "task id"), ("traversal", "compare", "results.json", "task id"),
         ("absolute", "report", "run.json", "task id"), ("absolute", "rejudge", "run.json", "task id"),
         ("absolute", "export", "results.json", "task id"), ("absolute", "compare", "results.json", "task id"),
         ("deep", "report", "run.json", "deep"), ("deep", "rejudge", "run.json", "deep"),
         ("deep", "export", "results.json", "deep"), ("deep", "compare", "results.json", "deep")]
"""(hostile folder, command, the file the error must name, a word of the problem it must name)."""


def _argv(command: str, folder: Path, real_run: Path, tmp: Path) -> list[str]:
    if command == "export":
        return ["export", str(folder), "--out", str(tmp / f"{folder.name}.eval")]
    if command == "compare":
        return ["compare", str(real_run), str(folder)]
    return [command, str(folder)]


@pytest.mark.parametrize(("name", "command", "file", "problem"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_a_hostile_run_folder_is_refused_before_any_large_read_under_a_memory_cap(
        name: str, command: str, file: str, problem: str, real_run: Path, victim: Path, tmp: Path) -> None:
    folder = hostile(real_run, tmp, name, FOLDERS[name])
    done = cli(tmp, *_argv(command, folder, real_run, tmp))
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 2, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert 0 < done.read_bytes < MAX_READ_BYTES, done.read_bytes  # refused before any large read
    errors = [line.replace(str(folder), "<folder>") for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and file in errors[0] and problem in errors[0], done.stderr[-2000:]  # not in the folder's name
    written = [p for p in folder.rglob("*") if p.is_file() and p.stat().st_size < HUGE]
    assert all(VICTIM_MARK not in p.read_text(errors="replace") for p in written)
    assert VICTIM_MARK not in done.stdout + done.stderr


def test_a_2_gb_trace_is_refused_before_it_is_read_under_a_memory_cap(real_run: Path, tmp: Path) -> None:
    folder = hostile(real_run, tmp, "huge-trace", _huge(f"tasks/{TASK}/trace.jsonl"))
    done = cli(tmp, "trace", str(folder / "tasks" / TASK))
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 2 and 0 < done.read_bytes < MAX_READ_BYTES, (done.returncode, done.read_bytes,
                                                                              done.stderr[-2000:])
    assert "trace.jsonl" in done.stderr and "bytes" in done.stderr


def _escaping_trace(folder: Path) -> None:
    trace = folder / "tasks" / TASK / "trace.jsonl"
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    verdict = next(r for r in records if r["kind"] == "verdict")
    at, battle = verdict["at"], verdict["battle_id"]
    hostile_records = [
        {"at": at, "battle_id": battle, "kind": "execution", "source": "gateway", "text": "print(1)", "ok": False,
         "killed": "".join(ESCAPES) + "killed", "result": "out"},
        {**verdict, "outcome": "".join(ESCAPES) + "passed", "note": "".join(ESCAPES)},
    ]
    trace.write_text(trace.read_text() + "".join(json.dumps(r) + "\n" for r in hostile_records))


def test_trace_prints_no_escape_sequence_of_a_hostile_trace_raw(real_run: Path, tmp: Path) -> None:
    folder = hostile(real_run, tmp, "escapes", _escaping_trace)
    done = cli(tmp, "trace", str(folder / "tasks" / TASK))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "passed" in done.stdout and "killed" in done.stdout  # the fields are shown, cleaned
    assert "\x1b" not in done.stdout and "\x9b" not in done.stdout and "\x07" not in done.stdout, \
        [line for line in done.stdout.splitlines() if "\x1b" in line or "\x9b" in line][:5]


def test_the_real_run_reads_cleanly_through_every_command(real_run: Path, tmp: Path) -> None:
    """The reader's limits are generous for a real run: the same commands on the untouched folder succeed."""
    for argv in (["report", str(real_run)], ["export", str(real_run), "--out", str(tmp / "real.eval")],
                 ["compare", str(real_run), str(real_run)], ["trace", str(real_run / "tasks" / TASK)]):
        done = cli(tmp, *argv)
        assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-2000:])
