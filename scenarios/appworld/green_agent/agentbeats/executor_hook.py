"""The hook the tools file installs on the SDK executor: battle_start handling, deterministic mode.

The stock `AgentBeatsExecutor` hands battle_start to the model as raw JSON (D9). With this hook:
1. the message is parsed with pydantic (`battle_start.parse_battle_start`); a malformed one is
   answered `Error: ...` (the backend marks the battle `error`) after a progress event saying why;
2. the battle's session is opened (config from scenario.toml `[appworld]`);
3. `green_mode = "deterministic"`: the whole plan runs here in a worker thread; no model is built
   and no model call is made;
   `green_mode = "llm"`: the model runs as usual and follows the card, calling the tools; when it
   stops (done, gave up, or hit the 30-turn cap), whatever steps remain are run here, so the
   battle always ends with a result posted and the world closed.
The reply never starts with `Error:` once a result was posted (the backend would overwrite
`finished` with `error`). Other messages go to the model unchanged.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from green_agent.agentbeats import sdk_tool_log
from green_agent.agentbeats.battle_start import BattleStart, is_battle_start_text, parse_battle_start
from green_agent.agentbeats.registry import open_session
from green_agent.agentbeats.reporter import BackendReporter
from green_agent.agentbeats.session import BattleSession
from kernel.errors import BadInputError, GreenError

log = logging.getLogger(__name__)

_MARK = "_appworld_green_hook"


def install() -> bool:
    """Patch `AgentBeatsExecutor.invoke_agent` once per process. Returns False if already installed."""
    import os

    from agentbeats.agent_executor import AgentBeatsExecutor
    from kernel.scrubber import register_secrets, scrub_process_output, secrets_in_environment

    register_secrets(secrets_in_environment(dict(os.environ)))  # the Green agent's process prints and posts
    scrub_process_output()
    sdk_tool_log.install()  # the SDK's `Calling tool` entries under the Green's own name (one group on the page)
    if getattr(AgentBeatsExecutor, _MARK, False):
        return False
    original = AgentBeatsExecutor.invoke_agent

    async def invoke_agent(self: Any, context: Any) -> str:
        text = context.get_user_input()
        if not is_battle_start_text(text):
            return await original(self, context)
        return await on_battle_start(text, lambda: original(self, context))

    AgentBeatsExecutor.invoke_agent = invoke_agent
    setattr(AgentBeatsExecutor, _MARK, True)
    return True


async def on_battle_start(text: str, run_model: Any) -> str:
    """Handle one battle_start message; `run_model()` runs the SDK's model loop (llm mode only)."""
    try:
        start = parse_battle_start(text)
    except BadInputError as exc:
        _report_malformed(str(exc))
        return f"Error: {exc}"
    reporter = BackendReporter(start.battle_id, start.backend_url)
    try:
        session = open_session(start, reporter=reporter)
    except GreenError as exc:  # bad config, or the slot is not up (no credentials for it): a draw, never a loss
        reporter.report_unjudged(f"Battle not run: {exc}", {"battle_id": start.battle_id, "error": str(exc)})
        return f"Battle not run: {exc}"
    mode = session.resolved.green_mode
    choices = session.battle.config.choices  # every default filled
    reporter.progress(f"AppWorld Green ({mode} mode): task {session.resolved.task} "
                      f"(from {session.resolved.task_source}), Blue {start.blue.name}",
                      {"green_mode": mode, "task_config": session.resolved.task, "deadline_s": choices.deadline_s,
                       "predictor": choices.predictor, "split": choices.split})
    if mode == "deterministic":
        summary = await asyncio.to_thread(session.run_all)
        return _final_reply(summary)
    return await _run_llm(start, session, run_model)


async def _run_llm(start: BattleStart, session: BattleSession, run_model: Any) -> str:
    reply = ""
    try:
        reply = str(await run_model() or "")
    except Exception as exc:  # MaxTurnsExceeded, model errors: finish without the model
        log.warning("battle %s: the Green's model stopped: %s", start.battle_id, exc)
        session.reporter.progress(f"The Green's model stopped ({type(exc).__name__}); finishing the plan without it")
    missing = [name for name in ("report", "cleanup") if name not in session.battle.outputs]
    if missing:
        session.reporter.progress("Finishing the steps the model did not run", {"steps": missing})
    summary = await asyncio.to_thread(session.finish)
    return _final_reply(summary, reply)


def _final_reply(summary: dict[str, Any], model_reply: str = "") -> str:
    line = (f"Battle {summary['battle_id']}: task {summary.get('task_id')} {summary.get('outcome')}, "
            f"winner {summary.get('winner')} ({summary.get('reason') or ''})")
    if summary.get("bad_input"):
        line = f"Battle {summary['battle_id']} not run: {summary['bad_input']}"
    text = f"{line}\n{model_reply}".strip()
    return text if not text.startswith("Error") else "Result: " + text


def _report_malformed(problem: str) -> None:
    """Tell the UI why the battle will not run, using the battle context set by battle_info."""
    from agentbeats.logging import get_backend_url, get_battle_id
    battle_id, backend_url = get_battle_id(), get_backend_url()
    if battle_id and backend_url:
        BackendReporter(battle_id, backend_url).progress(f"Malformed battle_start: {problem}"[:300])
