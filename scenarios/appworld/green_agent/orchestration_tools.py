"""AgentBeats tool file of the AppWorld Green (`agentbeats run_agent ... --tool orchestration_tools.py`).

AgentBeats imports this file by path, outside any package, so it imports only our installed
package. Each tool is a thin adapter over `green_agent.agentbeats` (one plan step of the battle's
session, keyed by battle_id); every step reports its own progress to the backend. Calling a tool
twice returns the stored output and does nothing else. Importing this file also installs the
executor hook (battle_start parsing; `green_mode = "deterministic"` runs the plan with no model).
"""

from __future__ import annotations

import agentbeats as ab

from green_agent.agentbeats import executor_hook, tool_api

executor_hook.install()


@ab.tool
async def setup_appworld_environment(battle_id: str = "") -> str:
    """Steps 1-2: read the task id from the battle's config and initialize its AppWorld world.

    Args:
        battle_id: the battle_id of the battle_start message ("" = the current battle).
    Returns JSON: task_id, instruction, supervisor, datetime, experiment_name.
    """
    return await tool_api.run_step(battle_id, "setup")


@ab.tool
async def predict_required_apis(battle_id: str = "") -> str:
    """Step 3: predict the APIs the task needs and restrict Blue's MCP gateway to them.

    Args:
        battle_id: the battle_id of the battle_start message ("" = the current battle).
    """
    return await tool_api.run_step(battle_id, "scope")


@ab.tool
async def build_task_message(battle_id: str = "") -> str:
    """Step 4: compose the plain-text task message for Blue (instruction, supervisor, MCP endpoint, tools).

    Args:
        battle_id: the battle_id of the battle_start message ("" = the current battle).
    """
    return await tool_api.run_step(battle_id, "task_message")


@ab.tool
async def dispatch_task_to_blue(battle_id: str = "") -> str:
    """Step 5: send the task message to Blue over A2A (returns at once; never use talk_to_agent for this).

    Args:
        battle_id: the battle_id of the battle_start message ("" = the current battle).
    """
    return await tool_api.run_step(battle_id, "dispatch")


@ab.tool
async def wait_for_task_completion(battle_id: str = "") -> str:
    """Step 6: block until Blue calls supervisor__complete_task or the deadline passes (one call, may take minutes).

    Args:
        battle_id: the battle_id of the battle_start message ("" = the current battle).
    """
    return await tool_api.run_step(battle_id, "wait")


@ab.tool
async def check_task_completed(battle_id: str = "") -> str:
    """Ask AppWorld once whether Blue has completed the task (no waiting; optional).

    Args:
        battle_id: the battle_id of the battle_start message ("" = the current battle).
    """
    return await tool_api.run_step(battle_id, "task_completed")


@ab.tool
async def save_appworld_state(battle_id: str = "") -> str:
    """Step 7: persist the world's end state and archive this battle's logs.

    Args:
        battle_id: the battle_id of the battle_start message ("" = the current battle).
    """
    return await tool_api.run_step(battle_id, "archive")


@ab.tool
async def run_appworld_evaluator(battle_id: str = "") -> str:
    """Step 8a: AppWorld's evaluation of the end state (runs once; later calls return the same answer).

    Args:
        battle_id: the battle_id of the battle_start message ("" = the current battle).
    """
    return await tool_api.run_step(battle_id, "metrics", ("success", "tests_passed", "tests_failed", "total_tests",
                                                          "difficulty"))


@ab.tool
async def analyze_mcp_trajectory(battle_id: str = "") -> str:
    """Step 8b: metrics of Blue's MCP calls in this battle (counts, errors, retries, pagination, API recall).

    Args:
        battle_id: the battle_id of the battle_start message ("" = the current battle).
    """
    return await tool_api.run_step(battle_id, "metrics", ("trajectory", "trajectory_error"))


@ab.tool
async def get_complete_task_metrics(battle_id: str = "") -> str:
    """Steps 8-9: evaluation + trajectory metrics and the verdict (winner blue_agent iff AppWorld says success).

    Args:
        battle_id: the battle_id of the battle_start message ("" = the current battle).
    """
    return await tool_api.complete_metrics(battle_id)


@ab.tool
async def close_appworld_environment(battle_id: str = "") -> str:
    """Step 10: close the task's AppWorld world and release the gateway (before the result is reported).

    Args:
        battle_id: the battle_id of the battle_start message ("" = the current battle).
    """
    return await tool_api.run_step(battle_id, "cleanup")


@ab.tool
async def report_battle_result(battle_id: str = "") -> str:
    """Step 11: post the final result (winner, record, summary table) to the AgentBeats backend, once (closes the world first if needed).

    Args:
        battle_id: the battle_id of the battle_start message ("" = the current battle).
    """
    return await tool_api.run_step(battle_id, "report")
