"""What the battle page gets from the Green, without processes: the Blue's call feed, the compact
result, the outbound scrub (local paths, fix-its) and the folded SDK tool-call entries.

Mocked contract: backend `POST {backend}/battles/{id}` -> 204.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import responses

from green_agent.agentbeats import outbound, result_post, sdk_tool_log
from green_agent.agentbeats.blue_feed import BlueFeed, render_batch, to_blue_call
from kernel.call_log_reader import CallLogTail
from green_agent.agentbeats.reporter import BackendReporter
from kernel.call_record import CallRecord
from markdown_shape import assert_reads_without_css
from green_agent.models.result import (BattleResult, CleanupRecord, CompletionRecord, ErrorRecord, EvalTestRecord,
                                       EvaluationRecord, ScopeRecord, VersionsRecord)

BACKEND = "http://127.0.0.1:18002"
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def call_line(battle_id: str | None, tool: str = "spotify__login", **changes: object) -> str:
    fields = {"timestamp": T0, "battle_id": battle_id, "task_id": "t_1", "tool_name": tool, "success": True,
              "duration_ms": 12.5}
    record = CallRecord(**(fields | changes))
    return record.model_dump_json() + "\n"


def write(path: Path, text: str) -> None:
    with path.open("a") as handle:
        handle.write(text)


# --- the Blue's call feed ------------------------------------------------------------------------

def test_tail_reads_only_new_complete_lines_of_its_battle(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    write(log, call_line("b-1", "before__session"))  # written before the battle's session: never read
    tail = CallLogTail(log, "b-1")
    write(log, call_line("b-1") + call_line("other") + "not json b-1\n" + call_line(None, refused="no_battle"))
    partial = call_line("b-1", "venmo__login")
    write(log, partial[:20])
    assert [r.tool_name for r in tail.read_new()] == ["spotify__login"]
    write(log, partial[20:])
    assert [r.tool_name for r in tail.read_new()] == ["venmo__login"]
    assert tail.read_new() == []


def test_tail_of_a_missing_log_reads_nothing_until_it_appears(tmp_path: Path) -> None:
    tail = CallLogTail(tmp_path / "later.jsonl", "b-1")
    assert tail.read_new() == []
    write(tmp_path / "later.jsonl", call_line("b-1"))
    assert len(tail.read_new()) == 1


def test_feed_batches_by_count_and_flushes_the_rest_at_stop(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    posted: list[tuple[str, dict, str]] = []
    feed = BlueFeed(CallLogTail(log, "b-1"), lambda m, d, md: posted.append((m, d, md)), max_calls=3, max_age_s=3600)
    write(log, "".join(call_line("b-1") for _ in range(4)))
    feed.poll()
    assert len(posted) == 1 and posted[0][0].startswith("3 tool calls (#1-#3)")
    write(log, call_line("b-1", "gmail__send", success=False, error="no | such\nthread", in_scope=False))
    feed.stop()
    assert len(posted) == 2 and feed.calls_seen == 5
    message, detail, markdown = posted[1]
    assert message == "2 tool calls (#4-#5): 1 ok, 1 error, 1 out of scope"
    assert detail == {"calls": "#4-#5", "ok": 1, "errors": 1, "out_of_scope": 1,
                      "tools": ["gmail__send", "spotify__login"]}
    assert "• #5 `gmail__send` · out of scope · error: no \\| such thread · 12 ms" in markdown.splitlines()
    assert "|" not in markdown.replace("\\|", "")  # no table: the UI shows its cells without padding
    feed.stop()  # idempotent: nothing new, nothing posted
    assert len(posted) == 2


def test_feed_posts_a_small_batch_once_it_is_old_enough(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    posted: list[str] = []
    feed = BlueFeed(CallLogTail(log, "b-1"), lambda m, d, md: posted.append(m), max_calls=100, max_age_s=0.0)
    write(log, call_line("b-1"))
    feed.poll()
    assert posted == ["1 tool call (#1): 1 ok, 0 error, 0 out of scope"]


def test_feed_thread_posts_while_running(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    posted: list[str] = []
    feed = BlueFeed(CallLogTail(log, "b-1"), lambda m, d, md: posted.append(m), max_calls=2, max_age_s=3600, poll_s=0.01)
    feed.start()
    write(log, call_line("b-1") + call_line("b-1"))
    deadline = datetime.now() + timedelta(seconds=5)
    while not posted and datetime.now() < deadline:
        pass
    feed.stop()
    assert posted and posted[0].startswith("2 tool calls")


def test_a_long_error_is_cut_and_arguments_are_never_shown() -> None:
    record = CallRecord(timestamp=T0, battle_id="b", tool_name="x__y", success=False, duration_ms=1,
                        error="e" * 500, arguments={"password": "hunter2-secret"})
    call = to_blue_call(7, record)
    assert len(call.error) == 80
    assert "hunter2" not in json.dumps(render_batch([call]))


# --- the result entry ----------------------------------------------------------------------------

LOCAL = Path.home() / "wt" / "runs"
"""A local directory as the Green's machine would have it (never created: only its name is used)."""
ABSOLUTE = re.compile(r"(?<![\w.:/~\-<>])/(?:tmp|home|work|root|usr|var|opt)/")


