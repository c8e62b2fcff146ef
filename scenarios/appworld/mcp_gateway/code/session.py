"""One battle's REPL: start the sandboxed child, run code in it, relay its API calls, always tear it down.

`CodeSession(...).start()` spawns the child (bubblewrap, the landlock fallback's confined process, or a
plain process under `--unsafe-code-in-process`) and returns at once; the child imports IPython and AppWorld's
helpers while the battle is set up, and the first `execute` waits for it to be ready. `execute(code)` sends
the code and answers each `apis` call the child makes through `relay(ApiCall) -> ApiAnswer` (the gateway's
per-battle path), then returns an `ExecutionOutcome`. Every byte from the child is read with a size limit
(`MAX_LINE_BYTES`) and parsed within a depth limit (`kernel.bounded_json`), and validated before use: the
child runs the agent's code, so its messages are the agent's. App and API names must be plain identifiers
(`../x` never reaches the relay), a call's id a small number, and every string is made encodable
(`kernel.encodable`: a lone surrogate never reaches the MCP answer). Every write to the child is
non-blocking with a deadline (`WRITE_TIMEOUT_S`, within the execution's): code that stops reading its
pipe is ended, never waited for. AppWorld's limits on calls per execution, executions and output size are
counted here, outside the agent's process (`limits.py`), and refused in AppWorld's words.

Who is charged (docs/code-mode.md, "Who killed it"): the execution's clock starts when the REPL is ready, so
starting or replacing a REPL is never taken from it, and a REPL that is not ready within `READY_TIMEOUT_S` is
ours (`fault`). An execution that outlives its timeout by `GRACE_S` (code that blocks the child's own alarm),
that breaks the protocol, or whose REPL died of a limit it is known to have hit (`death.py`: SIGXCPU, SIGXFSZ,
the cgroup's memory or pids events) is the agent's: it is killed, the outcome says so (`killed`, naming the
limit), keeps AppWorld's failure form, and the next execution starts a fresh REPL (its variables are gone, and
the output says that too). Any other death is ours (`fault`): the battle is not scored. Every REPL is forked
from one long-lived thread (`_SPAWNER`). `close()` kills the child's whole
sandbox (under landlock: every process of its uid) and removes its cgroup and scratch dir; it is idempotent
and runs from `__exit__` and the gateway's battle end.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import select
import signal
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from kernel.bounded_json import loads_bounded
from kernel.encodable import encodable, encodable_text
from mcp_gateway.code import priority, reap
from mcp_gateway.code.limits import calls_exceeded, counts, cut_output, executions_exceeded
from mcp_gateway.code.confine import Confinement
from mcp_gateway.code.death import Death, death_of
from mcp_gateway.code.sandbox import (Cgroup, Isolation, SandboxLimits, bwrap_command, child_limits,
                                      in_process_command, python_prefixes, rlimits)

logger = logging.getLogger(__name__)
MAX_LINE_BYTES = 4 << 20
"""Longest protocol line taken from the child (its output is cut to `max_output_chars` again here)."""
READY_TIMEOUT_S = 120.0
"""How long a REPL may take to import and say it is ready (far more than a busy machine needs); ours if not."""
GRACE_S = 5.0
REAP_BOUND_S = 5.0
"""Killing what an execution's code left running takes at most this; past it the whole sandbox is ended."""
TEARDOWN_BOUND_S = 10.0
"""Killing the whole sandbox and removing its cgroup and scratch dir take at most this (plus one last kill)."""
WRITE_TIMEOUT_S = 15.0
"""Longest wait for the child to take one message of ours (it reads at once unless its code stops it)."""
MAX_CALLS_PER_EXECUTION = 1000
"""AppWorld's `max_api_calls_per_interaction`, counted here (the child's own count is the code's to change)."""
MAX_CALL_ID = 2**53
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-spawner")
"""The one thread that forks every REPL. bubblewrap's `--die-with-parent` (PR_SET_PDEATHSIG) fires when the
*thread* that forked it exits, not the process: a REPL spawned from a worker thread (anyio prunes its idle
workers after 10 s; `asyncio.run` ends its own) was SIGKILLed under a running battle. This thread lives as
long as the gateway."""
OURS = ("Execution failed. Traceback:\nException: The sandbox failed on the referee's side ({reason}); this is "
        "not your code's fault and this battle will not be scored.")
RESTART_NOTE = ("\n[The sandbox was ended ({reason}); its variables are gone: the next execution starts a "
                "fresh Python REPL.]")


