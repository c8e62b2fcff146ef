"""Each agent's launch output in a log file that outlives its tmux window, and naming the agent that failed.

`ScenarioManager` starts every agent as `bash -c "cd <dir> && agentbeats run ..."` in a tmux
window; when the agent exits, the window closes and its output is gone. `attach(manager, dir)`
makes each agent's command also write its output to `<dir>/<agent>.log` (through `tee`, so the
window still shows it), truncated at every launch, and append `EXIT_MARK <status>` when the
command ends. That line, not the window, tells that a launcher exited: the SDK's launcher starts
its agent before it binds its own port, so a launcher that fails leaves an orphan agent behind
that keeps the pipe (and the window) open. `failed_launch(...)` builds the error that names the
agents not up in time, says whether they exited, and quotes the tail of each one's log (secrets
scrubbed).

Contract: the manager's agents have `name` and `get_command()`; the log directory is the Green
operator's (mode 0700); nothing here is posted to the backend.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

from kernel.errors import InfrastructureError
from kernel.scrubber import scrub

TAIL_LINES = 15
EXIT_MARK = "[appworld-green] the launch command exited with status"
MAX_TAIL_CHARS = 3000
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class AgentLaunchError(InfrastructureError):
    """An agent of the scenario did not come up (exit code 3); the message quotes its launch log."""


def log_path(log_dir: Path, agent_name: str) -> Path:
    return Path(log_dir) / f"{_UNSAFE.sub('_', agent_name).strip('_') or 'agent'}.log"


def attach(manager: Any, log_dir: Path) -> dict[str, Path]:
    """Make every agent's launch command append its output to its own log; return name -> log path."""
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    paths: dict[str, Path] = {}
    for agent in manager.agents:
        path = log_path(log_dir, agent.name)
        path.write_text("")
        path.chmod(0o600)
        original = agent.get_command
        agent.get_command = _teeing(original, path)
        paths[agent.name] = path
    return paths


def _teeing(original: Any, path: Path) -> Any:
    log = shlex.quote(str(path))

    def get_command() -> str:  # run by the manager with `bash -c` (process substitution is bash)
        return f'{original()} > >(tee -a {log}) 2>&1; status=$?; sleep 0.5; echo "{EXIT_MARK} $status" >> {log}'
    return get_command


def tail(path: Path, lines: int = TAIL_LINES) -> str:
    """The last `lines` lines of a log (secrets scrubbed), or a note if there is none."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return "(no launch log)"
    last = "\n".join(text.rstrip().splitlines()[-lines:])[-MAX_TAIL_CHARS:]
    return scrub(last) if last else "(the launch log is empty)"


def live_windows(session: str) -> set[str] | None:
    """Names of the tmux session's windows; None if the session does not exist (every agent exited)."""
    done = subprocess.run(["tmux", "list-windows", "-t", session, "-F", "#{window_name}"], capture_output=True,
                          text=True, check=False)
    return set(done.stdout.splitlines()) if done.returncode == 0 else None


def exited(agent_names: set[str], session: str | None, logs: dict[str, Path]) -> set[str]:
    """The agents whose launch command ended (its log says so, or its tmux window is gone)."""
    gone = {name for name in agent_names if name in logs and _has_exit_mark(logs[name])}
    if session is not None and agent_names - gone:
        windows = live_windows(session)
        gone |= set(agent_names) if windows is None else {name for name in agent_names if name not in windows}
    return gone


def _has_exit_mark(path: Path) -> bool:
    try:
        with Path(path).open("rb") as handle:
            handle.seek(max(0, Path(path).stat().st_size - 4096))
            return EXIT_MARK.encode() in handle.read()
    except OSError:
        return False


def failed_launch(not_up: list[str], logs: dict[str, Path], waited_s: float, gone: set[str],
                  session: str | None) -> AgentLaunchError:
    """The error naming each agent that did not come up, with the tail of its launch log."""
    parts = []
    for name in not_up:
        how = "exited (its launch command ended)" if name in gone else f"not answering after {waited_s:.0f} s"
        log = logs.get(name)
        where = f"; launch log {log}" if log else ""
        parts.append(f"agent {name!r} {how}{where}\n{tail(log) if log else ''}".rstrip())
    hint = f" (tmux attach -t {session})" if session and len(gone) < len(not_up) else ""
    return AgentLaunchError(f"{len(not_up)} agent(s) did not come up{hint}:\n" + "\n\n".join(parts))
