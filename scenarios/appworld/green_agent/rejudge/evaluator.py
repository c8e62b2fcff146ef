"""AppWorld's own evaluator in a fresh process: the AppWorld virtualenv's python running `world/rejudge.py`.

`FreshEvaluator(settings, work)` starts one process for a re-judge (AppWorld pins pydantic<2, so it never runs
in our virtualenv; nothing of the run's servers is reused), whose AppWorld root is the prepared `work` folder
(`green_agent.rejudge.state`). Entering the block waits until the process has imported AppWorld (its
`{"ready": true}` line; `startup_s`), so a job's deadline measures the job alone; at most `STARTUP_TIMEOUT_S`
(past it, ours failed: InfrastructureError), or until the caller's `ready_by` if that comes first (past it,
`JobTimedOut`, the process stopped).
`evaluate(task_id, experiment, deadline)` sends one job and returns AppWorld's evaluation as our
`EvaluationRecord` (the same parse as the env server's `/evaluate` answer), with the seconds AppWorld spent;
`replay(job, deadline)` sends a call log's replay (`green_agent.rejudge.calls`) and returns its answer. Answers
are read one bounded line at a time; no answer by the job's deadline (`time.monotonic()`) raises `JobTimedOut`,
after which the process is of no further use (`stop()` it and start another); a process that ends during a
job raises `ProcessEnded`. Its stderr goes to a log in
`work`. The process is stopped (its group, SIGINT then SIGKILL) when the block ends, whatever happened.
"""

from __future__ import annotations

import json
import math
import select
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

from pydantic import ValidationError

from green_agent.models.result import EvaluationRecord
from green_agent.runtime.processes import interrupts_deferred, open_private_log, stop_process_group
from green_agent.runtime.world_build import WORLD_DIR
from kernel.call_log_reader import MAX_LINE_BYTES
from kernel.errors import AppWorldUnavailableError, InfrastructureError
from kernel.settings import Settings

SCRIPT = WORLD_DIR / "rejudge.py"
STARTUP_TIMEOUT_S = 600.0
"""AppWorld's imports in the fresh process (a few seconds): generous on a loaded box; past it, ours failed."""


class JobTimedOut(Exception):
    """The process gave no answer to a job by its deadline (the job may never end: stop the process)."""


class ProcessEnded(InfrastructureError):
    """The process ended. While starting, ours failed; during a job, the job's input (a hostile saved state or
    call log) is the likely cause, and the caller may go on with a new process."""

    def __init__(self, message: str, exit_code: int | None) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class Rejudged(NamedTuple):
    """AppWorld's evaluation of one saved state, or why there is none."""

    evaluation: EvaluationRecord | None
    error: str | None
    seconds: float | None


class Replayed(NamedTuple):
    """The answer of `world/replay.py` to one replay job, or why there is none."""

    answer: dict | None
    error: str | None
    seconds: float | None


