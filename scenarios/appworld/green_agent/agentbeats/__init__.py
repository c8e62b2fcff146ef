"""AgentBeats platform glue for the Green Agent.

- `battle_start`: the backend's battle_start message, parsed with pydantic (clear errors).
- `scenario_config`: the `[appworld]` table of scenario.toml (task, split, predictor, deadline,
  green_mode, AppWorld and gateway URLs); a battle_start `task_config` wins over it.
- `reporter`: progress events and the final result, POSTed to `/battles/{id}` of the backend.
- `outbound`: what every posted event passes first (secrets, local paths, scenario.toml fix-its).
- `result_post`: the result entry as the page shows it (markdown first, a compact detail).
- `blue_feed`: the Blue's calls from the gateway's call log, posted in batches under its name.
- `code_feed`: in code mode, the Blue's executions (code, output, calls) from the gateway's trace, under its name.
- `sdk_tool_log`: the SDK's `Calling tool` entries folded under the Green's own name.
- `markdown`: table cells for the markdown.
- `session`: the AgentBeats driver of the battle engine (one session per battle; progress posted per step).
- `registry`: the sessions of this Green process, keyed by battle_id.
- `tool_api`: what each tool in `orchestration_tools.py` does (find the session, run a step, JSON out).
- `executor_hook`: the hook the tools file installs on the SDK executor (battle_start handling;
  the deterministic mode runs the whole plan there with no model call).
- `backend`: run the wheel's backend + MCP server with an isolated database (D2, D6, D12).
- `harness`: launch a scenario exactly as `run_scenario` does and wait for the battle (tests, CLI).
- `launch_log`: each agent's launch output in a log file; the error naming an agent that did not come up.
"""
