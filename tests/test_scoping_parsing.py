"""Strict parsing of model answers (upstream's rules) and the scope model."""

from __future__ import annotations

from green_agent.models.scope import ScopePrediction
from green_agent.scoping.base import complete_task_first
from green_agent.scoping.parsing import parse_api_lines

KNOWN = {"supervisor.complete_task", "supervisor.show_profile", "spotify.login", "spotify.search_songs",
         "spotify.create_playlist", "gmail.send_email", "gmail.login"}


def test_garbage_and_unknown_names_are_dropped() -> None:
    text = "Sure! Here are the APIs:\nspotify.login\nspotify.fly_to_moon\nnot an api at all\n\nspotify.search_songs\n"
    parsed = parse_api_lines(text, KNOWN, cap=20)
    assert parsed.apis == ["supervisor.complete_task", "spotify.login", "spotify.search_songs"]
    assert parsed.matched == 2
    assert "spotify.fly_to_moon" in parsed.rejected and "Sure! Here are the APIs:" in parsed.rejected


def test_duplicates_case_whitespace_and_mcp_form() -> None:
    text = "  Spotify.Login  \nSPOTIFY__SEARCH_SONGS\nspotify.login\n\tgmail__send_email\t\n- `gmail.login`\n2. spotify.login"
    parsed = parse_api_lines(text, KNOWN, cap=20)
    assert parsed.apis == ["supervisor.complete_task", "spotify.login", "spotify.search_songs", "gmail.send_email",
                           "gmail.login"]


def test_partial_or_embedded_names_do_not_count() -> None:
    text = "use spotify.login first\nspotify.login()\nspotify.log\napps: spotify.search_songs"
    parsed = parse_api_lines(text, KNOWN, cap=20)
    assert parsed.apis == ["supervisor.complete_task"]
    assert parsed.matched == 0


def test_complete_task_forced_first_even_when_listed_last() -> None:
    parsed = parse_api_lines("spotify.login\ngmail.login\nsupervisor.complete_task", KNOWN, cap=20)
    assert parsed.apis == ["supervisor.complete_task", "spotify.login", "gmail.login"]
    assert parsed.matched == 2


def test_over_long_list_is_cut_at_the_cap_keeping_complete_task() -> None:
    known = {f"app.api_{i}" for i in range(40)} | {"supervisor.complete_task"}
    text = "\n".join(f"app.api_{i}" for i in range(40))
    parsed = parse_api_lines(text, known, cap=20)
    assert len(parsed.apis) == 20
    assert parsed.apis[0] == "supervisor.complete_task"
    assert parsed.apis[1:] == [f"app.api_{i}" for i in range(19)]


def test_empty_answer_gives_only_complete_task() -> None:
    parsed = parse_api_lines("", KNOWN, cap=20)
    assert parsed.apis == ["supervisor.complete_task"] and parsed.matched == 0


def test_complete_task_first_dedups_and_caps() -> None:
    assert complete_task_first(["a.b", "a.b", "supervisor.complete_task", "c.d"], 2) == ["supervisor.complete_task", "a.b"]
    assert complete_task_first([], None) == ["supervisor.complete_task"]


def test_prediction_tool_names_use_mcp_form() -> None:
    prediction = ScopePrediction(predictor="lexical", apis=["supervisor.complete_task", "simple_note.create_note"])
    assert prediction.tool_names == ["supervisor__complete_task", "simple_note__create_note"]
    dumped = prediction.model_dump()
    assert set(dumped) >= {"predictor", "apis", "fallback_reason", "usage", "cached", "model", "prompt_version"}
    assert dumped["usage"] == {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
