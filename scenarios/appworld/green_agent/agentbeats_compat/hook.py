"""Import hook that patches agentbeats' ScenarioManager when it is imported (D1, D3, and a readiness
wait before registration instead of run_scenario's blind 10 s sleep), and the backend app's live
updates when `backend.app` is imported (D15, `live_updates.py`)."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

TARGET_MODULE = "agentbeats.utils.deploy.scenario_manager"
BACKEND_APP = "backend.app"
TARGETS = (TARGET_MODULE, BACKEND_APP)
AGENTS_READY_TIMEOUT_S = 180.0
"""`run_scenario` sleeps a blind 10 s before registering (then 3 tries 5 s apart); agents on a busy
machine take longer to start, so `start_battle` first waits (bounded) until every agent card answers."""
REGISTRATION_KEYS = ("battle_timeout", "avatar_url")
"""Keys of an `[[agents]]` table that are forwarded to `POST /agents` at registration (`avatar_url`: the web
UI's chip image; without one it shows the alias's first letter, the same "A" for every "AppWorld ..." agent)."""

_PATCHED_MARK = "_appworld_green_compat"


def patch_scenario_manager(module: ModuleType) -> None:
    """Apply the D1 and D3 fixes to an imported `scenario_manager` module (idempotent)."""
    if getattr(module, _PATCHED_MARK, False):
        return
    manager_cls = module.ScenarioManager
    agent_cls = module.ScenarioAgent
    original_manager_init = manager_cls.__init__
    original_agent_init = agent_cls.__init__

    def manager_init(self: Any, scenario_root: Path, project_dir: Path | None = None) -> None:
        original_manager_init(self, scenario_root=scenario_root, project_dir=project_dir or scenario_root)

    def agent_init(self: Any, config: dict, scenario_dir: Path, task_index: int | None = None) -> None:
        original_agent_init(self, config, scenario_dir, task_index)
        self.extra_registration = {key: config[key] for key in REGISTRATION_KEYS if key in config}

    manager_cls.__init__ = manager_init
    agent_cls.__init__ = agent_init
    _forward_registration_keys(module)
    _wait_before_registering(module)
    setattr(module, _PATCHED_MARK, True)


def _forward_registration_keys(module: ModuleType) -> None:
    """Make the manager's `POST /agents` include each agent's `extra_registration` keys, and reuse an agent the
    backend already holds with exactly this registration instead of adding a duplicate under a new id (upstream
    registers every agent again on each `run_scenario`; the backend has no update for `register_info`)."""
    requests_module = module.requests
    manager_cls = module.ScenarioManager
    original_register = manager_cls.register_agent_to_backend

    def register_agent_to_backend(self: Any, agent: Any, backend_url: str = "http://localhost:9000") -> str | None:
        extra = getattr(agent, "extra_registration", {})
        reused = _registered_already(requests_module, backend_url, _registration(agent, extra))
        if reused is not None:
            print(f"Reusing agent {agent.name}: the backend already has it registered as {reused}", flush=True)
            return reused
        if not extra:
            return original_register(self, agent, backend_url)
        real_post = requests_module.post

        def post_with_extra(url: str, json: dict | None = None, **kwargs: Any) -> Any:
            if url.rstrip("/").endswith("/agents") and isinstance(json, dict):
                json = {**json, **extra}
            return real_post(url, json=json, **kwargs)

        requests_module.post = post_with_extra
        try:
            return original_register(self, agent, backend_url)
        finally:
            requests_module.post = real_post

    manager_cls.register_agent_to_backend = register_agent_to_backend


def _registration(agent: Any, extra: dict[str, Any]) -> dict[str, Any]:
    """What upstream's `register_agent_to_backend` posts for `agent` (its own code builds the same dict)."""
    def url(host: str, port: int) -> str:
        return f"http://{'localhost' if host == '0.0.0.0' else host}:{port}"

    data = {"alias": agent.name, "agent_url": url(agent.agent_host, agent.agent_port),
            "launcher_url": url(agent.launcher_host, agent.launcher_port), "is_green": agent.is_green, **extra}
    if agent.task_index:
        data["task_config"] = str(agent.task_index)
    if agent.is_green and agent.participant_requirements:
        data["participant_requirements"] = agent.participant_requirements
    return data


