"""The landlock fallback is chosen where namespaces are refused, said everywhere, and its uids are never shared.

What it stops is in `test_code_hostile.py` (every hostile case runs under both sandboxes). Here:
- auto picks the fallback in a process that cannot make namespaces: the detection runs in a child under a
  seccomp filter refusing `unshare` and `clone` with namespace flags with EPERM (`clone3`: ENOSYS), as Docker's
  default profile does; the same child without the filter picks bubblewrap. A PATH without `bwrap` is the
  weaker second case (`shutil.which` patched; its contract: an executable's path on PATH, or None);
- `doctor` names it when it is forced (`CODE_SANDBOX=landlock`);
- two battles never share a uid, and a battle whose gateway died without teardown is swept by the next lease;
- ordinary code (an `apis` call, print, the frozen datetime) works under it, and the syscalls its seccomp
  filter lists are refused (called by number through ctypes).
"""

from __future__ import annotations

import ast
import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_support import sandbox_of, unprivileged_python, unprivileged_work  # noqa: F401 - a fixture

from mcp_gateway.code import battle_uid, sandbox
from mcp_gateway.code.battle_uid import BattleUid
from mcp_gateway.code.session import ApiAnswer, ApiCall

pytestmark = pytest.mark.e2e
CLI = str(Path(sys.executable).parent / "appworld-green")
DETECT_WITHOUT_NAMESPACES = """
import errno, json, sys
import pyseccomp
if sys.argv[2] == "refuse":
    docker_like = pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)
    docker_like.add_rule(pyseccomp.ERRNO(errno.EPERM), "unshare")
    for flag in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000):
        docker_like.add_rule(pyseccomp.ERRNO(errno.EPERM), "clone", pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag))
    docker_like.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "clone3")
    docker_like.load()
from mcp_gateway.code.sandbox import detect_isolation
print(detect_isolation(sys.argv[1]).model_dump_json())
"""


@pytest.fixture()
def python(unprivileged_work: Path) -> Iterator[Path]:
    sandbox.detect_isolation.cache_clear()
    yield unprivileged_python(unprivileged_work)
    sandbox.detect_isolation.cache_clear()


