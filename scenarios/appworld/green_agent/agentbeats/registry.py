"""The battle sessions of this Green process, keyed by battle id.

The launcher restarts the Green before every battle, so a process normally holds one session;
the registry still keys by id so a stale or invented id is refused with a clear message.
"""

from __future__ import annotations

import threading
from pathlib import Path

from green_agent.agentbeats import outbound
from green_agent.agentbeats.battle_start import BattleStart
from green_agent.agentbeats.reporter import BackendReporter
from green_agent.agentbeats.scenario_config import ResolvedConfig, find_scenario_file, load_scenario_config, resolve
from green_agent.agentbeats.session import BattleSession
from kernel.errors import BadInputError
from kernel.settings import REPO_ROOT, Settings, load_settings

_SESSIONS: dict[str, BattleSession] = {}
_ORDER: list[str] = []
_LOCK = threading.Lock()


def open_session(start: BattleStart, settings: Settings | None = None, scenario_file: Path | None = None,
                 reporter: BackendReporter | None = None) -> BattleSession:
    """The session of `start.battle_id`, created on first use (a repeated battle_start reuses it)."""
    with _LOCK:
        if start.battle_id in _SESSIONS:
            return _SESSIONS[start.battle_id]
        settings = settings or load_settings(env_file=REPO_ROOT / ".env")
        config = load_scenario_config(scenario_file or find_scenario_file())
        resolved = resolve(config, settings, start.task_config, blue=start.blue.name)
        register_local_roots(settings, resolved)
        # The Blue's name is its registration alias, as the battle page names it (log entries, markdown, result).
        session = BattleSession(start.battle_id, resolved, blue_url=start.blue.agent_url,
                                reporter=reporter or BackendReporter(start.battle_id, start.backend_url),
                                settings=settings)
        _SESSIONS[start.battle_id] = session
        _ORDER.append(start.battle_id)
        return session


def register_local_roots(settings: Settings, resolved: ResolvedConfig) -> None:
    """Local directories whose paths are published relative (`outbound`): runs, world, repository, logs."""
    outbound.register_default_roots()
    outbound.register_local_root(REPO_ROOT, "repo")
    outbound.register_local_root(settings.appworld_root, "appworld_root")
    outbound.register_local_root(resolved.call_log_path.parent, "call_log_dir")
    outbound.register_local_root(resolved.runs_dir, "runs")


def get_session(battle_id: str = "") -> BattleSession:
    """The session of `battle_id` ('' = the latest). Raises BadInputError naming the known ids."""
    with _LOCK:
        key = (battle_id or "").strip() or (_ORDER[-1] if _ORDER else "")
        if key in _SESSIONS:
            return _SESSIONS[key]
        known = ", ".join(_ORDER[-3:]) or "none"
    raise BadInputError(f"no battle {battle_id[:80]!r} in this Green (known: {known}); pass the battle_id of the "
                        "battle_start message")


def clear() -> None:
    """Forget every session (tests)."""
    with _LOCK:
        _SESSIONS.clear()
        _ORDER.clear()
