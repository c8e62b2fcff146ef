"""Code mode on the in-band bridge (`appworld-a2a-code/1`): a purple that writes Python, relayed to `execute`.

A code-mode battle's gateway lists one tool, `execute` (`is_code_battle`). The first message then adds
`CODE_REPLY_FORMAT` to the tool mode's (the task and the `execute` schema): each reply is one execution,
either the tool call `{"name": "execute", "arguments": {"code": ...}}` or one fenced python block (the
convention of AppWorld's own ReAct prompt; `code_call`). The next message is the REPL's output
(`render_output`: `Output:` and AppWorld's `/execute` text); a reply holding neither gets
`render_code_correction`. The conversation ends once the code's
`apis.supervisor.complete_task(...)` succeeded: the gateway marks that execution's result as ending the
episode (`kernel.mcp_results.episode_over`), as in tool mode.
"""

from __future__ import annotations

import re
from typing import Any

from kernel.a2a_tools import ToolCall

CODE_PROTOCOL = "appworld-a2a-code/1"
EXECUTE_TOOL = "execute"
OUTPUT_PREFIX = "Output:\n"
MAX_OUTPUT_CHARS = 25_000
"""An output the bridge passes on (the gateway's cut at 20,000 characters plus its note fit)."""
_PYTHON_FENCE = re.compile(r"```(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
CODE_REPLY_FORMAT = f"""Protocol: {CODE_PROTOCOL} (this battle is in code mode).
You work in a stateful Python REPL. Each reply is ONE execution: either one fenced block
```python
print(apis.supervisor.show_profile())
```
or the tool call {{"name": "execute", "arguments": {{"code": "..."}}}}. The next message is its output, as
`{OUTPUT_PREFIX.strip()}` and what the code printed, 'Execution successful.' or 'Execution failed. Traceback: ...'.
Finish with apis.supervisor.complete_task(...) in your code."""


def render_code_correction(problem: str) -> str:
    """The corrective message for a code-mode reply that holds no execution (the tool mode's names a JSON tool call)."""
    return (f"Your last message held no code to run ({problem}). Reply with ONE fenced block ```python ... ``` "
            f"or the tool call {{\"name\": \"{EXECUTE_TOOL}\", \"arguments\": {{\"code\": \"...\"}}}}; "
            "finish with apis.supervisor.complete_task(...) in your code.")


def is_code_battle(schemas: list[dict[str, Any]]) -> bool:
    """True if the battle's tools are exactly `execute`."""
    names = [s.get("function", s).get("name") if isinstance(s, dict) else None for s in schemas]
    return names == [EXECUTE_TOOL]


def code_call(text: str) -> ToolCall | None:
    """The first fenced python block of a reply as an `execute` call (None if there is none)."""
    match = _PYTHON_FENCE.search(text)
    return ToolCall(name=EXECUTE_TOOL, arguments={"code": match.group(1)}) if match else None


def render_output(response: Any) -> str:
    """The REPL's output for the purple (a refusal's message when the gateway refused the execution), bounded: the
    gateway cuts outputs to 20,000 characters, and the bridge does not rely on it."""
    if isinstance(response, dict) and isinstance(response.get("output"), str):
        output = response["output"]
        if len(output) > MAX_OUTPUT_CHARS:
            output = output[:MAX_OUTPUT_CHARS] + f"\n[output cut: {len(output) - MAX_OUTPUT_CHARS} more characters]"
        return OUTPUT_PREFIX + output
    message = response.get("message") if isinstance(response, dict) else response
    return f"{OUTPUT_PREFIX}Execution refused: {str(message)[:2000]}"