class ApiCall(BaseModel):
    """One `apis.<app>.<api>(**arguments)` call made by the code."""

    app: str = Field(pattern=NAME.pattern)
    api: str = Field(pattern=NAME.pattern)
    arguments: dict[str, Any] = Field(default_factory=dict)


class ApiAnswer(BaseModel):
    """The relay's answer: the API's status and JSON body, or `error` (a refusal raised inside the code)."""

    status_code: int | None = None
    body: Any = None
    error: str | None = None
    text: str | None = None
    """A 200 whose body is not JSON (a `malformed` fault, `mcp_gateway.faults`): decoding it fails in the code."""


class ExecutionOutcome(BaseModel):
    """What one execution produced."""

    output: str = Field(description="The REPL's output text, as AppWorld's /execute returns it.")
    api_calls: int = Field(default=0, description="apis calls the code made (each relayed).")
    failed: bool = Field(default=False, description="The output is an 'Execution failed.' traceback.")
    timed_out: bool = Field(default=False, description="The execution hit its wall-time limit.")
    killed: str | None = Field(default=None, description=(
        "Why the sandbox was ended during it, for a limit the code is known to have hit (or broke its protocol)."))
    fault: str | None = Field(default=None, description=(
        "The sandbox failed on our side (it did not become ready, or died with no sign of a limit): not the "
        "agent's fault, the battle is not scored."))
    counted: bool = Field(default=True, description="It counts toward max_interactions (AppWorld's rule).")
    duration_ms: float = Field(default=0.0, description="Wall time of the execution.")


class ChildFault(Exception):
    """The child broke a limit or the protocol, or died; the message says which (`death.py` says whose)."""


class ChildTimeout(ChildFault):
    """The execution ran past its timeout (measured from the REPL's ready) and its grace."""


Relay = Callable[[ApiCall], ApiAnswer]


