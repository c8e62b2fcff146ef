"""The battle sessions of this Green process, keyed by battle id.

The launcher restarts the Green before every battle, so a process normally holds one session;
the registry still keys by id so a stale or invented id is refused with a clear message. The
model's tools are bound to the model's own battle, the latest battle_start of this process
(`get_session`): any other id, an earlier battle's included, is refused.
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
    """The session of the current battle (the latest battle_start); `battle_id` must be '' or its id.

    Raises BadInputError for a non-string id, for no battle yet, and for any other battle's id (an
    earlier battle's too: the model's tools are bound to its own battle)."""
    if not isinstance(battle_id, str):
        raise BadInputError(f"battle_id must be a string (the battle_start's battle_id), not {type(battle_id).__name__}")
    with _LOCK:
        current = _ORDER[-1] if _ORDER else ""
        key = battle_id.strip() or current
        if key and key == current:
            return _SESSIONS[key]
    if not current:
        raise BadInputError("no battle has started in this Green yet: wait for the battle_start message")
    raise BadInputError(f"battle {battle_id[:80]!r} is not this Green's battle ({current}); pass the battle_id of "
                        "the battle_start message, or \"\"")


def clear() -> None:
    """Forget every session (tests)."""
    with _LOCK:
        _SESSIONS.clear()
        _ORDER.clear()