def result(**changes: object) -> BattleResult:
    base = dict(
        battle_id="b-1", task_id="7c1a0e2_1", blue="AppWorld reference Blue", blue_agent_name="AppWorld reference Blue",
        status="completed", winner="green_agent", outcome="failed", reason="1/2 tests passed", difficulty=1,
        evaluation=EvaluationRecord(success=False, num_tests=2, passes=[EvalTestRecord(requirement="note exists")],
                                    failures=[EvalTestRecord(requirement="note title is 'Groceries'", label="no_op_fail",
                                                             trace="AssertionError: ...")]),
        scope=ScopeRecord(predictor="ground_truth", apis=["a.b", "c.d"], recall=1.0),
        completion=CompletionRecord(completed=True, ended_by="completed", waited_s=3.2, deadline_s=600),
        trajectory={"total_calls": 9, "failed_calls": 1, "out_of_scope_calls": 0, "api_recall": 1.0, "api_precision": 0.5,
                    "log_path": str(LOCAL / "b-1" / "mcp_calls.jsonl"), "log_found": True},
        archive={"log_path": str(LOCAL / "b-1" / "logs"), "outputs_dir": str(LOCAL / "b-1" / "outputs"),
                 "state_persisted": True, "logs_saved": True},
        timings={"setup": 0.5, "wait": 3.2, "metrics": 1.0},
        cleanup=CleanupRecord(ok=True, closed=True, refused_calls={"no_battle": 2}),
        versions=VersionsRecord(appworld_green="0.1"), run_dir=str(LOCAL / "b-1"),
        started_at=T0, finished_at=T0 + timedelta(seconds=42))
    return BattleResult(**(base | changes))


def test_markdown_opens_with_the_winner_and_why_then_bold_bullets_and_failed_requirements() -> None:
    text = result_post.render_markdown(result())
    lines = text.splitlines()
    assert lines[0] == "**Green wins**: the task was not done; not met: note title is 'Groceries'"
    assert "• **Tests:** 1 of 2 tests passed" in text and text.count("tests passed") == 1
    assert text.index("• **How the Blue ended:**") < text.index("**Failed requirements**") < text.index("**Steps**")
    assert "• note title is 'Groceries': the change the task asked for (`no_op_fail`)" in lines
    assert "• 2 setup: 0.50 s  " in lines and "• 8 metrics: 1.00 s" in text
    assert "|" not in text and not [line for line in lines if line.startswith("- ")]  # the UI shows neither
    assert "gold recall 1.00" in text and "precision" not in text  # one recall: the scope's
    assert "AssertionError" not in text and str(LOCAL) not in text and not ABSOLUTE.search(text)
    assert "AppWorld reference Blue" in text
    assert_reads_without_css(text)


