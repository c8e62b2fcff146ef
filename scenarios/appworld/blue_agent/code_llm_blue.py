"""The LLM Blue in code mode: our ReAct loop (`blue_agent.code_react`) against the gateway's `execute`.

The LLM Blue runs under the AgentBeats SDK (`agentbeats run_agent ... --tool tools.py`), whose agent sees
the gateway's MCP tools. In a code-mode battle (the gateway lists only `execute`) the SDK's tool-calling
prompt does not fit, so `install()` (called by the tool file) wraps the SDK executor's `invoke_agent`: a
task message whose gateway is a code battle is played by `play()`, anything else goes to the SDK as before.

`play()`: the task message is the first user message; each model reply's code is one `execute` on the
gateway (the sandbox; nothing runs here), its output the next user message; a reply without code gets
`NO_CODE`. It ends after an execution of `complete_task` that did not fail, when the gateway refuses an
execution (the episode is over), or after `MAX_TURNS` replies.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from openai import AsyncOpenAI

from blue_agent.code_mode import FAILED_PREFIX, execute, is_code_battle
from blue_agent.code_react import DEFAULT_MODEL, NO_CODE, CodeReact, output_message
from blue_agent.errors import GatewayCallError
from blue_agent.gateway_client import GatewaySession
from kernel.errors import GreenError
from kernel.task_message import parse_task_message

log = logging.getLogger(__name__)
MAX_TURNS = 40
_MARK = "_appworld_code_llm_blue"


async def play(react: CodeReact, task_text: str, session: GatewaySession, max_turns: int = MAX_TURNS) -> str:
    """Run the loop on an open gateway session; a one-line account of how it ended."""
    text = task_text
    for turn in range(1, max_turns + 1):
        _, code = await react.reply(text)
        if code is None:
            text = NO_CODE
            continue
        try:
            output = await asyncio.to_thread(execute, session, code)
        except GatewayCallError as exc:
            return f"Stopped after {turn} replies: {exc}"
        if "complete_task" in code and not output.startswith(FAILED_PREFIX):
            return f"Completed the task in {turn} replies (code mode)."
        text = output_message(output)
    return f"Stopped after {max_turns} replies without completing the task."


def _open_code_session(task_text: str) -> GatewaySession | None:
    """The gateway session of a code-mode task message (open), else None (not a task, or tools mode)."""
    try:
        task = parse_task_message(task_text)
    except GreenError:
        return None
    session = GatewaySession(task.mcp_url).open()
    try:
        if is_code_battle(session):
            return session
    except BaseException:
        session.close()
        raise
    session.close()
    return None


def install() -> bool:
    """Wrap the SDK executor of this process so code-mode tasks run `play()`. False if already installed."""
    from agentbeats.agent_executor import AgentBeatsExecutor

    if getattr(AgentBeatsExecutor, _MARK, False):
        return False
    sdk_invoke = AgentBeatsExecutor.invoke_agent

    async def invoke_agent(self: Any, context: Any) -> str:
        text = context.get_user_input()
        try:
            session = await asyncio.to_thread(_open_code_session, text)
        except GreenError as exc:  # the gateway would not answer: let the SDK agent meet it as before
            log.warning("could not ask the gateway for its tools: %s", exc)
            session = None
        if session is None:
            return await sdk_invoke(self, context)
        client = AsyncOpenAI(api_key=os.environ.get("OPENAI_API_KEY"), base_url=os.environ.get("OPENAI_BASE_URL"))
        model = getattr(self, "model_name", None) or DEFAULT_MODEL  # the SDK's --model_name, as in tools mode
        try:
            return await play(CodeReact(client, model), text, session)
        except Exception as exc:  # a Blue's failure is its answer, not a transport error
            log.exception("code-mode LLM Blue failed")
            return f"error: {type(exc).__name__}: {str(exc)[:300]}"
        finally:
            await client.close()
            await asyncio.to_thread(session.close)

    AgentBeatsExecutor.invoke_agent = invoke_agent
    setattr(AgentBeatsExecutor, _MARK, True)
    return True
