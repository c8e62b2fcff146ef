"""The scripted OpenAI stand-in itself: chat completions, Responses scripting, logging, lifecycle.

Each test drives it with the real `openai` client (or raw HTTP where the SDK hides the shape),
so the stand-in is held to the same contract real OpenAI offers those clients.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import openai
import pytest
import requests

from green_agent.runtime.processes import ManagedProcess

from kernel.ports import free_port, port_is_free
from fake_openai import FakeOpenAI, FakeReply

TOOL = {"type": "function", "name": "add", "description": "add", "parameters": {"type": "object", "properties": {}}}
TOOL2 = {**TOOL, "name": "lookup"}
BATTLE_START = json.dumps({"type": "battle_start", "battle_id": "b-42",
                           "green_battle_context": {"backend_url": "http://127.0.0.1:1/x", "task_config": "Task 7"},
                           "opponent_infos": [{"agent_url": "http://127.0.0.1:2/blue"}]})


def client(fake: FakeOpenAI) -> openai.OpenAI:
    return openai.OpenAI(api_key="dummy", base_url=fake.base_url, max_retries=0, timeout=10)


def test_chat_queue_callable_errors_and_usage(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    with FakeOpenAI(["first", FakeReply("nope", status=429)], log_path=log) as fake:
        c = client(fake)
        reply = c.chat.completions.create(model="m1", messages=[{"role": "user", "content": "x" * 400}])
        assert reply.choices[0].message.content == "first" and reply.model == "m1"
        assert reply.usage.prompt_tokens == 100 and reply.usage.completion_tokens == 1
        with pytest.raises(openai.RateLimitError):
            c.chat.completions.create(model="m1", messages=[{"role": "user", "content": "y"}])
        with pytest.raises(openai.InternalServerError, match="no scripted chat reply left"):
            c.chat.completions.create(model="m1", messages=[{"role": "user", "content": "z"}])
        assert len(fake.requests_to("/chat/completions")) == 3
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["body"]["messages"][0]["content"][:1] for line in lines] == ["x", "y", "z"]
    with FakeOpenAI(lambda body: body["messages"][-1]["content"].upper()) as fake:
        reply = client(fake).chat.completions.create(model="m", messages=[{"role": "user", "content": "echo"}])
        assert reply.choices[0].message.content == "ECHO"


def test_responses_inline_script_one_call_per_turn_then_final() -> None:
    script = [{"tool": "add", "args": {"battle": "{battle_id}", "to": "{opp_url}", "cfg": "{task_config}"}},
              {"tool": "lookup", "args": {"id": "{last_output.note_id}", "text": "got {last_output.note_id}"}}]
    instructions = f"You are green. <<FAKE_SCRIPT>>{json.dumps(script)}<<END>>"
    with FakeOpenAI() as fake:
        c = client(fake)
        items: list = [{"role": "user", "content": BATTLE_START}]
        first = c.responses.create(model="m", instructions=instructions, input=items, tools=[TOOL, TOOL2])
        call = first.output[0]
        assert call.type == "function_call" and call.name == "add"
        assert json.loads(call.arguments) == {"battle": "b-42", "to": "http://127.0.0.1:2/blue", "cfg": "Task 7"}
        items += [{"type": "function_call", "call_id": call.call_id, "name": "add", "arguments": call.arguments},
                  {"type": "function_call_output", "call_id": call.call_id,
                   "output": json.dumps({"type": "text", "text": json.dumps({"note_id": 17})})}]
        second = c.responses.create(model="m", instructions=instructions, input=items, tools=[TOOL, TOOL2])
        assert json.loads(second.output[0].arguments) == {"id": 17, "text": "got 17"}
        items += [{"type": "function_call", "call_id": "c2", "name": "lookup", "arguments": "{}"},
                  {"type": "function_call_output", "call_id": "c2", "output": "done"}]
        final = c.responses.create(model="m", instructions=instructions, input=items, tools=[TOOL, TOOL2])
        assert final.output[0].type == "message" and final.output_text.startswith("FAKE-LLM done.")
        assert final.usage.input_tokens > 0 and final.status == "completed"
        # a new user message restarts the count
        again = c.responses.create(model="m", instructions=instructions, tools=[TOOL, TOOL2],
                                   input=items + [{"role": "user", "content": "next"}])
        assert again.output[0].name == "add"


def test_responses_programmatic_script_final_and_missing_tool() -> None:
    scripts = {"blue agent": {"steps": [{"tool": "missing_tool", "args": {}}], "final": "bye"},
               "green agent": {"steps": [], "final": "answer for {battle_id}"}}
    with FakeOpenAI(scripts=scripts) as fake:
        c = client(fake)
        blue = c.responses.create(model="m", instructions="I am the blue agent", input="go", tools=[TOOL])
        assert "FAKE: tool missing_tool not offered" in blue.output_text
        green = c.responses.create(model="m", instructions="the green agent", input=BATTLE_START)
        assert green.output_text == "answer for b-42"


def test_responses_json_schema_and_registration_suffix() -> None:
    schema = {"type": "object", "properties": {"winner": {"type": "string"}, "score": {"type": "integer"},
                                               "ok": {"type": "boolean"}}, "required": ["winner", "score", "ok"]}
    with FakeOpenAI() as fake:
        raw = requests.post(f"{fake.base_url}/responses", timeout=10, json={
            "model": "m", "input": "judge", "instructions": "x",
            "text": {"format": {"type": "json_schema", "name": "out", "schema": schema}}}).json()
        assert json.loads(raw["output"][0]["content"][0]["text"]) == {"winner": "1", "score": 1, "ok": True}
        assert raw["object"] == "response" and raw["usage"]["output_tokens_details"] == {"reasoning_tokens": 0}
        suffix = client(fake).responses.create(
            model="gpt-4o", input="The task is about Spotify playlists",
            instructions="You are good at extracting relevant parts of task descriptions.")
        assert suffix.output_text == "playlists"
        assert requests.get(f"{fake.base_url}/nowhere", timeout=10).status_code == 404


def test_context_manager_frees_its_port() -> None:
    with FakeOpenAI() as fake:
        port = fake.port
        assert requests.get(f"http://127.0.0.1:{port}/health", timeout=5).json() == {"ok": True}
    assert port_is_free(port)


@pytest.mark.e2e
def test_runs_as_a_separate_process(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "fake.jsonl"
    process = ManagedProcess("fake-openai", [sys.executable, str(Path(__file__).with_name("fake_openai.py")), "--port",
                                             str(port), "--log", str(log), "--chat-reply", "spotify.login"],
                             tmp_path / "fake.log")
    try:
        process.start().wait_ready(f"http://127.0.0.1:{port}/health", timeout_s=30)
        c = openai.OpenAI(api_key="dummy", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, timeout=10)
        reply = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content == "spotify.login"
    finally:
        process.stop()
    assert json.loads(log.read_text().splitlines()[0])["path"] == "/v1/chat/completions"
    assert port_is_free(port)


def test_openai_agents_runner_follows_the_script() -> None:
    """The openai-agents SDK (as AgentBeats agents use it) runs a scripted tool call to completion."""
    import agents  # openai-agents, pinned in requirements.txt
    calls: list[int] = []

    @agents.function_tool
    def add(a: int, b: int) -> str:
        """Add two numbers."""
        calls.append(a + b)
        return json.dumps({"sum": a + b})

    script = json.dumps([{"tool": "add", "args": {"a": 2, "b": 3}}])
    with FakeOpenAI(scripts={"calculator": {"steps": [], "final": "sum is {last_output.sum}"}}) as fake:
        model = agents.OpenAIResponsesModel(model="fake-model",
                                            openai_client=openai.AsyncOpenAI(api_key="dummy", base_url=fake.base_url))
        agent = agents.Agent(name="calc", instructions=f"calculator <<FAKE_SCRIPT>>{script}<<END>>", tools=[add],
                             model=model)
        agents.set_tracing_disabled(True)
        result = agents.Runner.run_sync(agent, "add 2 and 3")
        assert len(fake.requests_to("/responses")) == 2
    assert calls == [5]
    assert result.final_output.startswith("FAKE-LLM done.")
