"""What a battle's code may keep, share or hold up, under both real sandboxes (issue 39, rows 3 to 6).

- IPC: SysV shared memory, message queues and semaphores and POSIX message queues (and memory files) are refused
  under the landlock fallback (seccomp: it has no IPC namespace), and private to the battle under bubblewrap (its IPC
  namespace); either way another battle sees none of it and nothing is left after the battle.
- disk: every place the code may write, together, holds at most the sandbox's quota (bubblewrap: /scratch,
  the rest of its root and /dev read-only; landlock: its scratch dir is a tmpfs of that size, or, where the Green
  may not mount, sealed by the REPL before any code runs), so a filler fails alone and our own disk never fills.
- strays: a thread of the REPL that forks every 0.3 s cannot stretch the reaping after each execution, nor
  the teardown, past their fixed bounds (`REAP_BOUND_S`, `TEARDOWN_BOUND_S`).
Every test runs real sandboxes (`sandbox_support.py`); each was seen failing on the code before the fix.
"""

from __future__ import annotations

import ast
import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sandbox_support import MECHANISMS, Sandbox, sandbox_of, unprivileged_work  # noqa: F401 - a fixture

from mcp_gateway.code import battle_uid
from mcp_gateway.code.sandbox import SCRATCH_BYTES
from mcp_gateway.code.session import REAP_BOUND_S, TEARDOWN_BOUND_S, ApiAnswer, CodeSession

pytestmark = pytest.mark.e2e


def relay(call: object) -> ApiAnswer:  # the gateway's contract: one answer per relayed call
    return ApiAnswer(status_code=200, body={"ok": True})


@pytest.fixture(scope="module", params=MECHANISMS)
def sandbox(request: pytest.FixtureRequest, unprivileged_work: Path) -> Sandbox:
    return sandbox_of(request.param, unprivileged_work)


@pytest.fixture(scope="module", params=[*MECHANISMS, "landlock-no-cgroup"])
def any_sandbox(request: pytest.FixtureRequest, unprivileged_work: Path) -> Sandbox:
    """Each sandbox; the fallback also as in an unprivileged container (no cgroup: RLIMIT_NPROC alone)."""
    found = sandbox_of(request.param.split("-")[0], unprivileged_work)
    if request.param == "landlock-no-cgroup":
        return Sandbox(found.isolation.model_copy(update={"process_cap": "rlimit_nproc"}), found.python)
    return found


IPC_MAKE = """c = __import__('ctypes')
libc = c.CDLL(None, use_errno=True)
libc.shmat.restype = c.c_void_p
def call(f, *a):
    c.set_errno(0)
    return (f(*a), c.get_errno())
out = {{'shmget': call(libc.shmget, {key}, 1 << 20, 0o1666), 'msgget': call(libc.msgget, {key}, 0o1666),
        'semget': call(libc.semget, {key}, 1, 0o1666), 'mq_open': call(libc.mq_open, {mq!r}, 0o102, 0o666, None),
        'memfd_create': call(libc.memfd_create, b'hold', 0)}}
if out['shmget'][0] >= 0:
    c.memmove(libc.shmat(out['shmget'][0], None, 0), b'SECRET-OF-A', 11)
print(repr(out))"""
IPC_PEEK = """c = __import__('ctypes')
libc = c.CDLL(None, use_errno=True)
libc.shmat.restype = c.c_void_p
def call(f, *a):
    c.set_errno(0)
    return (f(*a), c.get_errno())
out = {{'shmget': call(libc.shmget, {key}, 0, 0), 'msgget': call(libc.msgget, {key}, 0),
        'semget': call(libc.semget, {key}, 0, 0), 'mq_open': call(libc.mq_open, {mq!r}, 0, 0, None)}}
if out['shmget'][0] >= 0:
    out['read'] = c.string_at(libc.shmat(out['shmget'][0], None, 0o10000), 11)
print(repr(out))"""


