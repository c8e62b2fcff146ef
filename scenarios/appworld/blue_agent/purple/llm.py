"""The LLM purple: an OpenAI-compatible chat model with function calling plays the in-band protocol.

The first message's function schemas (`kernel.a2a_tools.tools_of`) become the `tools` of every
chat completion; each Green message is a user message. A reply with `tool_calls` becomes the
protocol's tool call (the first one); a reply without is passed on as its text (the Green parses
it, or answers with its corrective message). History is kept per conversation, bounded by
`MAX_HISTORY` messages after the first.

In code mode (`appworld-a2a-code/1`: the first message offers only `execute`) the player is a
`CodeLlmPlayer`: our own ReAct prompt (`blue_agent.code_react`), no tools offered; each reply is the
code of the model's reply as the protocol's `execute` tool call (JSON, so code holding backticks survives),
or, when it held none, its text, which the Green answers with its corrective message; the Green's next
message is the REPL's output.
"""

from __future__ import annotations

import json
from typing import Any

from openai import AsyncOpenAI

from blue_agent.code_react import CodeReact
from blue_agent.code_mode import EXECUTE_TOOL
from blue_agent.purple.code_mode import is_code_task
from kernel.a2a_tools import ToolCall, render_call, tools_of
from kernel.a2a_usage import usage_metadata

NAME = "AppWorld LLM purple"
DESCRIPTION = "An OpenAI-compatible chat model with function calling, playing AppWorld in-band."
DEFAULT_MODEL = "gpt-4o-mini"
MAX_HISTORY = 200
SYSTEM = "You are an agent acting on a user's behalf in AppWorld apps. Follow the protocol in the first message."


class LlmPlayer:
    def __init__(self, client: AsyncOpenAI, model: str, tools: list[dict[str, Any]] | None) -> None:
        self.client, self.model, self.tools = client, model, tools
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        self.last_usage: dict[str, Any] | None = None
        """The last reply's usage as A2A metadata (`kernel.a2a_usage`): the model's tokens, as the API counted them."""

    async def turn(self, text: str) -> str:
        self.messages.append({"role": "user", "content": text})
        if len(self.messages) > MAX_HISTORY:
            self.messages = self.messages[:2] + self.messages[-(MAX_HISTORY - 2):]
        extra = {"tools": self.tools} if self.tools else {}
        completion = await self.client.chat.completions.create(model=self.model, messages=self.messages, **extra)
        tokens = completion.usage
        self.last_usage = usage_metadata(completion.model or self.model, tokens.prompt_tokens,
                                         tokens.completion_tokens) if tokens else None
        message = completion.choices[0].message
        reply = message.content or ""
        if message.tool_calls:
            function = message.tool_calls[0].function
            try:
                arguments = json.loads(function.arguments or "{}")
            except ValueError:
                arguments = {"unparsed": function.arguments}
            reply = render_call(ToolCall(name=function.name, arguments=arguments if isinstance(arguments, dict)
                                         else {"value": arguments}))
        self.messages.append({"role": "assistant", "content": reply})
        return reply

    def close(self) -> None:
        pass


class CodeLlmPlayer:
    """Code mode: one model reply -> one execution (an `execute` call) or its text when it held no code."""

    def __init__(self, client: AsyncOpenAI, model: str) -> None:
        self.react = CodeReact(client, model)
        self.last_usage: dict[str, Any] | None = None

    async def turn(self, text: str) -> str:
        said, code = await self.react.reply(text)
        self.last_usage = self.react.last_usage
        if code is None:
            return said
        return render_call(ToolCall(name=EXECUTE_TOOL, arguments={"code": code}))

    def close(self) -> None:
        pass


def player_factory(api_key: str, base_url: str | None, model: str = DEFAULT_MODEL):  # noqa: ANN201
    client = AsyncOpenAI(api_key=api_key, base_url=base_url)

    def make_player(first_message: str) -> LlmPlayer | CodeLlmPlayer:
        if is_code_task(first_message):
            return CodeLlmPlayer(client, model)
        return LlmPlayer(client, model, tools_of(first_message))

    return make_player