class CodeSession:
    """The REPL of one battle (module docstring)."""

    def __init__(self, *, python: Path, isolation: Isolation, task_datetime: datetime | str | None,
                 apis: dict[str, list[str]], relay: Relay, limits: SandboxLimits | None = None) -> None:
        self.python, self.isolation, self.relay = python, isolation, relay
        self.limits = limits or SandboxLimits()
        self.init = {"datetime": None if task_datetime is None else str(task_datetime), "apis": apis,
                     "timeout_s": self.limits.timeout_s,
                     "max_interactions": self.limits.max_interactions,
                     "max_output_chars": self.limits.max_output_chars}
        self._process: subprocess.Popen[bytes] | None = None
        self._cgroup: Cgroup | None = None
        self._confinement: Confinement | None = None
        self._buffer = b""
        self._ready = False
        self._idle = False
        self._awaits_clock = False
        """A spare given its init without a datetime: its REPL is built and waits for `begin`'s clock."""
        self._death: Death | None = None
        self._ran_code = False
        """The agent's code was sent to the running process: a death without evidence is then the agent's."""
        self._closed_by_us, self._ran_code = False, False
        self._start_fault: ChildFault | None = None
        self.executions = 0
        self.interactions = 0
        """Executions that count toward `max_interactions`, counted here (`limits.py`)."""
        self.max_calls_per_execution = MAX_CALLS_PER_EXECUTION
        self.spawn_s: float | None = None
        self.ready_s: float | None = None

    def __enter__(self) -> "CodeSession":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self, send_init: bool = True, idle: bool = False) -> None:
        """Spawn the child (returns once it runs; `execute` waits for it to be ready). A session made without a
        datetime is a spare: it imports and builds its REPL now and gets its battle's clock (`begin`) later;
        `send_init` False sends nothing until `begin`; `idle`: it imports at idle CPU priority until then (where
        the priority can be restored: `priority.py`)."""
        started = time.perf_counter()
        self._closed_by_us, self._start_fault = False, None
        if self.isolation.process_cap == "cgroup_v1":
            self._cgroup = Cgroup(f"appworld-code-{os.getpid()}-{secrets.token_hex(6)}", self.limits)
        command = in_process_command(self.python)
        preexec, cwd, env = child_limits(self.limits, self._cgroup), "/", {"PATH": "/usr/bin"}
        if self.isolation.mechanism == "bubblewrap":
            command = bwrap_command(self.isolation.bwrap.split(" (")[0] if self.isolation.bwrap else "bwrap",
                                    self.python, python_prefixes(self.python))
        elif self.isolation.mechanism == "landlock":
            self._confinement = Confinement(python_prefixes(self.python), rlimits(self.limits, processes=True),
                                            self._cgroup.join if self._cgroup else None)
            preexec, cwd, env = self._confinement.preexec, self._confinement.cwd, self._confinement.env
        self._idle = idle and priority.can_restore()
        if self._idle:
            preexec = priority.idle_then(preexec)
        try:
            self._process = _SPAWNER.submit(
                subprocess.Popen, command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                preexec_fn=preexec, cwd=cwd, env=env, start_new_session=True).result()
            assert self._process.stdin is not None
            os.set_blocking(self._process.stdin.fileno(), False)  # `_send` waits with a deadline, never blocks
        except BaseException:
            self.close()
            raise
        if self._confinement is not None:
            self._confinement.spawned()
        self.spawn_s = time.perf_counter() - started
        self._started_at = started
        self._awaits_clock = False
        if send_init:
            self._awaits_clock = self.init["datetime"] is None
            try:
                self._send({"init": self.init}, time.monotonic() + WRITE_TIMEOUT_S)
            except ChildFault as fault:  # gone already (a sandbox that could not be set up): `wait_ready` says so
                self._start_fault = fault

    def begin(self, task_datetime: datetime | str) -> None:
        """Give a spare its battle's clock (its init, if `start` sent none); ChildFault if it died meanwhile."""
        if self._process is None or self._process.poll() is not None:
            raise ChildFault("the spare sandbox is not running")
        if self._idle:
            try:
                priority.restore(self._process.pid)
            except OSError as exc:
                raise ChildFault(f"the spare sandbox's priority could not be restored: {exc}") from None
            self._idle = False
        self.init["datetime"] = str(task_datetime)  # a REPL restarted later in the battle gets it in its init
        message = {"clock": self.init["datetime"]} if self._awaits_clock else {"init": self.init}
        self._awaits_clock = False
        self._send(message, time.monotonic() + WRITE_TIMEOUT_S)

    def wait_ready(self) -> None:
        """Block until the REPL said it is ready (at most `READY_TIMEOUT_S`); ChildFault if it does not (ours)."""
        if self._ready:
            return
        if self._start_fault is not None:
            raise self._start_fault
        message = self._receive(time.monotonic() + READY_TIMEOUT_S, starting=True)
        if message.get("ready") is not True:
            raise ChildFault("the sandbox did not start")
        self._ready = True
        self.ready_s = time.perf_counter() - self._started_at

    def execute(self, code: str) -> ExecutionOutcome:
        """Run `code` in the REPL; API calls go to the relay. Never raises for the agent's faults.

        The execution's clock starts once the REPL is ready: starting (or replacing) it is never the agent's time,
        and a REPL that does not become ready in `READY_TIMEOUT_S` is our fault (`fault`), not the agent's."""
        self._death = None
        if self.interactions >= self.limits.max_interactions:  # counted here: the REPL never sees this code
            return ExecutionOutcome(output=executions_exceeded(self.limits.max_interactions), failed=True,
                                    counted=False)
        try:
            if self._process is None:
                self.start()
            self.wait_ready()
        except (ChildFault, OSError, ValueError, AssertionError) as error:
            if self._closed_by_us or not isinstance(error, ChildFault):
                return self._ended(error, 0, time.perf_counter())
            reason = f"the sandbox did not become ready ({error})"
            self.close()
            return ExecutionOutcome(output=OURS.format(reason=reason) + RESTART_NOTE.format(reason=reason),
                                    failed=True, fault=reason, counted=False)
        started = time.perf_counter()
        self.executions += 1
        deadline = time.monotonic() + (self.limits.timeout_s or 10**6) + GRACE_S
        calls = 0
        try:
            if self._process is not None and self._process.poll() is not None:  # died before this code was sent
                raise ChildFault(self._exit_reason())
            self._ran_code = True
            self._send({"execute": encodable_text(code)}, deadline)
            while True:
                message = self._receive(deadline)
                if "call" in message:
                    calls += 1
                    call_id = _call_id(message)  # before relaying: a forged id relays nothing
                    self._send({"reply": self._relayed(message, calls), "id": call_id}, deadline)
                    continue
                output = message.get("output")
                if not isinstance(output, str):
                    raise ChildFault("the sandbox broke its protocol")
                self._reap_strays()
                counted = counts(message.get("counted", True), calls, killed=False)
                self.interactions += counted
                return ExecutionOutcome(
                    output=cut_output(output, self.limits.max_output_chars), api_calls=calls,
                    failed=output.startswith("Execution failed."), timed_out=message.get("timed_out") is True,
                    counted=counted, duration_ms=_ms(started))
        except (ChildFault, OSError, ValueError, AssertionError) as error:  # the others: closed under it (battle end)
            outcome = self._ended(error, calls, started)
            self.interactions += outcome.counted and outcome.fault is None
            return outcome

    def _ended(self, error: Exception, calls: int, started: float) -> ExecutionOutcome:
        """The outcome of an execution whose REPL was ended: by its timeout, a limit it is known to have hit or a
        protocol breach (the agent's: `killed`), the battle's end (nobody's), or anything else (ours: `fault`)."""
        closed_by_us = self._closed_by_us or not isinstance(error, ChildFault)
        death = self._death
        if self._closed_by_us:
            reason = "its battle ended"
        elif closed_by_us:  # a pipe error while nobody had closed it: say so, never "its battle ended"
            reason = f"its pipe to the referee failed ({type(error).__name__})"
        else:
            reason = str(error)
        self.close()
        timed_out = not closed_by_us and isinstance(error, ChildTimeout)
        agents = not closed_by_us and (death is None or death.agents)
        if timed_out:
            failure = f"Execution timed out after {self.limits.timeout_s} seconds."
        elif agents or closed_by_us:
            failure = f"Exception: The code's process was ended: {reason}."
        else:
            return ExecutionOutcome(output=OURS.format(reason=reason) + RESTART_NOTE.format(reason=reason),
                                    api_calls=calls, failed=True, fault=reason, duration_ms=_ms(started))
        return ExecutionOutcome(output="Execution failed. Traceback:\n" + failure + RESTART_NOTE.format(
            reason=reason), api_calls=calls, failed=True, timed_out=timed_out,
            killed=reason if agents else None, duration_ms=_ms(started))

    def _reap_strays(self) -> None:
        """Kill what the code started (AppWorld's REPL allows no subprocesses; the sandbox keeps none), within
        `REAP_BOUND_S` whatever it keeps starting (`reap.py`); past it, the whole sandbox is ended (`close`)."""
        deadline, repl = time.monotonic() + REAP_BOUND_S, self.pid
        if self._cgroup is not None:
            keep = reap.is_sandbox_core if self.isolation.mechanism == "bubblewrap" else repl.__eq__
            done = self._cgroup.reap_strays(keep, deadline)
        elif self._confinement is not None:
            done = self._confinement.reap_strays(repl, deadline)
        elif self.isolation.mechanism == "bubblewrap" and repl is not None:
            done = reap.kill_strays(lambda: reap.namespace_strays(repl), reap.namespace_repl(repl), deadline)
        else:
            done = True  # no sandbox (--unsafe-code-in-process): nothing to tell its strays by
        if not done:
            self.close()

    def _relayed(self, message: dict[str, Any], calls: int) -> dict[str, Any]:
        """The answer to call number `calls` of this execution: relayed, or refused inside the code."""
        try:
            call = ApiCall.model_validate(message["call"])
        except (ValidationError, TypeError):
            answer = ApiAnswer(error="Invalid API call: app and API names are plain identifiers "
                                     "(apis.<app>.<api>(**kwargs)).")
        except KeyError:
            raise ChildFault("it broke the sandbox's protocol") from None
        else:
            if calls > self.max_calls_per_execution:
                answer = ApiAnswer(error=calls_exceeded(self.max_calls_per_execution))
            elif not _json_compliant(call.arguments):  # as AppWorld's requester (`requests`) refuses them
                answer = ApiAnswer(error="Out of range float values are not JSON compliant")
            else:
                answer = self._relay(call)
        return answer.model_dump()

    def _relay(self, call: ApiCall) -> ApiAnswer:
        """The relay's answer; an exception of the relay (the gateway failed on this one call) is answered inside
        the code as a failed request, as AppWorld's requester raises one, and the REPL goes on. It was not "its
        battle ended" (an OSError from a relay was once taken for the pipe closed under it: issue 50)."""
        try:
            return self.relay(call)
        except Exception as exc:  # noqa: BLE001 - one call's failure, never the REPL's end
            logger.error("relaying apis.%s.%s failed: %s", call.app, call.api, type(exc).__name__)
            return ApiAnswer(error=f"The call apis.{call.app}.{call.api} failed before an answer came back "
                                   f"({type(exc).__name__}).")

    def close(self) -> None:
        """Kill the child's whole sandbox at once (its cgroup frozen first; its pid namespace; under landlock every
        process of its uid) and remove its cgroup and scratch dir, within `TEARDOWN_BOUND_S`. Idempotent."""
        deadline = time.monotonic() + TEARDOWN_BOUND_S
        process, self._process = self._process, None
        self._ready, self._buffer, self._closed_by_us = False, b"", process is not None
        if self._cgroup is not None:
            self._cgroup.kill_all(deadline)
        if process is not None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            for stream in (process.stdin, process.stdout):
                try:
                    stream.close() if stream else None
                except OSError:
                    pass
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass  # SIGKILLed yet not gone (uninterruptible sleep): the uid or cgroup sweep ends it later
        confinement, self._confinement = self._confinement, None
        if confinement is not None:
            confinement.close(deadline)
        if self._cgroup is not None:
            self._cgroup.remove(deadline)
            self._cgroup = None

    def _send(self, message: dict[str, Any], deadline: float) -> None:
        """Write one protocol line by `deadline` (or within WRITE_TIMEOUT_S); ChildFault if the child does not take
        it: a child whose code shrank its pipe and stopped reading must not hold the gateway (issue 39)."""
        assert self._process is not None and self._process.stdin is not None
        fd = self._process.stdin.fileno()
        view = memoryview(json.dumps(message).encode("ascii") + b"\n")  # ASCII: escapes, nothing to fail encoding
        stalled = time.monotonic() + WRITE_TIMEOUT_S
        while view:
            remaining = min(deadline, stalled) - time.monotonic()
            if remaining <= 0:
                if deadline <= stalled:
                    raise ChildTimeout(f"timed out: it ran past {self.limits.timeout_s} s + {GRACE_S:.0f} s of grace")
                raise ChildFault(f"it stopped reading its protocol pipe (our message waited {WRITE_TIMEOUT_S:.0f} s)")
            try:
                _, writable, _ = select.select([], [fd], [], remaining)
                if writable:
                    view = view[os.write(fd, view):]
            except BlockingIOError:
                continue
            except (ValueError, OSError):  # a broken pipe: the child is gone
                raise ChildFault(self._exit_reason()) from None

    def _receive(self, deadline: float, starting: bool = False) -> dict[str, Any]:
        """The next protocol line (bounded), parsed; ChildFault on timeout, exit or garbage."""
        assert self._process is not None and self._process.stdout is not None
        fd = self._process.stdout.fileno()
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_LINE_BYTES:
                raise ChildFault(f"it sent a message over {MAX_LINE_BYTES} bytes")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if starting:
                    raise ChildFault(f"it was not ready after {READY_TIMEOUT_S:.0f} s")
                raise ChildTimeout(f"timed out: it ran past {self.limits.timeout_s} s + {GRACE_S:.0f} s of grace")
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise ChildFault(self._exit_reason())
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            message = loads_bounded(line)  # the agent's code can write this line: no depth may crash us
        except ValueError:
            raise ChildFault("it broke the sandbox's protocol") from None
        if not isinstance(message, dict):
            raise ChildFault("it broke the sandbox's protocol")
        return encodable(message)  # a lone surrogate (`"\\ud800"`) becomes U+FFFD: what we send on must encode

    def _exit_reason(self) -> str:
        """Why the child's process ended (`death.py`), read before its cgroup is removed; kept for `_ended`."""
        assert self._process is not None
        code, cpu_used = _reap(self._process, wait_s=2.0)
        self._death = death_of(code, bubblewrap=self.isolation.mechanism == "bubblewrap", limits=self.limits,
                               ran_code=self._ran_code, cgroup_dirs=self._cgroup.dirs if self._cgroup else None,
                               cpu_used_s=cpu_used)
        return self._death.reason


def _reap(process: subprocess.Popen[bytes], wait_s: float) -> tuple[int | None, float | None]:
    """Wait (at most `wait_s`) for `process` to end: its exit code and the CPU seconds it and the descendants it
    reaped used (`wait4`'s rusage: bubblewrap's includes the REPL's), or (None, None) if it still runs."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere already
            return process.poll(), None
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return process.returncode, usage.ru_utime + usage.ru_stime
        if time.monotonic() >= deadline:
            return None, None
        time.sleep(0.01)


def _call_id(message: dict[str, Any]) -> int | None:
    """The call's id, echoed in our reply: a small number (the child's counter) or none; anything else is forged."""
    call_id = message.get("id")
    if call_id is None or (type(call_id) is int and 0 <= call_id <= MAX_CALL_ID):
        return call_id
    raise ChildFault("it broke the sandbox's protocol (a call id that is not a number)")


def _json_compliant(arguments: dict[str, Any]) -> bool:
    """The arguments hold no NaN or Infinity (JSON has none; the child's `json` writes them)."""
    try:
        json.dumps(arguments, allow_nan=False)
    except ValueError:
        return False
    return True


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