def sysv_objects(key: int) -> list[str]:
    """The host's SysV IPC objects with `key` (every namespace's are in its own /proc/sysvipc: these are ours)."""
    found = []
    for kind in ("shm", "msg", "sem"):
        lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        found += [f"{kind}: {line.split()}" for line in lines if int(line.split()[0]) == key]
    return found


def posix_queue_exists(name: bytes) -> bool:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.mq_open(name, 0, 0, None)
    if fd >= 0:
        libc.mq_unlink(name)  # leave nothing of the test either
        libc.mq_close(fd)
        return True
    return False


def test_ipc_is_refused_or_private_and_nothing_of_it_outlives_the_battle(sandbox: Sandbox) -> None:
    key, mq = secrets.randbelow(1 << 30) + 1, f"/aw-test-{secrets.token_hex(4)}".encode()
    with sandbox.session(relay) as first, sandbox.session(relay) as second:  # two battles at once
        made = ast.literal_eval(first.execute(IPC_MAKE.format(key=key, mq=mq)).output.strip())
        peeked = ast.literal_eval(second.execute(IPC_PEEK.format(key=key, mq=mq)).output.strip())
        during = sysv_objects(key)
    left, queue_left = sysv_objects(key), posix_queue_exists(mq)
    print("made", made, "peeked", peeked, "during", during, "left", left, "queue left", queue_left)
    if sandbox.isolation.mechanism == "landlock":  # no IPC namespace: seccomp refuses them all
        assert made == dict.fromkeys(made, (-1, 1)), made  # EPERM
        assert peeked == dict.fromkeys(peeked, (-1, 1)), peeked
    else:  # its own IPC namespace: it may make them, no other battle nor the host sees them
        assert made["shmget"][0] >= 0 and made["mq_open"][0] >= 0, made
        assert peeked == dict.fromkeys(peeked, (-1, 2)), peeked  # ENOENT: not in the neighbour's namespace
        assert during == []
    assert left == [] and not queue_left


FILL = """o = __import__('posix')
chunk = b'x' * (16 << 20)
written, errors = {}, {}
tmp = '/' + 'tmp'  # the sandbox's own /tmp (spelt apart: tests name no folder of this machine)
for place in sorted({'/scratch', o.getcwd(), o.environ.get('TMPDIR', tmp), o.environ.get('HOME', '/'), '/dev/shm',
                     '/dev', '/', tmp, '/var/tmp'}):
    written[place] = 0
    for n in range(8):
        try:
            fd = o.open(f'{place}/fill-{n}', o.O_WRONLY | o.O_CREAT | o.O_TRUNC, 0o600)
            try:
                written[place] += o.write(fd, chunk)
            finally:
                o.close(fd)
        except OSError as e:
            errors[place] = e.errno
            break
print(repr({'written': written, 'errors': errors}))"""


def test_every_writable_place_together_is_capped_and_a_filler_fails_alone(sandbox: Sandbox) -> None:
    """The code writes 16 MiB files everywhere it can (up to 128 MiB a place): the total stays within the quota,
    the filler meets ENOSPC (or cannot write at all), its neighbour still writes, and nothing stays."""
    with sandbox.session(relay) as filler, sandbox.session(relay) as neighbour:
        filled = ast.literal_eval(filler.execute(FILL).output.strip())
        scratch = filler.execute("print(__import__('posix').getcwd())").output.strip()
        honest = neighbour.execute("o = __import__('posix')\nfd = o.open('note', o.O_WRONLY | o.O_CREAT, 0o600)\n"
                                   "print(o.write(fd, b'y' * 4096))")
    print(filled, honest.output)
    total = sum(filled["written"].values())
    assert total <= SCRATCH_BYTES, filled  # the quota holds every place at once, not each file
    assert 28 in filled["errors"].values(), filled  # ENOSPC: the quota was met, inside the code
    assert honest.output.strip() == "4096", honest.output  # the neighbour's own quota is whole
    if sandbox.isolation.mechanism == "landlock":
        assert not Path(scratch).exists() and scratch not in Path("/proc/self/mountinfo").read_text()


