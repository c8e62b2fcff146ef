"""The fallback sandbox's confinement (`landlock`), applied to the REPL between fork and exec.

Where bubblewrap cannot make namespaces (an unprivileged Docker container under its default seccomp profile),
the REPL gets instead, in this order, in `confined(...)` (a `preexec_fn`: it runs in the forked child, as
root, before `exec`, so not one instruction of the AppWorld interpreter runs without it):
1. its cgroup, when the machine lets us make one (the same `Cgroup` as bubblewrap's);
2. rlimits: address space, CPU seconds, file size, open files, no core, and processes (`RLIMIT_NPROC`: the
   uid is the battle's alone, `battle_uid.py`, so this caps the battle's processes and threads together);
3. the battle's unprivileged uid and gid, no supplementary groups (it can never get root back);
4. Landlock (`landlock_ruleset`, built in the parent; the child only enforces it, which also sets
   no_new_privs): read and execute beneath /usr, the /lib-like dirs outside it, the AppWorld virtualenv and
   its base Python; read /dev/urandom and /dev/zero, read and write /dev/null; read and write (no execute)
   beneath its scratch dir (a tmpfs of a fixed size; where the Green may not mount one, the REPL seals it
   before any code runs: `scratch.py`); nothing else, so no world data, no ground truth, no /proc, no other battle's
   scratch. ABI >= 4: no TCP bind or connect; ABI >= 6: no abstract unix socket and no signal outside it;
5. seccomp (`syscall_filter`, built in the parent with libseccomp, loaded in the child): a deny-list over
   the default allow, refused with EPERM (ENOSYS for clone3, so the C library falls back to clone, whose
   flags the filter can read): every socket (`socket`, `socketpair`: the REPL talks to us only over the
   pipes it inherits), tracing and other processes' memory, namespaces and mounts, keyrings, BPF, perf,
   userfaultfd, io_uring (it can open sockets without `socket`), file handles, modules and kexec, and SysV and
   POSIX IPC (shared memory, message queues, semaphores: with no IPC namespace, their objects would outlive
   the battle and be open to other battles' uids), and `memfd_create` (memory no rlimit counts). Only the
   native architecture is allowed (libseccomp kills any other ABI's syscall, e.g. i386's socketcall).
Once applied, none of these can be undone by the child: Landlock and seccomp are one-way, the uid is not root.

The library bindings are PyPI's `landlockpy` (Landlock's three syscalls, every ABI up to 11) and `pyseccomp`
(libseccomp through ctypes, the API of libseccomp's own Python bindings).
"""

from __future__ import annotations

import errno
import functools
import os
import resource
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import landlockpy
    import pyseccomp

READ_EXEC_ROOTS = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin")
"""What a dynamically linked interpreter needs (a merged-/usr system has only /usr; the others are symlinks)."""
DENIED_SYSCALLS = (
    "socket", "socketpair", "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "unshare", "setns",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
    "mount_setattr", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "name_to_handle_at", "open_by_handle_at", "init_module", "finit_module",
    "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff", "acct", "quotactl",
    "fanotify_init", "personality",
    "shmget", "shmat", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl",
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr", "memfd_create")
"""The last lines: SysV and POSIX IPC, whose objects would outlive the battle and be open to every other uid
(the fallback has no IPC namespace of its own), and memory files (memory outside the address-space rlimit)."""
CLONE_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: clone with any of them is refused."""


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: no Landlock)."""
    import landlockpy
    return landlockpy.abi_version()


def read_exec_paths(prefixes: list[Path]) -> list[Path]:
    """The hierarchies the REPL may read and execute: /usr, the /lib-like dirs not inside it, `prefixes`."""
    paths = [Path("/usr")]
    for root in READ_EXEC_ROOTS[1:]:
        target = Path(root).resolve()
        if target.is_dir() and not target.is_relative_to("/usr"):
            paths.append(target)
    return paths + [p for p in prefixes if not p.is_relative_to("/usr")]


def landlock_ruleset(prefixes: list[Path], scratch: Path) -> "landlockpy.Ruleset":
    """The REPL's Landlock ruleset (module docstring, 4), every right the kernel knows handled; the caller closes it."""
    from landlockpy import AccessFS, Ruleset, Scope

    read_exec = AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.EXECUTE
    scratch_rights = (AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.WRITE_FILE | AccessFS.TRUNCATE
                      | AccessFS.MAKE_REG | AccessFS.MAKE_DIR | AccessFS.MAKE_SYM | AccessFS.REMOVE_FILE
                      | AccessFS.REMOVE_DIR | AccessFS.REFER)
    ruleset = Ruleset(scoped=Scope.ABSTRACT_UNIX_SOCKET | Scope.SIGNAL)  # best effort: what this kernel has
    try:
        for path in read_exec_paths(prefixes):
            ruleset.allow_path(path, read_exec)
        ruleset.allow_path("/dev/null", AccessFS.READ_FILE | AccessFS.WRITE_FILE)
        for device in ("/dev/urandom", "/dev/zero"):
            ruleset.allow_path(device, AccessFS.READ_FILE)
        ruleset.allow_path(scratch, scratch_rights)
    except BaseException:
        ruleset.close()
        raise
    return ruleset


@functools.lru_cache(maxsize=1)
def syscall_filter() -> "pyseccomp.SyscallFilter":
    """The REPL's seccomp filter (module docstring, 5); built once, loaded in each child."""
    import pyseccomp

    denied = pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        denied.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
    for flag in CLONE_NAMESPACE_FLAGS:
        denied.add_rule(pyseccomp.ERRNO(errno.EPERM), "clone", pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag))
    denied.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "clone3")
    return denied


