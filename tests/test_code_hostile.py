"""Hostile agent code against the real sandboxes: each attempt is contained, the agent's own fault, leaves nothing.

Every test runs under both mechanisms (`sandbox` is parametrised: bubblewrap, and the landlock fallback
forced as an unprivileged container would choose it; `sandbox_support.py`). The code evades AppWorld's
safety guard on purpose (`__import__` of a module the guard forbids by name, or an API it does not patch):
the guard is not the sandbox, so these tests are what the sandbox must stop.
`test_the_same_code_escapes_without_the_sandbox` runs them with `--unsafe-code-in-process`, and
`test_the_fallback_without_landlock_and_seccomp_lets_it_out` under the fallback with its Landlock and
seccomp layers off, and sees them succeed, so each check here is one that can fail.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_support import MECHANISMS, Sandbox, sandbox_of, unprivileged_work  # noqa: F401 - a fixture

from kernel.world_data import WorldData
from mcp_gateway.code import battle_uid, session as session_module
from mcp_gateway.code.confine import Confinement
from mcp_gateway.code.sandbox import Isolation, default_python
from mcp_gateway.code.session import ApiAnswer, ApiCall, CodeSession, ExecutionOutcome

pytestmark = pytest.mark.e2e
MARKER = "AW_HOSTILE_MARKER_5d1f"


class Recorder:
    """Relay stand-in (the gateway's contract: one answer per relayed call); keeps what it was asked."""

    def __init__(self) -> None:
        self.calls: list[ApiCall] = []

    def __call__(self, call: ApiCall) -> ApiAnswer:
        self.calls.append(call)
        return ApiAnswer(status_code=200, body={"ok": True})


def session_of(sandbox: Sandbox, relay: Recorder | None = None, **limits: int) -> CodeSession:
    return sandbox.session(relay or Recorder(), **limits)


@pytest.fixture(scope="module", params=MECHANISMS)
def sandbox(request: pytest.FixtureRequest, unprivileged_work: Path) -> Sandbox:
    return sandbox_of(request.param, unprivileged_work)


@pytest.fixture(scope="module")
def answer_file(appworld_root: Path) -> Path:
    world = WorldData(appworld_root)
    task_id = world.split("dev")[0]
    path = appworld_root / "data" / "tasks" / task_id / "ground_truth" / "answer.json"
    assert path.is_file()
    return path


@pytest.fixture(scope="module")
def repl(sandbox: Sandbox) -> Iterator[CodeSession]:
    os.environ[MARKER] = "secret-of-the-green"
    try:
        with session_of(sandbox, timeout_s=5) as session:
            yield session
    finally:
        os.environ.pop(MARKER, None)


def reads(path: Path) -> list[str]:
    """Ways to read a file that AppWorld's safety guard lets through or that evade it."""
    p = str(path)
    return [
        f"import pathlib; print(pathlib.Path({p!r}).read_text())",
        f"print(__import__('io').FileIO({p!r}).read())",
        f"o = __import__('os'); print(o.read(o.open({p!r}, 0), 9999))".replace("o.open", "getattr(o, 'op' + 'en')"),
        f"print(__import__('importlib').import_module('builtins').__dict__['op' + 'en']({p!r}).read())",
        f"c = __import__('ctypes'); f = c.CDLL(None).fopen; f.restype = c.c_void_p; print(f({p.encode()!r}, b'r'))",
    ]


@pytest.mark.parametrize("index", range(5), ids=["pathlib", "io", "os", "importlib", "ctypes"])
def test_ground_truth_cannot_be_read(repl: CodeSession, answer_file: Path, index: int) -> None:
    outcome = repl.execute(reads(answer_file)[index])
    assert outcome.killed is None
    assert outcome.failed or outcome.output.strip() in ("None", "0"), outcome.output  # fopen -> NULL
    assert answer_file.read_text().strip() not in outcome.output or answer_file.read_text().strip() in ("", "null")
    # bubblewrap: the file is not in its root at all; landlock: it is there, and Landlock refuses to open it
    assert "No such file" in outcome.output or "Permission denied" in outcome.output \
        or outcome.output.strip() in ("None", "0")


PROC_WALK = ("seen = []\ntry:\n    pids = [d for d in __import__('posix').listdir('/proc') if d.isdigit()]\n"
             "except OSError as e:\n    pids = [type(e).__name__]\nfor d in pids + ['{ours}']:\n    seen.append(d)\n"
             "    try:\n        seen.append(__import__('io').FileIO(f'/proc/{{d}}/environ').read().decode())\n"
             "    except Exception as e:\n        seen.append(type(e).__name__)\nprint(repr(seen))")


def test_no_process_or_environment_of_ours_is_visible(repl: CodeSession) -> None:
    output = repl.execute(PROC_WALK.format(ours=os.getpid())).output
    assert MARKER not in output and "secret-of-the-green" not in output
    if repl.isolation.mechanism == "bubblewrap":  # its own pid namespace: 1 is bwrap's init, our pid is not there
        assert output.startswith("['1', "), output
        assert output.rstrip().endswith(f"'{os.getpid()}', 'FileNotFoundError']"), output
    else:  # our pid namespace, but neither the listing nor our environ may be read (Landlock: no /proc at all)
        assert output.strip().endswith(f"'{os.getpid()}', 'PermissionError']"), output
        assert output.startswith("['PermissionError', ")


def test_no_socket_reaches_our_servers(repl: CodeSession, unprivileged_work: Path) -> None:
    path = unprivileged_work / f"server-{os.getpid()}.sock"  # a unix socket any uid may write to
    with socket.socket() as listener, socket.socket(socket.AF_UNIX) as unix:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        unix.bind(str(path))
        path.chmod(0o777)
        unix.listen()
        port = listener.getsockname()[1]
        tcp = repl.execute(f"__import__('socket').create_connection(('127.0.0.1', {port}), 2)")
        local = repl.execute(f"s = __import__('socket').socket(1)\ns.connect({str(path)!r})\nprint('connected')")
        listener.setblocking(False)
        unix.setblocking(False)
        for server in (listener, unix):
            with pytest.raises(BlockingIOError):
                server.accept()
    path.unlink()
    assert tcp.failed and ("ConnectionRefusedError" in tcp.output or "OSError" in tcp.output
                           or "PermissionError" in tcp.output), tcp.output
    assert local.failed and "connected" not in local.output, local.output


def test_writes_outside_the_scratch_dir_fail_and_scratch_is_private(sandbox: Sandbox, unprivileged_work: Path) -> None:
    open_to_all = unprivileged_work / f"open-to-all-{os.getpid()}"  # any uid may write here: only the sandbox stops it
    open_to_all.mkdir(exist_ok=True)
    open_to_all.chmod(0o777)
    target = open_to_all / "planted.txt"
    with session_of(sandbox) as first, session_of(sandbox) as neighbour:
        outside = first.execute(f"__import__('io').FileIO({str(target)!r}, 'w').write(b'x')")
        usr = first.execute("__import__('io').FileIO('/usr/planted', 'w').write(b'x')")
        first.execute("__import__('io').FileIO('planted', 'w').write(b'x')")  # its scratch dir is its cwd
        scratch = first.execute("print(__import__('os').getcwd())").output.strip()
        peek = neighbour.execute(f"print(__import__('io').FileIO({scratch + '/planted'!r}).read())")
    assert outside.failed and usr.failed and not target.exists() and not Path("/usr/planted").exists()
    assert peek.failed and "b'x'" not in peek.output, peek.output  # another battle's scratch: not reachable
    if sandbox.isolation.mechanism == "landlock":
        assert not Path(scratch).exists()  # removed at teardown
    with session_of(sandbox) as second:
        assert "False" in second.execute("import pathlib; print(pathlib.Path('planted').exists())").output


def test_memory_and_output_bombs_fail_inside_the_code(repl: CodeSession) -> None:
    memory = repl.execute("x = bytearray(10 * 2**30)")
    assert memory.failed and "MemoryError" in memory.output
    printed = repl.execute("for _ in range(1024):\n    print('x' * (1 << 20))")
    assert len(printed.output) < 21_000
    assert repl.execute("print('alive')").output.endswith("alive\n")


def test_a_fork_bomb_is_capped_and_reaped(sandbox: Sandbox) -> None:
    if sandbox.isolation.mechanism == "landlock":  # as in an unprivileged container: no cgroup, RLIMIT_NPROC alone
        sandbox = Sandbox(sandbox.isolation.model_copy(update={"process_cap": "rlimit_nproc"}), sandbox.python)
    else:
        assert sandbox.isolation.process_cap == "cgroup_v1"
    with session_of(sandbox, timeout_s=3) as session:
        outcome = session.execute("f = __import__('posix').fork\nwhile True:\n    try:\n        f()\n"
                                  "    except OSError:\n        pass")
        assert outcome.failed and outcome.timed_out, outcome
        cgroup = session._cgroup  # None when the REPL, starved by its own bomb, missed its alarm and was killed
        assert cgroup is None or len(cgroup.pids()) <= 3  # bwrap, its init, the REPL: the bomb was reaped
        if session._confinement is not None:  # the REPL alone is left of its uid
            assert [p.pid for p in battle_uid.live_processes({session._confinement.lease.uid})] in ([], [session.pid])
        assert session.execute("print('alive')").output == "alive\n"


def test_a_background_process_or_thread_does_not_outlive_its_battle(sandbox: Sandbox) -> None:
    relay = Recorder()
    session = session_of(sandbox, relay)
    session.start()
    session.execute("t = __import__('threading')\ndef loop():\n    while True:\n        apis.spotify.login()\n"
                    "t.Thread(target=loop, daemon=True).start()\n"
                    "o = __import__('posix')\nif o.fork() == 0:\n    o.setsid()\n    if o.fork() == 0:\n"
                    "        while True:\n            pass\n    o._exit(0)")  # a daemon: no one's child, own session
    pid, cgroup, confinement = session.pid, session._cgroup, session._confinement
    session.close()
    assert pid is not None
    if confinement is not None:
        assert battle_uid.live_processes({confinement.lease.uid}) == [] and not confinement.lease.scratch.exists()
    else:
        assert cgroup is not None and cgroup.pids() == []
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    calls = len(relay.calls)
    time.sleep(0.5)
    assert len(relay.calls) == calls  # nothing acts after its battle


def test_forged_protocol_lines_with_a_bad_app_name_are_refused(repl: CodeSession) -> None:
    forged = json.dumps({"call": {"app": "../x", "api": "y", "arguments": {}}, "id": 1}) + "\n"
    outcome = repl.execute(f"o = __import__('posix')\nfor fd in range(3, 12):\n    try:\n"
                           f"        o.write(fd, {forged.encode()!r})\n    except OSError:\n        pass")
    assert outcome.killed is None or "protocol" in outcome.killed
    assert repl.execute("print('alive')").output.endswith("alive\n")


def test_the_same_code_escapes_without_the_sandbox(answer_file: Path) -> None:
    unsafe = Sandbox(Isolation(mechanism="unsafe_in_process"), default_python())
    with session_of(unsafe) as session:
        leaked = session.execute(reads(answer_file)[0]).output
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            port = listener.getsockname()[1]
            connected = session.execute(f"__import__('socket').create_connection(('127.0.0.1', {port}), 2)")
    assert answer_file.read_text().strip() in leaked and not connected.failed


def test_the_fallback_without_landlock_and_seccomp_lets_it_out(answer_file: Path, unprivileged_work: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The landlock fallback with only its uid and rlimits: its own uid does not keep the code from the world's
    files (world-readable) nor from our servers, so Landlock and seccomp are what the tests above see."""
    fallback = sandbox_of("landlock", unprivileged_work)
    monkeypatch.setattr(session_module, "Confinement", functools.partial(Confinement, landlock=False, seccomp=False))
    with session_of(fallback) as session, socket.socket() as listener:
        leaked = session.execute(reads(answer_file)[0]).output
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        connected = session.execute(f"__import__('socket').create_connection(('127.0.0.1', {port}), 2)")
        environ = session.execute(PROC_WALK.format(ours=os.getpid())).output
    assert answer_file.read_text().strip() in leaked and not connected.failed
    assert environ.startswith("['1', ") and MARKER not in environ  # /proc is listed; our environ: not our uid


def test_sleeping_past_the_timeout_fails_like_appworld(sandbox: Sandbox) -> None:
    with session_of(sandbox, timeout_s=1) as session:  # time.sleep is null-patched by the guard; select is not
        outcome = session.execute("__import__('select').select([], [], [], 30)")
        assert outcome.timed_out and outcome.killed is None and outcome.duration_ms < 5000
        assert outcome.output.endswith("Exception: Execution timed out after 1 seconds.")
        assert session.execute("print('alive')").output == "alive\n"


def test_a_forged_protocol_line_nested_deep_is_the_codes_fault_not_our_crash(repl: CodeSession) -> None:
    deep = ('{"call": {"app": "a", "api": "b", "arguments": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}, "
            '"id": 1}\n')
    outcome = repl.execute(f"o = __import__('posix')\nfor fd in range(3, 12):\n    try:\n"
                           f"        o.write(fd, {deep.encode()!r})\n    except OSError:\n        pass")
    assert outcome.killed is not None and "protocol" in outcome.killed and outcome.failed
    assert repl.execute("print('alive')").output.endswith("alive\n")  # a fresh REPL, as after any kill


def forge(lines: bytes, then: str = "") -> str:
    """Code writing `lines` on every pipe it holds (its protocol pipes among them), then running `then`."""
    return (f"o, st = __import__('posix'), __import__('stat')\nfor fd in range(3, 30):\n    try:\n"
            f"        if st.S_ISFIFO(o.fstat(fd).st_mode):\n            o.write(fd, {lines!r})\n"
            f"    except OSError:\n        pass\n{then}")


STALL = ("s, f = __import__('signal'), __import__('fcntl')\ns.signal(s.SIGALRM, s.SIG_IGN)\ns.alarm(0)\n"
         "for fd in range(3, 30):\n    try:\n        f.fcntl(fd, 1031, 4096)\n    except OSError:\n        pass\n")
"""The code turns its alarm off and shrinks its pipes to one page (F_SETPIPE_SZ = 1031)."""


class BigAnswers(Recorder):
    """Answers every call with a 1 MiB body: more than a shrunk pipe holds."""

    def __call__(self, call: ApiCall) -> ApiAnswer:
        self.calls.append(call)
        return ApiAnswer(status_code=200, body="x" * (1 << 20))


def ready(session: CodeSession) -> CodeSession:
    """`session` with its REPL started and ready (a fresh one imports for seconds on a loaded machine: not within
    a short execution timeout)."""
    if session.pid is None:
        session.start()
    session.wait_ready()
    return session


def bounded_execute(session: CodeSession, code: str, wait_s: float = 90.0) -> tuple[float, object]:
    """`session.execute(code)` in a thread: (seconds it took, its outcome); if it hangs past `wait_s` the session is
    closed under it (so an old gateway's hang shows as a failed assertion, not a stuck test run)."""
    box: list[object] = []
    started = time.monotonic()
    thread = threading.Thread(target=lambda: box.append(session.execute(code)), daemon=True)
    thread.start()
    thread.join(wait_s)
    took = time.monotonic() - started
    if thread.is_alive():
        session.close()
        thread.join(30)
    return took, box[0] if box else None


@pytest.mark.parametrize("forged_id", ["1", '"' + "9" * 300_000 + '"'], ids=["small_id", "huge_id"])
def test_code_that_never_reads_its_reply_is_ended_and_charged_never_a_hang(sandbox: Sandbox, forged_id: str) -> None:
    """A forged call, a shrunk reply pipe, the alarm off, and no read: our write to it is bounded too (issue 39 #1)."""
    call = b'{"call": {"app": "spotify", "api": "login", "arguments": {}}, "id": ' + forged_id.encode() + b"}\n"
    relay = BigAnswers()
    with session_of(sandbox, relay, timeout_s=2) as session:
        session.wait_ready()
        took, outcome = bounded_execute(session, STALL + forge(call, "__import__('select').select([], [], [], 600)"))
        assert isinstance(outcome, ExecutionOutcome), f"execute hung for {took:.0f} s (our write to the REPL blocked)"
        assert outcome.failed and outcome.killed and outcome.output.startswith("Execution failed. Traceback:")
        assert "battle ended" not in outcome.killed and "sandbox was ended" in outcome.output, outcome.output
        assert took < 60, took
        assert len(relay.calls) == (1 if forged_id == "1" else 0)  # a forged id is refused before it is relayed
        assert ready(session).execute("print('alive')").output == "alive\n"  # a fresh REPL


def test_a_forged_output_with_a_lone_surrogate_is_made_encodable(repl: CodeSession) -> None:
    """Whatever the code writes becomes text we can send on (issue 39 #2): a lone surrogate is replaced."""
    outcome = ready(repl).execute(forge(b'{"output": "\\ud800 forged", "counted": true}\n'))
    assert "forged" in outcome.output or outcome.killed, outcome
    outcome.output.encode("utf-8")  # raises UnicodeEncodeError on a lone surrogate
    json.dumps(outcome.model_dump(), ensure_ascii=False).encode("utf-8")
    repl.close()  # the real output line of that execution may still be in the pipe


def test_nan_arguments_raise_inside_the_code_like_appworld(repl: CodeSession) -> None:
    """NaN and Infinity are not JSON: the call is refused inside the code (as AppWorld's requester refuses it),
    not relayed, and the REPL lives on (issue 39: it was killed as 'its battle ended')."""
    relay = Recorder()
    repl.relay = relay
    outcome = ready(repl).execute("apis.spotify.login(username=float('nan'))")
    assert outcome.failed and outcome.killed is None and relay.calls == [], outcome
    assert "Out of range float values are not JSON compliant" in outcome.output, outcome.output
    forged = repl.execute(forge(b'{"call": {"app": "spotify", "api": "login", "arguments": {"x": Infinity}}, '
                                b'"id": 1}\n'))
    assert relay.calls == [] and (forged.killed is None or "battle ended" not in forged.killed), forged


REPL_OBJECT = "r = [x for x in __import__('gc').get_objects() if type(x).__name__ == 'Repl'][0]\n"
"""The child's own REPL object, which holds AppWorld's execution count and output cap: the code can reach it."""


def test_limits_the_code_lifts_inside_its_process_still_hold_outside(sandbox: Sandbox) -> None:
    """max_interactions and the output cap are counted by the session, so code that resets them gains nothing."""
    with session_of(sandbox, max_interactions=2, max_output_chars=1_000) as session:
        lifted = session.execute(REPL_OBJECT + "r.max_output_chars = 10**9\nr.max_interactions = 10**9\n"
                                 "print('x' * 100_000)")
        assert lifted.output.startswith("x" * 1_000) and len(lifted.output) < 1_100, len(lifted.output)
        assert "[output cut: 99001 more characters over the 1000-character limit]" in lifted.output
        assert session.execute(REPL_OBJECT + "r.num_interactions = -10**6").output == "Execution successful."
        over = session.execute("print('a third execution')")
    assert over.output == ('Execution failed. Traceback:\n  File "<python-input>", line 1, in <module>\n'
                           '    raise Exception(f"Maximum number of executions (2) reached.")\n'
                           'Exception: Maximum number of executions (2) reached.'), over.output
