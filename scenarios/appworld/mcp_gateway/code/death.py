"""Why a REPL died, and whose fault it is: the agent is charged for a limit only with evidence of that limit.

`death_of(returncode, ...)` reads the evidence a death leaves, in this order, and names the limit it shows:
- SIGXCPU, or a SIGKILL once the process had used its CPU seconds (RLIMIT_CPU, soft equal to hard, ends it
  with SIGKILL; `wait4` tells how much it used): the battle's CPU seconds are used up;
- SIGXFSZ: a file over the size limit (RLIMIT_FSIZE) was written;
- SIGSYS: a system call the sandbox's seccomp filter kills (the landlock fallback: another ABI's syscall);
- the sandbox's cgroup (v1) counted an OOM kill (`memory.oom_control`'s `oom_kill`) or a refused fork
  (`pids.events`' `max`): memory or processes.
Those are the agent's (`Death.agents`), with a message naming the limit. Without such evidence, who is blamed
depends on whether the agent's code ever ran in that process (`ran_code`): if it did, the death is the agent's,
since its code can end its own process (`os._exit`, `os.kill`, `os.abort`; an exit status 255 or 128 + N under
bubblewrap is forgeable the same way), and charging us would hand a losing agent a retry on a fresh world; the
message says plainly that no sandbox limit was seen. If it did not (a fresh REPL: bubblewrap's own failure, a
SIGKILL nobody can account for), it is ours: the battle is not scored against the agent.
bubblewrap reports its child's death by signal N as exit status 128 + N; 255 is its own failure (it could not
set the sandbox up), never a signal. The wall-time limit is measured by the session itself (after the REPL is
ready), so it is not decided here.
"""

from __future__ import annotations

import resource
import signal
from pathlib import Path
from typing import NamedTuple, Protocol


class Limits(Protocol):
    """What the messages name of the sandbox's limits (`sandbox.SandboxLimits` has them)."""

    cpu_s: int
    file_bytes: int
    memory_bytes: int
    max_processes: int

CPU_HARD_EXTRA_S = 5
"""RLIMIT_CPU's hard limit is this far above its soft one, so the soft limit's SIGXCPU (which ends Python) comes
first: evidence that the code used up its CPU time (`death.py`), where soft == hard would end it with a SIGKILL."""


def rlimit_pair(kind: int, value: int) -> tuple[int, int]:
    """(soft, hard) of one of `rlimits`: equal, but for RLIMIT_CPU (`CPU_HARD_EXTRA_S`)."""
    return (value, value + CPU_HARD_EXTRA_S) if kind == resource.RLIMIT_CPU else (value, value)


class Death(NamedTuple):
    """How a REPL's process ended, said for its output and logs, and whether the agent's code is to blame."""

    reason: str
    agents: bool


def signal_of(returncode: int, bubblewrap: bool) -> int | None:
    """The signal that ended the process, if a signal did (bubblewrap's 128 + N included)."""
    if returncode < 0:
        return -returncode
    if bubblewrap and 128 < returncode < 255 and returncode - 128 in signal.Signals._value2member_map_:
        return returncode - 128
    return None


def _counter(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def cgroup_evidence(dirs: list[Path] | None, limits: Limits) -> str | None:
    """The limit the sandbox's cgroup (pids, memory dirs) saw hit, or None."""
    if not dirs:
        return None
    pids, memory = dirs
    if _counter(memory / "memory.oom_control", "oom_kill") > 0:
        return f"it went over its memory limit ({limits.memory_bytes} bytes) and was killed"
    if _counter(pids / "pids.events", "max") > 0:
        return f"it reached its process limit ({limits.max_processes} processes and threads)"
    return None


CPU_SLACK_S = 0.5
"""CPU seconds under the limit that still count as having reached it (the kernel checks it on its ticks)."""


def death_of(returncode: int | None, *, bubblewrap: bool, limits: Limits, ran_code: bool = False,
             cgroup_dirs: list[Path] | None = None, cpu_used_s: float | None = None) -> Death:
    """Why the REPL's process ended (module docstring); `returncode` None: it had not ended (it closed its pipe);
    `ran_code`: the agent's code had been sent to that process; `cpu_used_s`: the CPU seconds it (and what it
    reaped) used, if known."""
    if returncode is None:
        return Death("it closed its end of the protocol", True)
    number = signal_of(returncode, bubblewrap)
    out_of_cpu = cpu_used_s is not None and cpu_used_s >= limits.cpu_s - CPU_SLACK_S
    if number == signal.SIGXCPU or (number == signal.SIGKILL and out_of_cpu):
        return Death(f"it used up its CPU time ({limits.cpu_s} CPU seconds for the battle) and was killed", True)
    if number == signal.SIGXFSZ:
        return Death(f"it wrote a file over the size limit ({limits.file_bytes} bytes) and was killed", True)
    if number == signal.SIGSYS:
        return Death("it was killed by SIGSYS: it made a system call the sandbox forbids", True)
    limit = cgroup_evidence(cgroup_dirs, limits)
    if limit is not None:
        return Death(limit, True)
    how = f"was killed by {signal.Signals(number).name}" if number is not None else f"exited with status {returncode}"
    if ran_code:
        return Death(f"it {how} after running the agent's code, with no sign of a sandbox limit (the code can end "
                     "its own process)", True)
    if bubblewrap and returncode == 255:
        return Death("bubblewrap itself failed (exit status 255): the sandbox broke on the referee's side", False)
    if number is not None:
        return Death(f"it {how} before running any of the agent's code: the referee's side ended it", False)
    return Death(f"it {how} before running any of the agent's code", False)