def _registered_already(requests_module: Any, backend_url: str, wanted: dict[str, Any]) -> str | None:
    """The id of an unlocked agent registered with exactly `wanted` (the newest), or None (also when unsure)."""
    try:
        response = requests_module.get(f"{backend_url.rstrip('/')}/agents", timeout=10)
        agents = response.json() if response.status_code == 200 else []
    except Exception:
        return None
    same = [a for a in agents if isinstance(a, dict) and a.get("status") == "unlocked"
            and {k: (a.get("register_info") or {}).get(k) for k in wanted} == wanted]
    same.sort(key=lambda a: a.get("created_at") or "")
    return same[-1].get("agent_id") if same else None


def _wait_before_registering(module: ModuleType) -> None:
    """Make `start_battle` wait until every agent serves its card (or the timeout passes) first."""
    manager_cls = module.ScenarioManager
    original_start = manager_cls.start_battle

    def start_battle(self: Any, backend_url: str, frontend_url: str) -> Any:
        if not wait_for_agent_cards(module.requests, [(a.agent_host, a.agent_port) for a in self.agents],
                                    AGENTS_READY_TIMEOUT_S):
            down = [a.name for a in self.agents if not _card_answers(module.requests, a.agent_host, a.agent_port)]
            print(f"Agent(s) not up after {AGENTS_READY_TIMEOUT_S:.0f} s: {', '.join(down)}. Their output is gone "
                  "with their tmux window; `appworld-green agentbeats run-scenario DIR` keeps a launch log per agent "
                  "and names the one that failed.", flush=True)
        return original_start(self, backend_url, frontend_url)

    manager_cls.start_battle = start_battle


def wait_for_agent_cards(requests_module: Any, agents: list[tuple[str, int]], timeout_s: float,
                         poll_s: float = 1.0) -> bool:
    """Poll each agent's `/.well-known/agent.json` until all answer 200; False on timeout."""
    pending = {f"http://{'localhost' if host == '0.0.0.0' else host}:{port}/.well-known/agent.json" for host, port in agents}
    deadline = time.monotonic() + timeout_s
    announced = False
    while pending and time.monotonic() < deadline:
        for url in list(pending):
            try:
                if requests_module.get(url, timeout=2).status_code == 200:
                    pending.discard(url)
            except Exception:
                pass
        if pending:
            if not announced:
                print(f"Waiting for {len(pending)} agent(s) to start (up to {timeout_s:.0f} s)...", flush=True)
                announced = True
            time.sleep(poll_s)
    return not pending


def _card_answers(requests_module: Any, host: str, port: int) -> bool:
    try:
        url = f"http://{'localhost' if host == '0.0.0.0' else host}:{port}/.well-known/agent.json"
        return requests_module.get(url, timeout=2).status_code == 200
    except Exception:
        return False


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, wrapped: importlib.abc.Loader) -> None:
        self._wrapped = wrapped

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._wrapped.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._wrapped.exec_module(module)
        _patcher(module.__name__)(module)


def _patcher(name: str) -> Callable[[ModuleType], None]:
    if name == TARGET_MODULE:
        return patch_scenario_manager
    from green_agent.agentbeats_compat import live_updates

    return live_updates.patch_backend_app


class _PatchingFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in TARGETS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchingLoader(spec.loader)
        return spec


def activate() -> None:
    """Register the import hook (called from the `.pth` file at interpreter start)."""
    for name in TARGETS:
        if name in sys.modules:
            _patcher(name)(sys.modules[name])
    if not any(isinstance(f, _PatchingFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchingFinder())
