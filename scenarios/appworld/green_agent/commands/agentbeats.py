"""`appworld-green agentbeats {backend,run-scenario}`: the AgentBeats path from the shell.

- `backend`: the wheel's backend + MCP server with the database under `--data-dir` (D2, D6, D12).
- `run-scenario DIR`: what `agentbeats run_scenario DIR` does (launch in tmux, register, start the
  battle), but it waits for the agents instead of sleeping 10 s (an agent that does not come up is
  named, with the tail of its launch log `<runs>/agentbeats-launch/<session>/<agent>.log`, exit 3),
  then (unless `--no-wait`) waits for the battle's end and prints the winner; `--stop` kills the
  scenario's tmux session afterwards; `--no-battle` only launches the agents.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from green_agent.agentbeats import harness
from kernel.settings import DEFAULT_BACKEND_MCP_PORT, Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("agentbeats", help="AgentBeats: run the backend, run a scenario and wait for it")
    sub = parser.add_subparsers(dest="agentbeats_command", metavar="ACTION", required=True)
    backend = sub.add_parser("backend", help="run the AgentBeats backend + MCP server with an isolated database")
    backend.add_argument("--host", default="127.0.0.1")
    backend.add_argument("--port", type=int, default=9002, help="REST port (default 9002)")
    backend.add_argument("--mcp-port", type=int, default=DEFAULT_BACKEND_MCP_PORT, help="MCP port (default 9001)")
    backend.add_argument("--data-dir", type=Path, help="database directory (default <runs>/agentbeats-backend)")
    backend.set_defaults(func=run_backend)
    scenario = sub.add_parser("run-scenario", help="launch a scenario, start its battle, wait for the winner")
    scenario.add_argument("scenario_dir", type=Path, help="directory holding scenario.toml")
    scenario.add_argument("--backend", help="backend URL (default AGENTBEATS_BACKEND_URL, http://localhost:9002)")
    scenario.add_argument("--frontend", default=harness.DEFAULT_FRONTEND, help="web UI URL (for the printed link)")
    scenario.add_argument("--launch-mode", default="tmux", choices=["tmux", "separate", "current"])
    scenario.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for the battle's end")
    scenario.add_argument("--ready-timeout", type=float, default=harness.READY_TIMEOUT_S,
                          help="seconds to wait for every agent to answer (default %(default).0f)")
    scenario.add_argument("--no-wait", action="store_true", help="return once the battle is created")
    scenario.add_argument("--no-battle", action="store_true", help="only launch the agents (like load_scenario)")
    scenario.add_argument("--stop", action="store_true", help="kill the scenario's tmux session at the end")
    scenario.add_argument("--json", action="store_true", help="print the battle record as JSON")
    scenario.set_defaults(func=run_scenario)


def run_backend(args: argparse.Namespace, settings: Settings) -> int:
    from green_agent.agentbeats import backend

    data_dir = args.data_dir or settings.runs_dir / "agentbeats-backend"
    return backend.main(["--host", args.host, "--port", str(args.port), "--mcp-port", str(args.mcp_port),
                         "--data-dir", str(data_dir)])


def launch_log_dir(manager: object, settings: Settings) -> Path:
    """`<runs>/agentbeats-launch/<tmux session>/`: one launch log per agent, kept after its window closes."""
    return settings.runs_dir / "agentbeats-launch" / harness.session_name(manager)


def run_scenario(args: argparse.Namespace, settings: Settings) -> int:
    backend_url = (args.backend or settings.agentbeats_backend_url).rstrip("/")
    manager = harness.load_manager(args.scenario_dir)
    try:
        harness.launch(manager, args.launch_mode, args.ready_timeout, log_dir=launch_log_dir(manager, settings))
        if args.no_battle:
            print(f"agents up (tmux session {harness.session_name(manager)})", flush=True)
            return 0
        battle_id = harness.start_battle(manager, backend_url, args.frontend)
        print(f"battle {battle_id} started (its page's URL is the SDK's \"Battle URL\" line above)", flush=True)
        if args.no_wait:
            return 0
        record = harness.wait_battle(backend_url, battle_id, args.timeout)
    finally:
        if args.stop:
            harness.stop_tmux(manager)
    if args.json:
        print(json.dumps(record, indent=2, default=str))
    else:
        result = record.get("result") or {}
        print(f"battle {battle_id}: {record.get('state')}, winner {result.get('winner', 'none')}"
              + (f" ({record['error']})" if record.get("error") else ""))
    return 0 if record.get("state") == "finished" else 3
