"""Drive a scenario the way `agentbeats run_scenario` does, then wait for the battle's end.

`run_scenario` (fixed by the compatibility layer, D1) is `load_scenario` + a blind 10 s sleep +
`start_battle`. `run_scenario()` here does the same with `ScenarioManager` from the wheel, but waits
until every launcher and agent answers instead of sleeping, and can wait for the battle's end by
polling `GET /battles/{id}`. `create_battle()` starts further battles over REST with agents that
are already registered (as the web UI does). Used by `appworld-green agentbeats run-scenario` and
the end-to-end tests.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import requests

from green_agent.agentbeats import launch_log
from kernel.errors import BadInputError, InfrastructureError

READY_TIMEOUT_S = 120.0
POLL_S = 1.0
FINAL_STATES = ("finished", "error")
DEFAULT_FRONTEND = "http://localhost:5173"


def load_manager(scenario_dir: Path) -> Any:
    """The wheel's ScenarioManager for `scenario_dir` (absolute, so tmux's `cd` works from anywhere)."""
    from agentbeats.utils.deploy.scenario_manager import ScenarioManager

    root = Path(scenario_dir).resolve()
    if not (root / "scenario.toml").is_file():
        raise BadInputError(f"no scenario.toml in {root}")
    return ScenarioManager(scenario_root=root, project_dir=root)


def launch(manager: Any, mode: str = "tmux", timeout_s: float = READY_TIMEOUT_S, log_dir: Path | None = None) -> None:
    """Start services and agents (`load_scenario`), then wait until every launcher and agent answers.

    With `log_dir`, each agent's launch output also goes to `<log_dir>/<agent>.log`; an agent that
    does not come up raises `AgentLaunchError` naming it, with the tail of its log.
    """
    logs = launch_log.attach(manager, log_dir) if log_dir is not None else {}
    manager.load_scenario(mode=mode)
    wait_agents_ready(manager, timeout_s, logs, session_name(manager) if mode == "tmux" else None)


def wait_agents_ready(manager: Any, timeout_s: float = READY_TIMEOUT_S, logs: dict[str, Path] | None = None,
                      tmux_session: str | None = None) -> None:
    started = time.monotonic()
    deadline = started + timeout_s
    pending = {f"{_host(a.launcher_host)}:{a.launcher_port}/status": a.name for a in manager.agents}
    pending |= {f"{_host(a.agent_host)}:{a.agent_port}/.well-known/agent.json": a.name for a in manager.agents}
    while pending and time.monotonic() < deadline:
        gone = launch_log.exited(set(pending.values()), tmux_session, logs or {})
        if gone:  # its process ended: waiting longer cannot help
            raise launch_log.failed_launch(sorted(gone), logs or {}, time.monotonic() - started, gone, tmux_session)
        for url in list(pending):
            try:
                if requests.get(f"http://{url}", timeout=2).status_code == 200:
                    pending.pop(url)
            except requests.RequestException:
                pass
        if pending:
            time.sleep(POLL_S)
    if pending:
        not_up = sorted(set(pending.values()))
        raise launch_log.failed_launch(not_up, logs or {}, timeout_s, launch_log.exited(set(not_up), tmux_session, logs or {}),
                                       tmux_session or session_name(manager))


def start_battle(manager: Any, backend_url: str, frontend_url: str = DEFAULT_FRONTEND) -> str:
    """Register the agents and create the battle (`ScenarioManager.start_battle`); return the battle id."""
    url = manager.start_battle(backend_url.rstrip("/"), frontend_url)
    if not url:
        raise InfrastructureError(f"the backend at {backend_url} did not accept the scenario's agents or battle "
                                  "(see the output above)")
    return url.rstrip("/").rsplit("/", 1)[-1]


def agents_by_alias(backend_url: str) -> dict[str, dict[str, Any]]:
    """Registered agents by alias (the latest registration wins)."""
    response = requests.get(f"{backend_url.rstrip('/')}/agents", timeout=10)
    response.raise_for_status()
    agents = sorted(response.json(), key=lambda a: a.get("created_at") or "")
    return {a["register_info"]["alias"]: a for a in agents}


def create_battle(backend_url: str, green_id: str, opponents: list[dict[str, str]]) -> str:
    """`POST /battles` (as the web UI does); return the battle id."""
    response = requests.post(f"{backend_url.rstrip('/')}/battles",
                             json={"green_agent_id": green_id, "opponents": opponents, "config": {}}, timeout=30)
    if response.status_code != 201:
        raise InfrastructureError(f"POST /battles answered {response.status_code}: {response.text[:300]}")
    return response.json()["battle_id"]


def wait_battle(backend_url: str, battle_id: str, timeout_s: float) -> dict[str, Any]:
    """Poll `GET /battles/{id}` until it is finished or in error; return the record."""
    deadline = time.monotonic() + timeout_s
    record: dict[str, Any] = {}
    while time.monotonic() < deadline:
        try:
            record = requests.get(f"{backend_url.rstrip('/')}/battles/{battle_id}", timeout=10).json()
        except (requests.RequestException, ValueError):
            record = {}
        if record.get("state") in FINAL_STATES:
            return record
        time.sleep(POLL_S)
    raise InfrastructureError(f"battle {battle_id} still {record.get('state', 'unknown')!r} after {timeout_s:.0f} s")


def session_name(manager: Any) -> str:
    launch_config = manager.config.get("launch", {})
    return launch_config.get("tmux_session_name", f"agentbeats-{manager.config['scenario']['name']}")


def stop_tmux(manager: Any) -> None:
    """Kill the scenario's tmux session (its launchers and agents get SIGHUP)."""
    subprocess.run(["tmux", "kill-session", "-t", session_name(manager)], capture_output=True, check=False)


def _host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "localhost") else host