def test_detail_has_at_most_six_keys_and_no_local_path() -> None:
    detail = result_post.compact_detail(result())
    pretty = json.dumps(detail, indent=2)
    assert str(LOCAL) not in pretty and not ABSOLUTE.search(pretty)
    assert detail == {"winner": "green_agent", "outcome": "failed", "tests_passed": "1/2", "duration_s": 42.0,
                      "evidence": "<runs>/b-1/result.json"}


def test_a_question_posts_the_blues_answer_but_never_the_expected_one() -> None:
    asked = result(evaluation=EvaluationRecord(success=False, num_tests=1, failures=[EvalTestRecord(
        requirement="assert answers match.", label="no_op_fail", trace="AssertionError:  '12' == '445.29'")]))
    detail, message, markdown = (result_post.compact_detail(asked), result_post.result_message(asked),
                                 result_post.render_markdown(asked))
    assert len(detail) == 6 and detail["blue_answer"] == "12"
    assert "Blue's answer: 12" in message.splitlines() and "• **Blue's answer:** 12" in markdown
    assert all("445.29" not in text for text in (json.dumps(detail), message, markdown))


def test_the_message_is_the_explanation_in_plain_lines() -> None:
    lines = result_post.result_message(result(instruction="Rename my grocery note.")).splitlines()
    assert lines[0] == "Green wins: the task was not done; not met: note title is 'Groceries'."
    assert lines[1] == "Task 7c1a0e2_1: Rename my grocery note."
    assert "Failed: note title is 'Groceries' (the change the task asked for)" in lines
    assert any(line.startswith("Scope: ground_truth predictor") and "gold recall 1.00" in line for line in lines)


def test_an_unjudged_battle_is_a_draw_with_the_error_first() -> None:
    failed = result(status="infra_error", winner=None, outcome="infra_error", evaluation=None,
                    error=ErrorRecord(type="AppWorldUnavailableError", step="setup",
                                      message="AppWorld env server at http://127.0.0.1:8000 is unreachable: fix --env-url"))
    text = result_post.render_markdown(failed)
    assert text.startswith("**Draw (not judged)**: an infrastructure error in step setup stopped the battle")
    assert "fix --env-url" in result_post.result_message(failed)
    assert_reads_without_css(text)


# --- outbound: what may leave for the backend ----------------------------------------------------

def test_local_paths_are_replaced_and_urls_kept(tmp_path: Path) -> None:
    outbound.register_local_root(tmp_path / "runs", "runs")
    text = (f"saved {tmp_path}/runs/b-1/result.json; log {Path.home() / 'x' / 'y.log'}; see "
            "http://127.0.0.1:10000/b/tok/mcp and /initialize")
    out = outbound.scrub_paths(text)
    assert "<runs>/b-1/result.json" in out and "/y.log" in out
    assert "http://127.0.0.1:10000/b/tok/mcp" in out and "/initialize" in out
    assert str(tmp_path) not in out and str(Path.home()) not in out and not ABSOLUTE.search(out)


@responses.activate
def test_the_battle_token_in_a_gateway_url_is_never_posted() -> None:
    responses.post(f"{BACKEND}/battles/b-1", status=204)
    token = "3LivTmH4GPMN_b_24txrep3cwp-8ercQazFnkg_bXj4"
    BackendReporter("b-1", BACKEND).progress("Step 4", {"mcp_url": f"http://127.0.0.1:10000/b/{token}/mcp"})
    body = json.loads(responses.calls[0].request.body)
    assert token not in json.dumps(body) and body["detail"]["mcp_url"] == "<local:10000>/b/[REDACTED]/mcp"


def test_local_urls_lose_their_host_and_public_ones_stay() -> None:
    text = ("Blue at http://127.0.0.1:9113/ and ws://localhost:9002/ws/battles, env http://0.0.0.0:8000, "
            "lan http://192.168.1.20:80/x http://10.0.0.7 http://172.20.1.1:5/ http://box.local:9/ [::1] "
            "http://[::1]:7/ but https://api.openai.com/v1 and http://172.32.0.1/")
    out = outbound.scrub_local_urls(text)
    assert out == ("Blue at <local:9113>/ and <local:9002>/ws/battles, env <local:8000>, lan <local:80>/x <local> "
                   "<local:5>/ <local:9>/ [::1] <local:7>/ but https://api.openai.com/v1 and http://172.32.0.1/")


