"""Code mode's REPL at its edges, with real sandboxes (both mechanisms): who is charged when it dies, and when.

- A REPL lives as long as its battle wherever it was started from: bubblewrap's `--die-with-parent` follows
  the *thread* that forked it, and the gateway's worker threads come and go (anyio prunes idle ones after
  10 s; each `asyncio.run` ends its own), so a REPL forked from one was SIGKILLed under a running battle and
  every later execution "died at once" (`session._SPAWNER`).
- The clock starts when the REPL is ready: its start-up is never taken from the execution's time.
- A kill is charged as a limit only with evidence of the limit it hit (the timeout measured after ready, SIGXCPU,
  SIGXFSZ, the cgroup's memory or pids events), and the message names it. Without evidence: a REPL that had
  run none of the agent's code died on our side (`fault`: the battle is not scored), and so did one that never
  became ready; a REPL in which the agent's code ran may have been ended by that code (`os._exit`, `os.kill`),
  so its death is the agent's, said plainly (never a retry on a fresh world for a losing agent).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from sandbox_support import MECHANISMS, Sandbox, sandbox_of, unprivileged_work  # noqa: F401 - a fixture

from green_agent.models.result import EvaluationRecord
from green_agent.steps.judge import judge
from green_agent.trajectory.code_metrics import code_metrics, read_executions, sandbox_fault
from kernel.execution_record import executions_log_path
from mcp_gateway.code import session as session_module
from mcp_gateway.code_mode import CodeRunner
from mcp_gateway.models import BattleState
from mcp_gateway.code.death import Death, death_of
from mcp_gateway.code.sandbox import SandboxLimits
from mcp_gateway.code.session import ApiAnswer, ApiCall, CodeSession, ExecutionOutcome

pytestmark = pytest.mark.e2e
BLOCKS_THE_ALARM = ("signal = __import__('sig' + 'nal')\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
                    "while True:\n    pass")


def no_calls(call: ApiCall) -> ApiAnswer:
    raise AssertionError(f"no API call expected: {call}")


@pytest.fixture(scope="module", params=MECHANISMS)
def sandbox(request: pytest.FixtureRequest, unprivileged_work: Path) -> Sandbox:  # noqa: F811
    return sandbox_of(request.param, unprivileged_work)


def on_a_passing_thread(session: CodeSession, code: str) -> ExecutionOutcome:
    """`session.execute(code)` on a thread that ends right after (as each `asyncio.run`'s workers do)."""
    outcome: list[ExecutionOutcome] = []
    thread = threading.Thread(target=lambda: outcome.append(session.execute(code)))
    thread.start()
    thread.join()
    return outcome[0]


def wait_until_dead(pid: int, within_s: float = 30.0) -> None:
    """Until the process `pid` (a child of ours, so a zombie until reaped) has died."""
    stat = Path(f"/proc/{pid}/stat")
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                return
        except (FileNotFoundError, IndexError):
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} still alive after {within_s} s")


def test_a_repl_outlives_the_thread_that_started_it(sandbox: Sandbox) -> None:
    with sandbox.session(no_calls, timeout_s=5) as session:
        starter = threading.Thread(target=lambda: (session.start(), session.wait_ready()))
        starter.start()
        starter.join()
        outcome = session.execute("print('alive')")
        assert outcome.output == "alive\n", outcome.output
        assert outcome.killed is None and outcome.fault is None


def test_after_a_killed_execution_the_next_ones_run(sandbox: Sandbox) -> None:
    """The issue's sequence: an execution killed at its timeout, then `print(1)`, each on its own passing thread."""
    with sandbox.session(no_calls, timeout_s=1) as session:
        first = on_a_passing_thread(session, BLOCKS_THE_ALARM)
        assert first.timed_out and first.killed and "timed out" in first.killed
        for _ in range(3):
            outcome = on_a_passing_thread(session, "print(1)")
            assert outcome.output == "1\n", outcome.output
            assert outcome.killed is None and outcome.fault is None


