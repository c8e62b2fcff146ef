"""Hostile agent code against the real sandbox: each attempt is contained, the agent's own fault, leaves nothing.

The code evades AppWorld's safety guard on purpose (`__import__` of a module the guard forbids by name,
or an API it does not patch): the guard is not the sandbox, so these tests are what the sandbox must
stop. `test_the_same_code_escapes_without_the_sandbox` runs two of them with `--unsafe-code-in-process`
and sees them succeed, so each check here is one that can fail.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernel.world_data import WorldData
from mcp_gateway.code.sandbox import Isolation, SandboxLimits, default_python, require_isolation
from mcp_gateway.code.session import ApiAnswer, ApiCall, CodeSession

pytestmark = pytest.mark.e2e
MARKER = "AW_HOSTILE_MARKER_5d1f"


class Recorder:
    """Relay stand-in (the gateway's contract: one answer per relayed call); keeps what it was asked."""

    def __init__(self) -> None:
        self.calls: list[ApiCall] = []

    def __call__(self, call: ApiCall) -> ApiAnswer:
        self.calls.append(call)
        return ApiAnswer(status_code=200, body={"ok": True})


def session_of(isolation: Isolation, relay: Recorder | None = None, **limits: int) -> CodeSession:
    return CodeSession(python=default_python(), isolation=isolation, task_datetime="2023-05-18T12:00:00",
                       apis={"spotify": ["login"]}, relay=relay or Recorder(), limits=SandboxLimits(**limits))


@pytest.fixture(scope="module")
def isolation() -> Isolation:
    return require_isolation(default_python())


@pytest.fixture(scope="module")
def answer_file(appworld_root: Path) -> Path:
    world = WorldData(appworld_root)
    task_id = world.split("dev")[0]
    path = appworld_root / "data" / "tasks" / task_id / "ground_truth" / "answer.json"
    assert path.is_file()
    return path


@pytest.fixture(scope="module")
def repl(isolation: Isolation) -> Iterator[CodeSession]:
    os.environ[MARKER] = "secret-of-the-green"
    try:
        with session_of(isolation, timeout_s=5) as session:
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
    assert "No such file" in outcome.output or outcome.output.strip() in ("None", "0")


def test_no_process_or_environment_of_ours_is_visible(repl: CodeSession) -> None:
    code = ("p = __import__('pathlib')\nseen = []\nfor d in __import__('posix').listdir('/proc'):\n"
            "    if d.isdigit():\n        seen.append(d)\n"
            "        try:\n            seen.append(__import__('io').FileIO(f'/proc/{d}/environ').read().decode())\n"
            "        except Exception as e:\n            seen.append(type(e).__name__)\n"
            f"print(seen, p.Path('/proc/{os.getpid()}/environ').exists())")
    output = repl.execute(code).output
    assert MARKER not in output and "secret-of-the-green" not in output
    assert output.startswith("['1', ") and output.rstrip().endswith("False"), output  # its own pid namespace


def test_no_socket_reaches_our_servers(repl: CodeSession) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        outcome = repl.execute(f"__import__('socket').create_connection(('127.0.0.1', {port}), 2)")
    assert outcome.failed and ("ConnectionRefusedError" in outcome.output or "OSError" in outcome.output)


def test_writes_outside_the_scratch_dir_fail_and_scratch_is_private(isolation: Isolation, tmp_path: Path) -> None:
    target = tmp_path / "planted.txt"
    with session_of(isolation) as first:
        outside = first.execute(f"__import__('io').FileIO({str(target)!r}, 'w').write(b'x')")
        usr = first.execute("__import__('io').FileIO('/usr/planted', 'w').write(b'x')")
        first.execute("__import__('io').FileIO('/scratch/planted', 'w').write(b'x')")
    assert outside.failed and usr.failed and not target.exists() and not Path("/usr/planted").exists()
    with session_of(isolation) as second:
        assert "False" in second.execute("import pathlib; print(pathlib.Path('/scratch/planted').exists())").output


def test_memory_and_output_bombs_fail_inside_the_code(repl: CodeSession) -> None:
    memory = repl.execute("x = bytearray(10 * 2**30)")
    assert memory.failed and "MemoryError" in memory.output
    printed = repl.execute("for _ in range(1024):\n    print('x' * (1 << 20))")
    assert len(printed.output) < 21_000
    assert repl.execute("print('alive')").output.endswith("alive\n")


def test_a_fork_bomb_is_capped_and_reaped(isolation: Isolation) -> None:
    assert isolation.process_cap == "cgroup_v1"
    with session_of(isolation, timeout_s=3) as session:
        outcome = session.execute("f = __import__('posix').fork\nwhile True:\n    try:\n        f()\n"
                                  "    except OSError:\n        pass")
        assert outcome.failed and outcome.timed_out, outcome
        cgroup = session._cgroup  # None when the REPL, starved by its own bomb, missed its alarm and was killed
        assert cgroup is None or len(cgroup.pids()) <= 3  # bwrap, its init, the REPL: the bomb was reaped
        assert session.execute("print('alive')").output == "alive\n"


def test_a_background_process_or_thread_does_not_outlive_its_battle(isolation: Isolation) -> None:
    relay = Recorder()
    session = session_of(isolation, relay)
    session.start()
    session.execute("t = __import__('threading')\ndef loop():\n    while True:\n        apis.spotify.login()\n"
                    "t.Thread(target=loop, daemon=True).start()\n"
                    "if __import__('posix').fork() == 0:\n    while True:\n        pass")
    pid, cgroup = session.pid, session._cgroup
    session.close()
    assert pid is not None and cgroup is not None and cgroup.pids() == []
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
    unsafe = Isolation(mechanism="unsafe_in_process")
    with session_of(unsafe) as session:
        leaked = session.execute(reads(answer_file)[0]).output
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            port = listener.getsockname()[1]
            connected = session.execute(f"__import__('socket').create_connection(('127.0.0.1', {port}), 2)")
    assert answer_file.read_text().strip() in leaked and not connected.failed


def test_sleeping_past_the_timeout_fails_like_appworld(isolation: Isolation) -> None:
    with session_of(isolation, timeout_s=1) as session:  # time.sleep is null-patched by the guard; select is not
        outcome = session.execute("__import__('select').select([], [], [], 30)")
        assert outcome.timed_out and outcome.killed is None and outcome.duration_ms < 5000
        assert outcome.output.endswith("Exception: Execution timed out after 1 seconds.")
        assert session.execute("print('alive')").output == "alive\n"