def confined(rlimits: list[tuple[int, int]], uid: int, join_cgroup: Callable[[], None] | None,
             ruleset: "landlockpy.Ruleset | None", seccomp: "pyseccomp.SyscallFilter | None") -> Callable[[], None]:
    """The `preexec_fn` that confines the REPL (module docstring; `rlimits` as `sandbox.rlimits` gives them,
    plus RLIMIT_NPROC; a layer given as None is off: for the tests that show what each layer stops)."""

    from mcp_gateway.code.death import rlimit_pair

    def apply() -> None:
        if join_cgroup is not None:
            join_cgroup()
        for kind, value in rlimits:
            resource.setrlimit(kind, rlimit_pair(kind, value))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if ruleset is not None:
            ruleset.restrict()  # sets no_new_privs first
        if seccomp is not None:
            seccomp.load()

    return apply


def unreachable_by_others(paths: list[Path]) -> str | None:
    """The first directory on the way to `paths` that an unprivileged uid may not pass through, said as a
    problem (the REPL's uid owns nothing of ours: the interpreter and the scratch dirs' parent must be
    reachable by other users), or None."""
    for path in paths:
        for directory in [*reversed(path.parents), path]:
            mode = directory.stat().st_mode
            if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
                return (f"{directory} (on the way to {path}) is not searchable by other users (mode "
                        f"{stat.S_IMODE(mode):04o}), so the sandbox's unprivileged uid cannot reach it")
    return None


PROBE = ("import os, socket\n"
         "try:\n    socket.socket()\nexcept PermissionError:\n    pass\n"
         "else:\n    raise SystemExit('socket() was allowed')\n"
         "try:\n    os.listdir('/')\nexcept PermissionError:\n    pass\n"
         "else:\n    raise SystemExit('/ could be listed')\n")
"""The fallback's probe: the interpreter starts under every layer, and both seccomp and Landlock refuse."""


class Confinement:
    """One REPL's fallback confinement: its leased uid and scratch dir, its ruleset, its `preexec`.

    `spawned()` once the child runs (the parent's copy of the ruleset is closed); `reap_strays(keep, deadline)` after
    an execution; `close()` at teardown kills every process of the uid and removes the scratch dir (idempotent)."""

    def __init__(self, prefixes: list[Path], rlimits: list[tuple[int, int]],
                 join_cgroup: Callable[[], None] | None = None, *, landlock: bool = True, seccomp: bool = True) -> None:
        from mcp_gateway.code.battle_uid import BattleUid

        self.lease = BattleUid.lease()
        try:
            self._ruleset = landlock_ruleset(prefixes, self.lease.scratch) if landlock else None
            self.preexec = confined(rlimits, self.lease.uid, join_cgroup, self._ruleset,
                                    syscall_filter() if seccomp else None)
        except BaseException:
            self.lease.release()
            raise
        self.cwd = str(self.lease.scratch)
        self.env = {"PATH": "/usr/bin", "HOME": self.cwd, "TMPDIR": self.cwd, "PYTHONDONTWRITEBYTECODE": "1"}
        if not self.lease.writable:  # no tmpfs of a fixed size: the REPL seals its files once set up (scratch.py)
            self.env["APPWORLD_SCRATCH_SEALED"] = "1"

    def spawned(self) -> None:
        if self._ruleset is not None:
            self._ruleset.close()

    def reap_strays(self, keep: int | None, deadline: float) -> bool:
        from mcp_gateway.code.battle_uid import kill_strays
        return kill_strays(self.lease.uid, keep, deadline)

    def close(self, deadline: float | None = None) -> None:
        self.spawned()
        self.lease.release(deadline)


def probe_problem(command: list[str], prefixes: list[Path], rlimits: list[tuple[int, int]]) -> str | None:
    """Run `command` + `-c PROBE` under the whole confinement; None if it ran and was confined, else why not."""
    import subprocess

    from mcp_gateway.code.battle_uid import LEASE_DIR

    problem = unreachable_by_others([Path(command[0]), *prefixes, LEASE_DIR.parent])
    if problem is not None:
        return problem
    try:
        confinement = Confinement(prefixes, rlimits)
    except PermissionError as exc:
        return (f"the Green is not root, nor has CAP_SETUID, CAP_SETGID and CAP_CHOWN, so it cannot give each battle "
                f"a uid of its own ({exc})")
    except Exception as exc:  # noqa: BLE001 - whatever stops it (no libseccomp, no free uid) is the answer
        return f"{type(exc).__name__}: {exc}"
    try:
        probe = subprocess.run([*command, "-c", PROBE], capture_output=True, text=True, timeout=60, cwd=confinement.cwd,
                               env=confinement.env, preexec_fn=confinement.preexec)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"its child did not start ({exc}; it needs root or CAP_SETUID and CAP_SETGID)"
    finally:
        confinement.close()
    if probe.returncode != 0:
        return f"its child failed (status {probe.returncode}): {(probe.stderr.strip() or '?')[-300:]}"
    return None
