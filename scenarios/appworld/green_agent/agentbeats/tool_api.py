"""What each `@agentbeats.tool` in orchestration_tools.py does: find the session, run one step.

Steps block (the wait up to the deadline), so they run in a worker thread: the agent's event loop
keeps serving A2A while the tool waits. Every answer is a JSON string; errors are JSON too
(`{"ok": false, "error": ...}`), never exceptions, so the model always gets something to read:
a battle id that is not a short string, or not the model's own battle (`registry.get_session`),
is answered that way.
"""

from __future__ import annotations

import asyncio
from typing import Any

from green_agent.agentbeats.registry import get_session
from green_agent.agentbeats.session import BattleSession, to_json
from kernel.errors import GreenError

MAX_BATTLE_ID = 200


def _session(battle_id: object) -> BattleSession | str:
    """The model's own battle's session, or the JSON error to answer."""
    if not isinstance(battle_id, str) or len(battle_id) > MAX_BATTLE_ID:
        return to_json({"ok": False, "error": "battle_id must be the battle_start's battle_id (a short string)"})
    try:
        return get_session(battle_id)
    except GreenError as exc:
        return to_json({"ok": False, "error": str(exc)})


async def run_step(battle_id: str, step: str, pick: tuple[str, ...] | None = None) -> str:
    """Run engine step `step` of `battle_id`'s session and return its output (only `pick` keys if given)."""
    session = _session(battle_id)
    if isinstance(session, str):
        return session
    body = session.task_completed if step == "task_completed" else (lambda: session.run_step(step))
    output = await asyncio.to_thread(body)
    return to_json(_pick(output, pick))


async def complete_metrics(battle_id: str) -> str:
    """The seed's `get_complete_task_metrics` record: evaluation + trajectory + verdict."""
    session = _session(battle_id)
    if isinstance(session, str):
        return session
    metrics = await asyncio.to_thread(session.run_step, "metrics")
    verdict = await asyncio.to_thread(session.run_step, "judge")
    trajectory = metrics.get("trajectory") or {}
    completion = session.battle.outputs.get("wait", {})
    return to_json({
        "ok": metrics.get("ok", False), "success": metrics.get("success"), "tests_passed": metrics.get("tests_passed"),
        "tests_failed": metrics.get("tests_failed"), "total_tests": metrics.get("total_tests"),
        "total_api_calls": trajectory.get("total_calls"), "error_rate": trajectory.get("error_rate"),
        "execution_time_seconds": completion.get("waited_s"), "retry_count": trajectory.get("retry_count"),
        "winner": verdict.get("winner") or "draw", "outcome": verdict.get("outcome"), "status": verdict.get("status"),
        "details": metrics | {"verdict": verdict},
    })


def _pick(output: dict[str, Any], keys: tuple[str, ...] | None) -> dict[str, Any]:
    if keys is None or not output.get("ok", False):
        return output
    return {k: output[k] for k in ("ok", "step", "repeated", *keys) if k in output}
