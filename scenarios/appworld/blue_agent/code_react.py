"""The LLM agents' code mode: our own ReAct-style prompt and the turn of one model reply -> one execution.

A code-mode battle (the gateway lists only `execute`; on A2A the first message offers only `execute`) is
played as AppWorld's own agents play it: the model thinks, writes ONE fenced python block per reply, reads
the REPL's output in the next user message and repeats, finishing with `apis.supervisor.complete_task(...)`.
`SYSTEM_PROMPT` is ours (not AppWorld's text). `CodeReact.reply(text)` sends `text` as the next user
message and returns the code of the model's reply (`extract_code`: an `execute` function call's `code`,
else the first fenced python block) or None when it held none. The model's text is data: its code is only
ever sent to the battle's `execute` (the sandbox); nothing here runs it. History is bounded: the system
prompt and the first user message (the task) are kept, then the last `MAX_HISTORY - 2` messages.
"""

from __future__ import annotations

import json
import re
from typing import Any

from openai import AsyncOpenAI

from kernel.a2a_usage import usage_metadata

DEFAULT_MODEL = "gpt-4o-mini"
MAX_HISTORY = 60
MAX_OUTPUT_CHARS = 20_000
"""An output longer than this is cut before it goes back to the model (the REPL already cuts at 20,000)."""
OUTPUT_PREFIX = "Output:\n"
_PYTHON_FENCE = re.compile(r"```(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)

SYSTEM_PROMPT = """You complete a task for a person (the "supervisor") in a world of everyday apps, by writing
Python that runs in a stateful REPL. The REPL holds an object `apis`: `apis.<app>.<api>(**kwargs)` calls one
API and returns its JSON (a dict or a list); an API error raises an exception whose message says what was wrong.
Variables, imports and functions you define stay defined for later code. The task message lists the APIs you
may use and their parameters.

Work in small steps. In every reply:
1. think briefly (one to three sentences) about what you know and what to find out next;
2. then write exactly ONE fenced code block, ```python ... ```, and stop. It runs, and the next message
   shows what it printed (print what you need to see), 'Execution successful.' if it printed nothing, or
   'Execution failed. Traceback: ...'. Read the traceback, fix the cause, and try again.

How to work:
- Get the supervisor's passwords with apis.supervisor.show_account_passwords() and their email and phone
  number with apis.supervisor.show_profile(); log in to an app with apis.<app>.login(username=..., password=...)
  (the email, or the phone number for the phone app) and pass the access_token it returns to that app's calls.
- Lists are paginated: loop page_index = 0, 1, 2, ... until a page comes back empty.
- Check what you found before you change anything; change only what the task asks for.
- Never guess a value you can look up. Print a little, not whole databases.
- Finish with apis.supervisor.complete_task(answer=...) when the task asks a question (the answer only,
  e.g. a number or a name), apis.supervisor.complete_task() when it asks for an action, or
  apis.supervisor.complete_task(status="fail") when it cannot be done. Call it once, at the very end."""

NO_CODE = ("Your last message held no code to run. Reply with a short thought and exactly one fenced block "
           "```python\n...\n``` (it runs in the REPL); finish with apis.supervisor.complete_task(...).")
"""What the Blue's own loop answers a reply without code (on A2A the Green answers with its corrective message)."""


def extract_code(message: Any) -> str | None:
    """The code of one chat reply: an `execute` call's `code` argument, else its first fenced python block."""
    for call in getattr(message, "tool_calls", None) or []:
        function = getattr(call, "function", None)
        if getattr(function, "name", None) != "execute":
            continue
        try:
            arguments = json.loads(function.arguments or "{}")
        except ValueError:
            continue
        if isinstance(arguments, dict) and isinstance(arguments.get("code"), str):
            return arguments["code"]
    match = _PYTHON_FENCE.search(getattr(message, "content", None) or "")
    return match.group(1) if match else None


def fenced(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```"


def output_message(output: str) -> str:
    """The REPL's output as the next user message (cut at MAX_OUTPUT_CHARS, saying so)."""
    if len(output) > MAX_OUTPUT_CHARS:
        output = output[:MAX_OUTPUT_CHARS] + f"\n[output cut: {len(output)} characters, first {MAX_OUTPUT_CHARS} shown]"
    return OUTPUT_PREFIX + output


class CodeReact:
    """One conversation with the model in code mode (see the module docstring)."""

    def __init__(self, client: AsyncOpenAI, model: str) -> None:
        self.client, self.model = client, model
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
        self.last_usage: dict[str, Any] | None = None
        """The last reply's usage as A2A metadata (`kernel.a2a_usage`)."""

    async def reply(self, text: str) -> tuple[str, str | None]:
        """Send `text`; the model's reply as it goes into the history (its code re-fenced) and its code, if any."""
        self.messages.append({"role": "user", "content": text})
        if len(self.messages) > MAX_HISTORY:
            self.messages = self.messages[:2] + self.messages[-(MAX_HISTORY - 2):]
        completion = await self.client.chat.completions.create(model=self.model, messages=self.messages)
        tokens = completion.usage
        self.last_usage = usage_metadata(completion.model or self.model, tokens.prompt_tokens,
                                         tokens.completion_tokens) if tokens else None
        message = completion.choices[0].message
        code = extract_code(message)
        said = message.content or ""
        if code is not None and not _PYTHON_FENCE.search(said):
            said = (said + "\n" + fenced(code)).strip()  # an `execute` call, kept as the text convention
        self.messages.append({"role": "assistant", "content": said})
        return said, code