def detect_in_child(python: Path, mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", DETECT_WITHOUT_NAMESPACES, str(python), mode], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_auto_picks_the_fallback_where_namespaces_are_refused(python: Path) -> None:
    refused = detect_in_child(python, "refuse")
    assert refused["mechanism"] == "landlock" and refused["landlock_abi"] >= 1, refused
    assert refused["problem"].startswith("bubblewrap cannot make its namespaces here: bwrap: "), refused
    allowed = detect_in_child(python, "allow")
    assert allowed["mechanism"] == "bubblewrap" and allowed["problem"] is None, allowed


def test_auto_picks_the_fallback_without_bwrap(python: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    isolation = sandbox.require_isolation(python)
    assert isolation.mechanism == "landlock" and isolation.problem == "bubblewrap (`bwrap`) is not installed"
    assert isolation.summary().startswith("landlock sandbox (no namespaces: an unprivileged uid of its own, seccomp")


def test_doctor_names_the_forced_fallback(python: Path) -> None:
    env = {**os.environ, "CODE_SANDBOX": "landlock", "APPWORLD_PYTHON": str(python)}
    done = subprocess.run([CLI, "--env-file", "/dev/null", "doctor", "--interaction", "code", "--json"],
                          capture_output=True, text=True, env=env, timeout=120)
    report = json.loads(done.stdout)
    assert report["isolation_mechanism"] == "landlock" and report["code_ready"], report
    assert report["isolation"].startswith("landlock sandbox (") and done.returncode == 0
    assert next(c for c in report["checks"] if c["name"] == "bwrap")["needed_for"] == "extra"


@pytest.mark.serial  # the uid leases are machine-wide: another battle's lease may sweep the abandoned uid first
def test_two_battles_never_share_a_uid_and_a_dead_battle_is_swept() -> None:
    first, second = BattleUid.lease(), BattleUid.lease()
    try:
        assert first.uid != second.uid and first.scratch != second.scratch
        assert oct(first.scratch.stat().st_mode & 0o777) == "0o700" and first.scratch.stat().st_uid == first.uid
        left = subprocess.Popen(["/usr/bin/sleep", "60"], user=first.uid, group=first.uid, extra_groups=[],
                                start_new_session=True)
        os.close(first._lock_fd)  # its gateway died: the kernel frees the lock, nothing else ran
        first._lock_fd = -1
        third = BattleUid.lease()  # sweeps the abandoned uid before it picks one
        third.release()
        assert left.wait(timeout=10) == -9 and not first.scratch.exists()
        assert battle_uid.live_processes({first.uid}) == []
    finally:
        first.release()
        second.release()


def test_ordinary_code_works_under_the_fallback(unprivileged_work: Path) -> None:
    fallback = sandbox_of("landlock", unprivileged_work)
    calls: list[ApiCall] = []

    def relay(call: ApiCall) -> ApiAnswer:
        calls.append(call)
        return ApiAnswer(status_code=200, body={"song_id": call.arguments.get("song_id")})

    with fallback.session(relay, apis={"spotify": ["show_song"]}) as session:
        assert session.execute("r = apis.spotify.show_song(song_id=7)\nprint(r['song_id'] + 1)").output == "8\n"
        assert session.execute("import datetime; print(datetime.datetime.now())").output == "2023-05-18 12:00:00\n"
        assert session.execute("print(r, [1, 2])").output == "{'song_id': 7} [1, 2]\n"
        assert session.execute("x = 1").output == "Execution successful."
    assert calls == [ApiCall(app="spotify", api="show_song", arguments={"song_id": 7})]


@pytest.mark.serial  # the uid leases are machine-wide: another battle's lease may sweep the abandoned uid first
def test_the_slot_reaper_sweeps_what_a_killed_gateway_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """A gateway SIGKILLed mid-battle: its REPL's daemon runs on as the battle's uid, no one's child; once the
    slot owner is gone its reaper kills it (no later lease is needed)."""
    from green_agent.runtime.reaper import TAG_ENV, start_reaper
    monkeypatch.setenv(TAG_ENV, "restored-by-monkeypatch")  # start_reaper sets its own tag in our environment
    owner = subprocess.Popen(["/usr/bin/sleep", "60"])
    reaper = start_reaper(owner.pid)
    lease = BattleUid.lease()
    daemon = subprocess.Popen(["/usr/bin/sleep", "60"], user=lease.uid, group=lease.uid, extra_groups=[],
                              start_new_session=True, env={})  # the REPL's environment is cleared: no reaper tag
    os.close(lease._lock_fd)  # the gateway died: the kernel freed its lock, it ran no teardown
    lease._lock_fd = -1
    owner.kill()
    owner.wait()
    assert reaper.wait(timeout=30) == 0
    assert daemon.wait(timeout=5) == -9 and not lease.scratch.exists()


SYSCALLS = """c = __import__('ctypes')
libc = c.CDLL(None, use_errno=True)
def errno_of(*args):
    c.set_errno(0)
    return (libc.syscall(*args), c.get_errno())
print(repr({'socketpair': errno_of(53, 1, 1, 0, c.create_string_buffer(8)), 'unshare': errno_of(272, 0x10000000),
            'ptrace': errno_of(101, 0, 0, 0, 0), 'io_uring_setup': errno_of(425, 1, c.create_string_buffer(120)),
            'bpf': errno_of(321, 0, 0, 0), 'keyctl': errno_of(250, 0, 0, 0, 0, 0), 'clone3': errno_of(435, 0, 0),
            'uid': __import__('os').getuid(), 'groups': __import__('os').getgroups()}))"""


def test_the_fallback_refuses_the_syscalls_it_lists(unprivileged_work: Path) -> None:
    """x86_64 numbers, through ctypes: what a hostile agent would call to get round `socket` or out of its uid."""
    fallback = sandbox_of("landlock", unprivileged_work)
    with fallback.session(lambda call: ApiAnswer(status_code=200)) as session:
        found = ast.literal_eval(session.execute(SYSCALLS).output.strip())
    assert found.pop("clone3") == (-1, errno.ENOSYS) and found.pop("groups") == []
    assert 62000 <= found.pop("uid") < 62512
    assert found == dict.fromkeys(found, (-1, errno.EPERM)), found


I386_SOCKET = """c, m = __import__('ctypes'), __import__('mmap')
page = m.mmap(-1, 4096, prot=m.PROT_READ | m.PROT_WRITE | m.PROT_EXEC)
page.write(bytes.fromhex('53' 'b867010000' 'bb02000000' 'b901000000' '31d2' 'cd80' '5b' 'c3'))
print('fd', c.CFUNCTYPE(c.c_int)(c.addressof(c.c_char.from_buffer(page)))())"""
"""push rbx; socket(AF_INET, SOCK_STREAM, 0) as i386's syscall 359 through `int 0x80`; pop rbx; ret: a filter of
x86_64's numbers alone would let it through (this kernel runs i386 code: outside the sandbox it returns an fd)."""


def test_a_socket_through_the_i386_abi_kills_the_repl(unprivileged_work: Path) -> None:
    fallback = sandbox_of("landlock", unprivileged_work)
    with fallback.session(lambda call: ApiAnswer(status_code=200)) as session:
        outcome = session.execute(I386_SOCKET)
        assert outcome.killed and "SIGSYS" in outcome.killed and "fd" not in outcome.output, outcome
        assert session.execute("print('fresh')").output == "fresh\n"