def test_the_clock_starts_when_the_repl_is_ready(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """No grace, a 1 s timeout, a fresh REPL (its imports take longer than that): `x = 20` still runs."""
    monkeypatch.setattr(session_module, "GRACE_S", 0.0)
    with sandbox.session(no_calls, timeout_s=1) as session:
        outcome = session.execute("x = 20")
        assert outcome.output == "Execution successful.", outcome.output
        assert session.ready_s is not None and outcome.duration_ms < session.ready_s * 1000 + 1000


def test_a_repl_that_is_never_ready_is_our_fault(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_module, "READY_TIMEOUT_S", 0.01)
    with sandbox.session(no_calls, timeout_s=5) as session:
        outcome = session.execute("print(1)")
        assert outcome.fault and "did not become ready" in outcome.fault
        assert outcome.killed is None and not outcome.timed_out and not outcome.counted
        assert "referee's side" in outcome.output and "not your code's fault" in outcome.output


def test_a_repl_killed_before_running_any_code_is_ours(sandbox: Sandbox) -> None:
    """A fresh REPL SIGKILLed from outside (as bubblewrap's die-with-parent did) before any code of the agent ran."""
    with sandbox.session(no_calls, timeout_s=60) as session:
        session.start()
        session.wait_ready()
        pid = session.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        wait_until_dead(pid)
        outcome = session.execute("print(1)")
        assert outcome.fault and "before running any of the agent's code" in outcome.fault, outcome
        assert outcome.killed is None and "referee's side" in outcome.output
        assert session.execute("print('fresh')").output == "fresh\n"


@pytest.mark.parametrize("ending", ["__import__('posix')._exit(3)", "p = __import__('posix')\np.kill(p.getpid(), 9)",
                                    "__import__('_thread').start_new_thread(lambda: (__import__('select').select([], [], [], 0.5), "
                                    "__import__('posix')._exit(255)), ())"])
def test_a_repl_the_agents_code_ended_is_the_agents(sandbox: Sandbox, ending: str) -> None:
    """Code that ends its own process (at once, by signal, or later from a thread, with bubblewrap's own status)
    shows no sandbox limit, yet it is the agent's doing: charging us would retry a losing agent on a fresh world.
    `posix` is `os` beneath the safety guard's patches (the guard is no boundary)."""
    with sandbox.session(no_calls, timeout_s=60) as session:
        outcome = session.execute(ending)
        if not outcome.killed:  # the timer's exit comes after this execution: the next one finds the REPL dead
            time.sleep(2)
            outcome = session.execute("print(1)")
        assert outcome.killed and "after running the agent's code" in outcome.killed, outcome
        assert outcome.fault is None and outcome.failed and "no sign of a sandbox limit" in outcome.output
        assert session.execute("print('fresh')").output == "fresh\n"


def test_a_cpu_limit_kill_is_the_agents_and_named(sandbox: Sandbox) -> None:
    with sandbox.session(no_calls, timeout_s=600, cpu_s=8) as session:
        outcome = session.execute("while True:\n    pass")
        assert outcome.killed and "CPU time" in outcome.killed and "8 CPU seconds" in outcome.killed, outcome
        assert outcome.fault is None and outcome.failed and "CPU time" in outcome.output


def test_bubblewraps_own_failure_is_ours(unprivileged_work: Path,  # noqa: F811
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """bubblewrap that cannot set the sandbox up (a path to bind is missing) fails before any code ran: ours."""
    bubblewrap = sandbox_of("bubblewrap", unprivileged_work)
    monkeypatch.setattr(session_module, "python_prefixes", lambda python: [Path("/nonexistent-prefix-of-the-test")])
    with bubblewrap.session(no_calls, timeout_s=5) as session:
        outcome = session.execute("print(1)")
        assert outcome.fault and "did not become ready" in outcome.fault, outcome
        assert outcome.killed is None and "referee's side" in outcome.output


def test_a_sandbox_gone_before_its_init_is_written_is_ours_at_its_first_execution(
        unprivileged_work: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The race a loaded machine runs: bubblewrap fails its set-up and exits before the gateway writes the REPL's
    init. Starting the session must not raise (the battle's set-up would fail on a broken pipe); its first
    execution says, as ours, that the sandbox did not become ready and why (it used to raise ChildFault out of
    `start`)."""
    bubblewrap = sandbox_of("bubblewrap", unprivileged_work)
    monkeypatch.setattr(session_module, "python_prefixes", lambda python: [Path("/nonexistent-prefix-of-the-test")])
    popen = subprocess.Popen

    def exited_before_returning(*args: object, **kwargs: object) -> subprocess.Popen:
        process = popen(*args, **kwargs)  # type: ignore[call-overload]
        process.wait(timeout=30)  # the child is gone before `start` writes its init
        return process

    monkeypatch.setattr(subprocess, "Popen", exited_before_returning)
    with bubblewrap.session(no_calls, timeout_s=5) as session:
        outcome = session.execute("print(1)")
    assert outcome.fault and "did not become ready" in outcome.fault and "status 1" in outcome.fault, outcome
    assert outcome.killed is None and not outcome.counted and "referee's side" in outcome.output


def test_the_evidence_names_the_limit() -> None:
    """`death_of` over exit statuses: bubblewrap's own 255 is no signal (it was said "killed by 127", the agent's)."""
    limits = SandboxLimits(cpu_s=30, file_bytes=1000)
    assert death_of(128 + signal.SIGXFSZ, bubblewrap=True, limits=limits) == Death(
        "it wrote a file over the size limit (1000 bytes) and was killed", True)
    assert death_of(-signal.SIGKILL, bubblewrap=False, limits=limits, cpu_used_s=29.8).agents
    assert not death_of(-signal.SIGKILL, bubblewrap=False, limits=limits, cpu_used_s=3.0).agents
    assert not death_of(137, bubblewrap=True, limits=limits).agents
    assert death_of(-signal.SIGSYS, bubblewrap=False, limits=limits).agents
    assert not death_of(1, bubblewrap=False, limits=limits).agents
    assert death_of(1, bubblewrap=False, limits=limits, ran_code=True).agents  # the code can os._exit(1)
    assert death_of(137, bubblewrap=True, limits=limits, ran_code=True).agents
    assert death_of(255, bubblewrap=True, limits=limits, ran_code=True).agents  # its os._exit(255) too
    assert death_of(255, bubblewrap=True, limits=limits) == Death(
        "bubblewrap itself failed (exit status 255): the sandbox broke on the referee's side", False)


def test_cgroup_counters_are_evidence(tmp_path: Path) -> None:
    """The cgroup v1 counters (files standing in for the kernel's, in its format) are the evidence."""
    pids, memory = tmp_path / "pids", tmp_path / "memory"
    pids.mkdir()
    memory.mkdir()
    (memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    (pids / "pids.events").write_text("max 0\n")
    limits = SandboxLimits()
    assert not death_of(137, bubblewrap=True, limits=limits, cgroup_dirs=[pids, memory]).agents
    (memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    assert "memory limit" in death_of(137, bubblewrap=True, limits=limits, cgroup_dirs=[pids, memory]).reason
    (memory / "memory.oom_control").write_text("oom_kill 0\n")
    (pids / "pids.events").write_text("max 3\n")
    found = death_of(-9, bubblewrap=False, limits=limits, cgroup_dirs=[pids, memory])
    assert found.agents and "process limit (64" in found.reason


def test_a_sandbox_fault_makes_the_battle_an_infra_error(sandbox: Sandbox, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Gateway -> engine -> outcome: the REPL that never becomes ready is logged with its `fault`, the battle's code
    metrics count it, and the judge makes the battle an infra_error (retried), never the agent's loss."""
    monkeypatch.setattr(session_module, "READY_TIMEOUT_S", 0.01)
    runner = CodeRunner({}, tmp_path / "calls.jsonl", sandbox.python, sandbox=sandbox.isolation.mechanism, spares=0)
    battle = BattleState(battle_id="b-fault", token="t" * 40, task_id="t1", interaction="code",
                         task_datetime="2023-05-18T12:00:00", set_at=datetime.now(timezone.utc))
    try:
        runner.start(battle)
        outcome = runner.execute(battle, "print(1)", no_calls)
    finally:
        runner.shutdown()
    assert outcome is not None and outcome.fault
    metrics = code_metrics(read_executions(executions_log_path(tmp_path / "calls.jsonl"), "b-fault"))
    assert metrics.sandbox_faults == 1 and metrics.killed == 0
    fault = sandbox_fault(metrics)
    assert fault and "did not become ready" in fault
    verdict = judge(EvaluationRecord(success=False, num_tests=2), completed=False, upstream_fault=fault)
    assert verdict.outcome == "infra_error" and verdict.winner is None
