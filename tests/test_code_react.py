"""Unit tests of the LLM agents' code-mode turn (`blue_agent.code_react`): extraction, history bound, output cut.

The chat client is a stand-in with the one method `CodeReact` calls (`chat.completions.create`, returning an
object shaped like the `openai` SDK's ChatCompletion); the end-to-end runs with the scripted OpenAI-compatible
server are in tests/test_code_a2a_e2e.py and tests/test_code_mode_e2e.py.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

from blue_agent import code_react
from blue_agent.code_react import MAX_HISTORY, CodeReact, extract_code, output_message


def _message(content: str | None = None, call: tuple[str, str] | None = None) -> SimpleNamespace:
    calls = [SimpleNamespace(function=SimpleNamespace(name=call[0], arguments=call[1]))] if call else None
    return SimpleNamespace(content=content, tool_calls=calls)


def test_the_code_is_an_execute_call_else_the_first_python_block() -> None:
    assert extract_code(_message(call=("execute", json.dumps({"code": "x = 1"})))) == "x = 1"
    assert extract_code(_message("think\n```python\nprint(1)\n```\n```python\nprint(2)\n```")) == "print(1)\n"
    assert extract_code(_message("```py\nx = 2\n```")) == "x = 2\n"
    assert extract_code(_message("no code here")) is None
    assert extract_code(_message("```json\n{}\n```")) is None
    assert extract_code(_message(call=("other", '{"code": "x"}'))) is None
    assert extract_code(_message(call=("execute", "not json"))) is None


class _Client:
    """Stands for AsyncOpenAI: records every `messages` list and answers the scripted replies in order."""

    def __init__(self, replies: list[SimpleNamespace]) -> None:
        self.replies, self.seen = replies, []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    async def create(self, model: str, messages: list[dict[str, Any]]) -> SimpleNamespace:
        self.seen.append([dict(m) for m in messages])
        usage = SimpleNamespace(prompt_tokens=10, completion_tokens=2)
        return SimpleNamespace(model=model, usage=usage, choices=[SimpleNamespace(message=self.replies.pop(0))])


def test_history_keeps_the_prompt_and_task_and_is_bounded() -> None:
    client = _Client([_message(f"```python\nx = {i}\n```") for i in range(MAX_HISTORY)])
    react = CodeReact(client, "m")  # type: ignore[arg-type]
    for i in range(MAX_HISTORY):
        said, code = asyncio.run(react.reply("the task" if i == 0 else f"Output:\n{i}"))
        assert code == f"x = {i}\n"
    last = client.seen[-1]
    assert len(last) <= MAX_HISTORY and last[0]["content"] == code_react.SYSTEM_PROMPT
    assert last[1] == {"role": "user", "content": "the task"}
    assert react.last_usage is not None


def test_an_execute_call_goes_into_the_history_as_a_fenced_block() -> None:
    client = _Client([_message("looking", call=("execute", '{"code": "print(1)"}'))])
    react = CodeReact(client, "m")  # type: ignore[arg-type]
    said, code = asyncio.run(react.reply("the task"))
    assert code == "print(1)" and said == "looking\n```python\nprint(1)\n```"
    assert react.messages[-1] == {"role": "assistant", "content": said}


def test_a_long_output_is_cut_saying_so() -> None:
    text = output_message("y" * (code_react.MAX_OUTPUT_CHARS + 5))
    assert text.startswith("Output:\n") and text.endswith(f"first {code_react.MAX_OUTPUT_CHARS} shown]")


def _play(replies: list[SimpleNamespace], outputs: list[Any], monkeypatch: Any, max_turns: int = 5) -> tuple[str, list[str]]:
    """`code_llm_blue.play` with `execute` standing for the gateway's (code -> output text, or it raises)."""
    from blue_agent import code_llm_blue

    ran: list[str] = []

    def execute(session: Any, code: str) -> str:
        ran.append(code)
        out = outputs.pop(0)
        if isinstance(out, Exception):
            raise out
        return out

    monkeypatch.setattr(code_llm_blue, "execute", execute)
    react = CodeReact(_Client(replies), "m")  # type: ignore[arg-type]
    return asyncio.run(code_llm_blue.play(react, "the task", session=None, max_turns=max_turns)), ran  # type: ignore[arg-type]


def test_the_blue_loop_ends_on_a_complete_task_that_did_not_fail(monkeypatch: Any) -> None:
    replies = [_message("```python\napis.supervisor.complete_task(answer=1)\n```"), _message("no code"),
               _message("```python\napis.supervisor.complete_task(answer=2)\n```")]
    ended, ran = _play(replies, ["Execution failed. Traceback:\nException: x", "Execution successful."], monkeypatch)
    assert ended == "Completed the task in 3 replies (code mode)." and len(ran) == 2


def test_the_blue_loop_stops_when_the_gateway_refuses_or_turns_run_out(monkeypatch: Any) -> None:
    from blue_agent.errors import GatewayCallError

    ended, _ = _play([_message("```python\nx = 1\n```")], [GatewayCallError("execute was refused: over")], monkeypatch)
    assert ended.startswith("Stopped after 1 replies: execute was refused")
    ended, ran = _play([_message("thinking")] * 3, [], monkeypatch, max_turns=3)
    assert ended == "Stopped after 3 replies without completing the task." and ran == []