def test_step_details_never_carry_the_supervisor_the_blue_url_or_gold_apis() -> None:
    from green_agent.agentbeats.session import progress_detail

    setup = progress_detail("setup", {"experiment_name": "b-1_t_1", "task": {
        "task_id": "t_1", "instruction": "Do it.", "datetime": "2023-05-18T12:00:00",
        "supervisor": {"first_name": "Jo", "last_name": "Doe", "email": "jo@x.com", "phone_number": "5551234"}}})
    assert setup == {"task_id": "t_1", "instruction": "Do it.", "task_datetime": "2023-05-18T12:00:00",
                     "experiment_name": "b-1_t_1"}
    dispatch = progress_detail("dispatch", {"blue_url": "http://127.0.0.1:9113", "message_id": "m-1",
                                            "agent": {"name": "Reference Blue", "url": "http://127.0.0.1:9113/",
                                                      "version": "1"}})
    assert dispatch == {"blue": "Reference Blue", "blue_version": "1", "message_id": "m-1"}
    gold = ["supervisor.complete_task", "spotify.login", "spotify.show_song"]
    scope = progress_detail("scope", {"predictor": "ground_truth", "requested": "ground_truth", "apis": gold})
    assert scope["api_count"] == 3 and not any(api in json.dumps(scope) for api in gold[1:])
    guessed = progress_detail("scope", {"predictor": "lexical", "requested": "auto", "apis": gold})
    assert guessed["apis"] == gold  # a prediction is no test-set information


def test_fixits_name_scenario_toml_keys() -> None:
    out = outbound.scenario_fixits("start it (`appworld-green world up`) or fix --env-url; or use --predictor none")
    assert "`env_url` in the [appworld] table of scenario.toml" in out
    assert '`predictor = "none"` in the [appworld] table of scenario.toml' in out and "--" not in out


@responses.activate
def test_every_posted_event_is_scrubbed(tmp_path: Path) -> None:
    responses.post(f"{BACKEND}/battles/b-1", status=204)
    reporter = BackendReporter("b-1", BACKEND)
    reporter.progress("Step 7", {"outputs_dir": str(tmp_path / "runs" / "b-1" / "outputs"), "hint": "fix --env-url"})
    reporter.report(result())
    bodies = [json.loads(c.request.body) for c in responses.calls]
    raw = json.dumps(bodies)
    assert str(tmp_path) not in raw and str(LOCAL) not in raw and not ABSOLUTE.search(raw) and "--env-url" not in raw
    assert bodies[1]["detail"]["winner"] == "green_agent"


@responses.activate
def test_blue_entries_carry_the_blue_name() -> None:
    responses.post(f"{BACKEND}/battles/b-1", status=204)
    BackendReporter("b-1", BACKEND).progress("1 tool call", reported_by="AppWorld reference Blue")
    assert json.loads(responses.calls[0].request.body)["reported_by"] == "AppWorld reference Blue"


# --- the SDK's tool-call entries -----------------------------------------------------------------

@responses.activate
def test_sdk_tool_call_entries_are_folded_into_the_green() -> None:
    responses.post(f"{BACKEND}/battles/b-1", status=204)
    assert sdk_tool_log.post_folded("b-1", BACKEND, "Calling tool setup_appworld_environment", {"battle_id": "b-1"},
                                    reported_by="green_agent (agentbeats sdk toolcall hooks)") is None
    body = json.loads(responses.calls[0].request.body)
    assert (body["reported_by"], body["message"]) == ("green_agent", "Calling tool setup_appworld_environment")
    sdk_tool_log.install()
    from agentbeats import agent_executor

    assert agent_executor.update_battle_process is sdk_tool_log.post_folded
    assert sdk_tool_log.install() is False


def test_folded_post_reports_failure_like_the_sdk() -> None:
    assert sdk_tool_log.post_folded("b-1", "http://127.0.0.1:1", "x", reported_by="g") is False
