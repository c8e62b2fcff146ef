"""Compatibility layer for four agentbeats 1.2.6 defects.

- D1: `agentbeats run_scenario` builds `ScenarioManager` without `project_dir` and crashes with a
  TypeError. Fix: `project_dir` defaults to the scenario root.
- D2: `agentbeats run_backend` looks for its MCP server script three levels above `cli.py`
  (`<venv>/lib/python3.11/src/backend/...`). Fix: a symlink from that path to the installed
  `backend` package (made by `install()`; nothing inside site-packages is edited).
- D3: `ScenarioManager` never sends `battle_timeout`, so battles end as a draw after 300 s. Fix:
  agents registered by the manager carry `battle_timeout` from their `[[agents]]` table in
  scenario.toml (any extra key listed in `REGISTRATION_KEYS` is forwarded the same way).
- D15: the backend's `/ws/battles` broadcasts go to an event loop that never runs, so the battle page
  gets only the first update. Fix: `live_updates.patch_backend_app` when `backend.app` is imported.

Mechanism: `install()` writes a `.pth` file into the virtualenv's site-packages whose one line
runs `hook.activate()` at interpreter start. `activate()` registers an import hook that patches
`agentbeats.utils.deploy.scenario_manager` and `backend.app` right after they are imported; nothing else is touched
and nothing is imported eagerly. `python -m green_agent.agentbeats_compat install` is run by the
Makefile; `status` reports whether the layer is in place.
"""
