"""How the reference stand-ins replay a solution: plainly, retrying passing failures, or carefully; in both modes.

Three policies (`ReplayPolicy`), the three points of one reliability curve (docs/reliability.md):
- `plain` (the `reference` Blue): the solution as it is; its first failed call ends it.
- `retry` (`reference-retry`, `blue_agent.retry`): a call that failed with HTTP 429, 503 or 504 is called again
  after the message's retry-after, up to 3 times, whatever the call was.
- `reckless` (`reference-reckless`, `blue_agent.retry.reckless`): any failed call is called again at once, whatever
  the failure, up to 10 times: no retry-after honoured, no write checked (the far end of the curve).
- `careful` (`reference-careful`, `blue_agent.careful_policy` with the table `blue_agent.careful_checks`): the same
  for what cannot have reached the world; after a 504 or an answer cut short, a write is repeated only if reading
  the app's state shows it did not happen; an empty page is read again.

`replay_tools` and `solution_code_for` replay a solution under a policy in each mode. The careful policy is written
once, as two self-contained source files: tools mode imports them and wraps the `apis` over MCP tool calls
(`careful_apis`, waiting with `time.sleep`); code mode sends their text in front of the solution, as one execution
(`careful_solution_code`), where it cannot wait (AppWorld's REPL refuses `time.sleep`).
In tools mode an answer that is not JSON (a tool result whose `response` is text: no AppWorld API answers a bare
string) raises `UndecodableAnswerError` (`decoded`), as decoding it raises in code mode.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from blue_agent import careful_checks, careful_policy
from blue_agent.apis_shim import McpApis, ToolCaller, run_solution
from blue_agent.code_mode import solution_code
from blue_agent.errors import UndecodableAnswerError
from blue_agent.retry import reckless, reckless_solution_code, retrying, retrying_solution_code

ReplayPolicy = Literal["plain", "retry", "reckless", "careful"]
BLUE_POLICIES: dict[str, ReplayPolicy] = {"reference": "plain", "reference-retry": "retry",
                                          "reference-reckless": "reckless", "reference-careful": "careful"}
"""The shipped stand-in Blues and purples that replay the reference solution, and the policy of each."""


def careful_apis(apis: McpApis, sleep: Callable[[float], None] | None = time.sleep) -> careful_policy.CarefulApis:
    """`apis` under the careful policy, with the table of checks."""
    return careful_policy.CarefulApis(apis, careful_checks.CHECKS, sleep)


def decoded(call: ToolCaller) -> ToolCaller:
    """`call`, raising `UndecodableAnswerError` for an answer that was not JSON (module docstring)."""

    def call_decoded(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        payload = call(name, arguments)
        response = payload.get("response") if isinstance(payload, dict) else None
        if isinstance(response, str):
            raise UndecodableAnswerError(f"{name}: the answer is not JSON (cut short?): {response[:80]!r}")
        return payload

    return call_decoded


def replay_tools(source: str, call: ToolCaller, policy: ReplayPolicy, sleep: Callable[[float], None] = time.sleep
                 ) -> None:
    """Tools mode: run the solution over `call` under `policy`."""
    if policy == "careful":
        run_solution(source, decoded(call), lambda apis: careful_apis(apis, sleep))
    elif policy == "reckless":
        run_solution(source, reckless(call))
    else:
        run_solution(source, retrying(call, sleep) if policy == "retry" else call)


def careful_solution_code(source: str) -> str:
    """A reference solution's source, run with a careful `apis` (the policy's and the checks' text first)."""
    policy = Path(careful_policy.__file__).read_text(encoding="utf-8")
    checks = Path(careful_checks.__file__).read_text(encoding="utf-8")
    return (policy + "\n\n" + checks + "\n\n" + source.rstrip()
            + "\n\nsolution(CarefulApis(apis, CHECKS), requester)\n")


def solution_code_for(source: str, policy: ReplayPolicy) -> str:
    """Code mode: the one execution that runs the solution under `policy`."""
    if policy == "careful":
        return careful_solution_code(source)
    if policy == "reckless":
        return reckless_solution_code(source)
    return retrying_solution_code(source) if policy == "retry" else solution_code(source)
