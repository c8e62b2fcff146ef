"""Code mode, fair under load: the differential test beside a code-mode dev eval and busy processes (opt-in).

Run: `.venv/bin/python bench/bench_code_load.py [--sandboxes bubblewrap,landlock] [--workers 2] [--busy N]`.
Not part of `make test` or `make bench` (it loads the machine on purpose, for minutes).

For each sandbox (`CODE_SANDBOX`), at once:
- `2 x cores` busy processes (a Python `while True: pass` each, ended by pid at the end);
- a code-mode dev eval: `appworld-green eval --split dev --blue reference --workers 2 --interaction code`
  (its own run dir, on free ports of its own, so it never takes a slot of a neighbour's run);
- `pytest tests/test_code_differential.py`: every snippet, the work after `complete_task`, and every reference
  solution through our sandbox and through AppWorld's own `/execute`, compared in output, verdict and DB
  change log (both REPLs time out after `TIMEOUT_S` there: a loaded machine must change neither).
Figures (one JSON line each): the differential test's result (1 = every comparison equal), the eval's TGC
(target 100), the executions the eval's battles lost to a kill, a timeout or a sandbox fault (target 0), each
beside the load average the machine ran at. The issue's bar: all equal, TGC 100, nothing killed or timed out.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BENCH_DIR, emit, print_machine  # noqa: E402

from kernel.ports import free_port  # noqa: E402

REPO = Path(BENCH_DIR).parent
VENV = REPO / ".venv" / "bin"
BUSY = "while True:\n    pass\n"


def busy_processes(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(count)]


def sandbox_env(sandbox: str, work: Path) -> dict[str, str]:
    """The environment that forces `sandbox`; the landlock fallback gets an AppWorld python other users can run."""
    env = {**os.environ, "CODE_SANDBOX": sandbox}
    if sandbox == "landlock":
        sys.path.insert(0, str(REPO / "tests"))
        from sandbox_support import unprivileged_python
        shared = work / "unprivileged"
        shared.mkdir(mode=0o755, exist_ok=True)
        env["APPWORLD_PYTHON"] = str(unprivileged_python(shared))
    return env


def start_eval(out: Path, env: dict[str, str], workers: int) -> subprocess.Popen[bytes]:
    ports = ",".join(":".join(str(free_port()) for _ in range(3)) for _ in range(workers))
    command = [str(VENV / "appworld-green"), "eval", "--split", "dev", "--blue", "reference", "--workers",
               str(workers), "--interaction", "code", "--slot-ports", ports, "--out", str(out), "--json"]
    log = open(out.with_suffix(".log"), "wb")  # noqa: SIM115 - closed with the process below
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=REPO, env=env)


def run_differential(env: dict[str, str], log: Path) -> tuple[bool, str]:
    command = [str(VENV / "python"), "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
               "tests/test_code_differential.py"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=env)
    log.write_text(done.stdout + done.stderr)
    summary = [line for line in done.stdout.splitlines() if "match" in line or "passed" in line or "failed" in line]
    return done.returncode == 0, " | ".join(summary)[-600:]


def eval_figures(out: Path) -> dict[str, float]:
    """TGC and the executions lost to kills, timeouts or sandbox faults, from the run's result files."""
    results = [json.loads(p.read_text()) for p in out.rglob("result.json")]
    code = [((r.get("trajectory") or {}).get("code") or {}) for r in results]
    passed = sum(r.get("outcome") == "passed" for r in results)
    return {"battles": len(results), "tgc": round(100 * passed / len(results), 1) if results else 0.0,
            "killed": sum(c.get("killed", 0) for c in code), "timeouts": sum(c.get("timeouts", 0) for c in code),
            "sandbox_faults": sum(c.get("sandbox_faults", 0) for c in code),
            "infra_errors": sum(r.get("outcome") == "infra_error" for r in results)}


def one_sandbox(sandbox: str, workers: int, busy: int, work: Path, keep: Path | None) -> None:
    out = work / f"eval-{sandbox}"
    env = sandbox_env(sandbox, work)
    hogs = busy_processes(busy)
    started = time.monotonic()
    try:
        evaluation = start_eval(out, env, workers)
        time.sleep(10)  # the eval's slots and first battles are up before the comparison starts
        equal, summary = run_differential(env, work / f"differential-{sandbox}.log")
        load = os.getloadavg()[0]
        evaluation.wait(timeout=3600)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    figures = eval_figures(out)
    if keep is not None:
        shutil.copytree(work, keep / sandbox, dirs_exist_ok=True, ignore=shutil.ignore_patterns("unprivileged"))
    note = f"{sandbox}; {busy} busy processes; load {load:.1f}; {time.monotonic() - started:.0f} s"
    emit({"name": f"code_load_differential_{sandbox}", "value": int(equal), "unit": "all equal (1/0)",
          "target": 1, "meets_target": equal, "note": f"{note}; {summary}"})
    emit({"name": f"code_load_eval_tgc_{sandbox}", "value": figures["tgc"], "unit": "TGC %", "target": 100,
          "meets_target": figures["tgc"] == 100, "note": f"{note}; {figures}; eval exit {evaluation.returncode}"})
    lost = figures["killed"] + figures["timeouts"] + figures["sandbox_faults"]
    emit({"name": f"code_load_eval_lost_executions_{sandbox}", "value": lost, "unit": "executions", "target": 0,
          "meets_target": lost == 0, "note": note})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandboxes", default="bubblewrap,landlock")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--busy", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument("--keep", type=Path, default=None, help="copy the logs and run dirs here")
    args = parser.parse_args()
    print_machine("bench_code_load")
    with tempfile.TemporaryDirectory(prefix="bench-code-load-") as work:
        Path(work).chmod(0o755)  # the landlock fallback's uid passes through to its python
        for sandbox in args.sandboxes.split(","):
            one_sandbox(sandbox, args.workers, args.busy, Path(work), args.keep)


if __name__ == "__main__":
    main()
