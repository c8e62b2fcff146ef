"""The Blue Agents (agents under test) of the AppWorld scenario.

- `reference`: offline, replays a task's reference solution through the gateway's MCP tools.
- `noop`: accepts the task and ends it at once (`supervisor__complete_task`), doing no work.
- the LLM Blue: `blue_agent_card.toml` + `tools.py`, run by `agentbeats run_agent`.

Shared parts: `task_message` (parsing the Green's A2A message), `gateway_client` (one MCP
session to the gateway, usable from sync code), `apis_shim` (AppWorld's `apis.<app>.<api>()`
over MCP tools), `a2a_server` (A2A server wiring).
"""
