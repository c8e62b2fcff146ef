"""The Blues' side of code mode: a battle whose gateway lists one tool, `execute`, runs Python in a REPL.

`is_code_battle` tells the two modes apart from the gateway's tool list; `execute` sends code and returns
the REPL's output text (AppWorld's `/execute` strings); `solution_code` turns a reference solution
(`def solution(apis, requester): ...`) into code that runs it in the REPL, as AppWorld's own REPL would.
"""

from __future__ import annotations

from blue_agent.errors import GatewayCallError
from blue_agent.gateway_client import GatewaySession

EXECUTE_TOOL = "execute"
FAILED_PREFIX = "Execution failed."


def is_code_battle(session: GatewaySession) -> bool:
    """True if the battle offers only `execute` (code mode)."""
    return session.list_tool_names() == [EXECUTE_TOOL]


def execute(session: GatewaySession, code: str) -> str:
    """Run `code` in the battle's REPL; its output text. Raises GatewayCallError if `execute` was refused."""
    response = session.call_tool(EXECUTE_TOOL, {"code": code}).get("response")
    if isinstance(response, dict) and isinstance(response.get("output"), str):
        return response["output"]
    message = response.get("message") if isinstance(response, dict) else response
    raise GatewayCallError(f"execute was refused: {str(message)[:300]}")


def solution_code(source: str) -> str:
    """A reference solution's source followed by its call, as one execution."""
    return source.rstrip() + "\n\nsolution(apis, requester)\n"