FORKER = """t, o, s = __import__('threading'), __import__('posix'), __import__('select').select
def forker():
    born = []
    while True:
        try:
            pid = o.fork()
        except OSError:
            pid = None
        if pid == 0:
            s([], [], [], 1)
            o._exit(0)
        born = [p for p in born + [pid] if p is not None]
        s([], [], [], 0.3)
        for p in born[:-5]:  # its children are reaped 1.5 s after birth: a killed one stays a zombie that long
            o.waitpid(p, o.WNOHANG)
        born = born[-5:]
t.Thread(target=forker, daemon=True).start()"""
"""A thread forking, every 0.3 s, a child that lives 1 s, reaped 1.5 s after its birth (the red team's: there is
always one, and each stray killed stays a zombie for a while)."""


def test_a_thread_forking_all_the_time_cannot_stretch_reaping_or_teardown(any_sandbox: Sandbox) -> None:
    """The red team's REPL thread forking a short-lived child every 0.3 s: each execution after it still ends
    within its reaping bound (it took 78-178 s before), and the teardown within its own."""
    session = any_sandbox.session(relay, timeout_s=20)
    session.start()
    try:
        assert session.execute(FORKER).output == "Execution successful."
        durations = []
        for n in range(3):
            outcome = session.execute(f"print({n})")
            durations.append(outcome.duration_ms / 1000)
            assert outcome.output == f"{n}\n" or outcome.killed is None, outcome
    finally:
        pid, cgroup, confinement = session.pid, session._cgroup, session._confinement
        started = time.monotonic()
        session.close()
        teardown = time.monotonic() - started
    print("executions (s)", durations, "teardown (s)", teardown)
    assert max(durations) < REAP_BOUND_S + 20 and teardown < TEARDOWN_BOUND_S + 20, (durations, teardown)
    assert cgroup is None or cgroup.pids() == []
    if confinement is not None:
        assert battle_uid.live_processes({confinement.lease.uid}) == []
    with pytest.raises(ProcessLookupError):
        os.kill(pid or -1, 0)


NO_MOUNT = """
import errno, json, sys
import pyseccomp
docker_like = pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)  # Docker's default profile without CAP_SYS_ADMIN
docker_like.add_rule(pyseccomp.ERRNO(errno.EPERM), "mount")
docker_like.load()
from pathlib import Path
from mcp_gateway.code.sandbox import detect_isolation
from mcp_gateway.code.session import ApiAnswer, CodeSession
isolation = detect_isolation(sys.argv[1], False, "landlock")
session = CodeSession(python=Path(sys.argv[1]), isolation=isolation, task_datetime="2023-05-18T12:00:00",
                      apis={"spotify": ["login"]}, relay=lambda call: ApiAnswer(status_code=200, body={"ok": 1}))
with session:
    outputs = [session.execute(code).output for code in sys.argv[2:]]
print(json.dumps({"isolation": isolation.model_dump(), "outputs": outputs}))
"""


def test_a_fallback_that_may_not_mount_gives_the_code_no_disk(unprivileged_work: Path) -> None:
    """Where the Green may not mount (an unprivileged container: `mount` refused, as Docker's profile does), the
    fallback's REPL seals its scratch dir before any code runs (AppWorld's own guard forbids writing files
    anyway), so no battle's code can fill our disk; the REPL still works."""
    python = sandbox_of("landlock", unprivileged_work).python
    codes = [FILL, "print(apis.spotify.login()['ok'] + 1)"]
    done = subprocess.run([sys.executable, "-c", NO_MOUNT, str(python), *codes], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    filled = ast.literal_eval(found["outputs"][0].strip())
    print(found)
    assert sum(filled["written"].values()) == 0 and set(filled["errors"].values()) <= {1, 2, 13, 30}, filled
    assert found["outputs"][1] == "2\n"
    assert found["isolation"]["scratch"] == "sealed", found["isolation"]