class FreshEvaluator:
    """One AppWorld evaluator process (see the module docstring)."""

    def __init__(self, settings: Settings, work: Path, ready_by: float = math.inf) -> None:
        self.python = Path(settings.appworld_python)
        self.work = work
        self.ready_by = ready_by
        self.log_path = work / "evaluator.log"
        self.popen: subprocess.Popen | None = None
        self.jobs = 0
        self.startup_s = 0.0

    def __enter__(self) -> "FreshEvaluator":
        if not self.python.is_file():
            raise AppWorldUnavailableError(f"AppWorld's Python not found at {self.python}: run `make venvs` "
                                           "(or set APPWORLD_PYTHON)")
        log = open_private_log(self.log_path)
        try:
            with interrupts_deferred():
                self.popen = subprocess.Popen([str(self.python), str(SCRIPT), "--root", str(self.work)],
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                              cwd=WORLD_DIR, start_new_session=True)
        finally:
            log.close()
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        started = time.monotonic()
        limit = started + STARTUP_TIMEOUT_S
        try:
            ready = self._answer(min(limit, self.ready_by))
        except JobTimedOut:
            if self.ready_by < limit:
                raise  # the caller's own deadline came first
            raise InfrastructureError(f"AppWorld's evaluator did not start within {STARTUP_TIMEOUT_S:.0f} s; see "
                                      f"{self.log_path}") from None
        if ready.get("ready") is not True:
            raise InfrastructureError(f"AppWorld's evaluator did not say it was ready; see {self.log_path}")
        self.startup_s = time.monotonic() - started

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.popen is None:
            return
        try:
            self.popen.stdin.close()  # type: ignore[union-attr]
            self.popen.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            stop_process_group(self.popen.pid)
        finally:
            self.popen.stdout.close()  # type: ignore[union-attr]
            self.popen = None

    def stop(self) -> None:
        """Stop the process now (after a job timed out: it may be running forever)."""
        if self.popen is None:
            return
        stop_process_group(self.popen.pid, grace_s=0.5)
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.popen.stdin, self.popen.stdout):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass
        self.popen = None

    def evaluate(self, task_id: str, experiment: str, deadline: float) -> Rejudged:
        """AppWorld's evaluation of `<work>/experiments/outputs/<experiment>/tasks/<task_id>/dbs`."""
        answer = self._job({"task_id": task_id, "experiment": experiment}, deadline)
        if "error" in answer:
            return Rejudged(None, str(answer["error"])[:2000], None)
        try:
            evaluation = EvaluationRecord.model_validate(answer.get("evaluation"))
        except ValidationError as exc:
            return Rejudged(None, f"AppWorld's evaluation did not parse ({exc.error_count()} error(s))", None)
        return Rejudged(evaluation, None, answer.get("seconds"))

    def replay(self, job: dict, deadline: float) -> Replayed:
        """`world/replay.py`'s answer to `job` (`{"task_id", "experiment", "state_id", "calls"}`)."""
        answer = self._job({**job, "kind": "replay"}, deadline)
        if "error" in answer:
            return Replayed(None, str(answer["error"])[:2000], None)
        replayed = answer.get("replay")
        if not isinstance(replayed, dict):
            return Replayed(None, "the replay's answer did not parse", None)
        return Replayed(replayed, None, answer.get("seconds"))

    def _job(self, job: dict, deadline: float) -> dict:
        """Send one job line; its answer (a dict), read by `deadline`."""
        assert self.popen is not None and self.popen.stdin is not None and self.popen.stdout is not None
        self.jobs += 1
        job_id = str(self.jobs)
        try:
            self.popen.stdin.write((json.dumps({**job, "id": job_id}) + "\n").encode())
            self.popen.stdin.flush()
        except OSError:
            raise self._died() from None
        answer = self._answer(deadline)
        if answer.get("id") != job_id:
            raise InfrastructureError(f"AppWorld's evaluator answered out of turn; see {self.log_path}")
        return answer

    def _answer(self, deadline: float) -> dict:
        stdout = self.popen.stdout  # type: ignore[union-attr]
        ready, _, _ = select.select([stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise JobTimedOut()
        line = stdout.readline(MAX_LINE_BYTES + 1)
        if not line:
            raise self._died()
        try:
            answer = json.loads(line)
        except ValueError:
            raise InfrastructureError(f"AppWorld's evaluator wrote a line that is not JSON; see {self.log_path}") \
                from None
        return answer if isinstance(answer, dict) else {}

    def _died(self) -> ProcessEnded:
        code = self.popen.poll() if self.popen else None
        lines = self.log_path.read_text(errors="replace").splitlines() if self.log_path.is_file() else []
        tail = "\n".join(lines[-10:])
        return ProcessEnded(f"AppWorld's evaluator process ended (exit code {code}); last log lines "
                            f"({self.log_path}):\n{tail}", code)
