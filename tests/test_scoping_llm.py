"""The LLM predictor against the scripted OpenAI stand-in: prompt, caching, usage, fallbacks.

The stand-in (`tests/fake_openai.py`) implements OpenAI's `POST /v1/chat/completions`
contract on loopback; the production code talks to it through the real `openai` client.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest
from pydantic import SecretStr

from kernel.ports import free_port
from green_agent.scoping.cache import PredictionCache
from green_agent.scoping.llm import LlmPredictor
from green_agent.scoping.prompt import PROMPT_VERSION
from green_agent.scoping.select import predict_scope
from kernel.settings import Settings
from fake_openai import FakeOpenAI, FakeReply
from kernel.world_data import WorldData
from scoping_world import write_tiny_world

DEV_TASK = "bbbbbbb_1"
INSTRUCTION = "Make a Spotify playlist called 'Calm' with every song by Enya."
GOOD_ANSWER = "spotify.login\nspotify.search_songs\nspotify.create_playlist\nspotify.add_song_to_playlist\n" \
              "supervisor.show_account_passwords"


@pytest.fixture()
def world(tmp_path: Path) -> WorldData:
    return WorldData(write_tiny_world(tmp_path / "world"))


@pytest.fixture()
def cache(tmp_path: Path) -> PredictionCache:
    return PredictionCache(tmp_path / "cache")


def make_settings(world: WorldData, base_url: str | None, key: str | None = "sk-test-0123456789",
                  model: str = "gpt-5-2025-08-07") -> Settings:
    return Settings(openai_api_key=SecretStr(key) if key else None, openai_base_url=base_url,
                    appworld_root=world.root, scope_model=model)


def test_prompt_has_docs_demos_and_instruction(world: WorldData, cache: PredictionCache) -> None:
    with FakeOpenAI([GOOD_ANSWER]) as fake:
        prediction = predict_scope(DEV_TASK, INSTRUCTION, make_settings(world, fake.base_url), world, "llm", cache=cache)
        body = fake.requests_to("/chat/completions")[0]["body"]
    messages = body["messages"]
    assert messages[0]["role"] == "system" and "spotify:\n  login:" in messages[0]["content"]
    assert "show_api_doc" not in messages[0]["content"]  # api_docs app left out
    assert messages[2]["role"] == "user" and "Groceries" in messages[2]["content"]  # the train demo
    assert messages[3] == {"role": "assistant", "content": "simple_note.create_note\nsimple_note.login\n"
                           "supervisor.complete_task\nsupervisor.show_account_passwords"}
    assert INSTRUCTION in messages[-1]["content"] and messages[-1]["role"] == "user"
    assert "temperature" not in body  # gpt-5 models reject it
    assert prediction.predictor == "llm" and prediction.fallback_reason is None
    assert prediction.apis == ["supervisor.complete_task", "spotify.login", "spotify.search_songs",
                               "spotify.create_playlist", "spotify.add_song_to_playlist",
                               "supervisor.show_account_passwords"]
    assert prediction.model == "gpt-5-2025-08-07" and prediction.prompt_version == PROMPT_VERSION
    assert prediction.usage.input_tokens > 100 and prediction.usage.output_tokens > 0
    assert prediction.usage.cost_usd > 0


def test_a_task_is_never_its_own_demonstration(world: WorldData, cache: PredictionCache) -> None:
    with FakeOpenAI([GOOD_ANSWER]) as fake:
        predict_scope("aaaaaaa_1", "Create a note titled 'Groceries' in Simple Note.",
                      make_settings(world, fake.base_url), world, "llm", cache=cache)
        messages = fake.requests_to("/chat/completions")[0]["body"]["messages"]
    assert len(messages) == 3  # system, acknowledgement, the request: no demo left


def test_second_call_is_served_from_cache(world: WorldData, cache: PredictionCache) -> None:
    with FakeOpenAI([GOOD_ANSWER]) as fake:
        settings = make_settings(world, fake.base_url)
        first = predict_scope(DEV_TASK, INSTRUCTION, settings, world, "llm", cache=cache)
        second = predict_scope(DEV_TASK, INSTRUCTION, settings, world, "llm", cache=cache)
        assert len(fake.requests_to("/chat/completions")) == 1
    assert not first.cached and second.cached and second.apis == first.apis
    assert second.usage.cost_usd == 0.0
    files = list(cache.directory.iterdir())
    assert len(files) == 1 and files[0].suffix == ".json"  # no temp files left behind
    assert json.loads(files[0].read_text())["raw_output"] == GOOD_ANSWER


def test_cache_key_changes_with_model_and_instruction(world: WorldData, cache: PredictionCache) -> None:
    with FakeOpenAI(default_chat_reply=GOOD_ANSWER) as fake:
        predict_scope(DEV_TASK, INSTRUCTION, make_settings(world, fake.base_url), world, "llm", cache=cache)
        predict_scope(DEV_TASK, INSTRUCTION + " ", make_settings(world, fake.base_url), world, "llm", cache=cache)
        other = make_settings(world, fake.base_url, model="gpt-4o-mini")
        predict_scope(DEV_TASK, INSTRUCTION, other, world, "llm", cache=cache)
        bodies = [r["body"] for r in fake.requests_to("/chat/completions")]
    assert len(bodies) == 3
    assert bodies[2]["model"] == "gpt-4o-mini" and bodies[2]["temperature"] == 0


def test_temperature_rejection_is_retried_without_it(world: WorldData, cache: PredictionCache) -> None:
    replies = [FakeReply("Unsupported value: 'temperature' does not support 0 with this model.", status=400),
               GOOD_ANSWER]
    with FakeOpenAI(replies) as fake:
        prediction = predict_scope(DEV_TASK, INSTRUCTION, make_settings(world, fake.base_url, model="custom-model"),
                                   world, "llm", cache=cache)
        bodies = [r["body"] for r in fake.requests_to("/chat/completions")]
    assert [("temperature" in b) for b in bodies] == [True, False]
    assert prediction.predictor == "llm"


def test_no_key_falls_back_to_lexical(world: WorldData, cache: PredictionCache) -> None:
    settings = make_settings(world, "http://127.0.0.1:9/v1", key=None)
    for requested in ("auto", "llm"):
        prediction = predict_scope(DEV_TASK, INSTRUCTION, settings, world, requested, cache=cache)
        assert prediction.predictor == "lexical" and prediction.requested == requested
        assert prediction.fallback_reason == "llm: OPENAI_API_KEY is not set"
        assert prediction.apis[0] == "supervisor.complete_task" and "spotify.login" in prediction.apis


def test_a_missing_key_is_warned_about_once_per_run(world: WorldData, cache: PredictionCache,
                                                    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    import green_agent.scoping.select as select

    monkeypatch.setattr(select, "_no_key_warned", threading.Event())  # a fresh process
    settings = make_settings(world, "http://127.0.0.1:9/v1", key=None)
    with caplog.at_level(logging.WARNING, logger="green_agent.scoping.select"):
        for _ in range(3):
            assert predict_scope(DEV_TASK, INSTRUCTION, settings, world, "auto", cache=cache).fallback_reason
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "falls back to lexical" in warnings[0] and "every task of this run" in warnings[0]


def test_garbage_answer_falls_back_and_is_not_cached(world: WorldData, cache: PredictionCache) -> None:
    with FakeOpenAI(["I think you should use Spotify.\nspotify.teleport"]) as fake:
        prediction = predict_scope(DEV_TASK, INSTRUCTION, make_settings(world, fake.base_url), world, "auto",
                                   cache=cache)
    assert prediction.predictor == "lexical" and prediction.requested == "auto"
    assert "named no known API" in prediction.fallback_reason
    assert not cache.directory.exists() or not list(cache.directory.iterdir())


def test_unreachable_endpoint_falls_back(world: WorldData, cache: PredictionCache) -> None:
    settings = make_settings(world, f"http://127.0.0.1:{free_port()}/v1")
    prediction = predict_scope(DEV_TASK, INSTRUCTION, settings, world, "llm", cache=cache)
    assert prediction.predictor == "lexical"
    assert prediction.fallback_reason.startswith("llm: cannot reach the OpenAI endpoint")


def test_timeout_falls_back(world: WorldData, cache: PredictionCache) -> None:
    with FakeOpenAI(default_chat_reply=None, chat_replies=[FakeReply(GOOD_ANSWER, delay_s=3)] * 2) as fake:
        prediction = predict_scope(DEV_TASK, INSTRUCTION, make_settings(world, fake.base_url), world, "llm",
                                   cache=cache, llm_timeout_s=0.5)
    assert prediction.predictor == "lexical" and "timeout after 0.5s" in prediction.fallback_reason


def test_api_error_falls_back_without_leaking_the_key(world: WorldData, cache: PredictionCache) -> None:
    key = "sk-live-SECRETSECRET123456"
    with FakeOpenAI([FakeReply(f"Incorrect API key provided: {key}", status=401)]) as fake:
        prediction = predict_scope(DEV_TASK, INSTRUCTION, make_settings(world, fake.base_url, key=key), world, "llm",
                                   cache=cache)
        assert fake.requests_to("/chat/completions")  # the call was made
    assert prediction.predictor == "lexical" and "OpenAI API error 401" in prediction.fallback_reason
    assert "SECRET" not in prediction.model_dump_json()


def test_llm_predictor_cap_applies(world: WorldData, cache: PredictionCache) -> None:
    with FakeOpenAI([GOOD_ANSWER]) as fake:
        predictor = LlmPredictor(world, model="gpt-5-mini", api_key="sk-x", base_url=fake.base_url, cap=3, cache=cache)
        prediction = predictor.predict(DEV_TASK, INSTRUCTION)
    assert prediction.apis == ["supervisor.complete_task", "spotify.login", "spotify.search_songs"]
