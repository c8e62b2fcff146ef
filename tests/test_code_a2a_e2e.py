"""Code mode on the A2A path: `assess` with `interaction: "code"`, the reference and no-op purples, real servers.

The in-band bridge offers the purple one tool, `execute` (protocol appworld-a2a-code/1): the reference
purple replies with its task's reference solution as one fenced python block and must win; the no-op
purple sends only `apis.supervisor.complete_task()` and must lose. The `llm` purple, against the scripted
OpenAI-compatible stand-in, reads the traceback of its first code, is corrected once, and wins.
A hostile purple's code attacks the protocol between the gateway and its REPL (issue 39): each attack is the
purple's own fault, judged on the world as it stands, never retried, and the honest purple beside it wins.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from a2a_purples import HostilePurple
from a2a_support import start
from blue_agent.code_react import SYSTEM_PROMPT
from code_llm_script import SCRIPT, TASK, last_user_message
from fake_openai import FakeOpenAI
from kernel.world_data import WorldData
from mcp_gateway.request_limits import MAX_REQUEST_LINE_BYTES
from test_hostile_purple import attempts_of, folder_bytes
from test_a2a_e2e import assess, env, first, green, purples, result_of  # noqa: F401 - fixtures

pytestmark = pytest.mark.e2e


def test_the_reference_purple_wins_and_the_noop_loses_in_code_mode(green, purples, appworld_root: Path) -> None:  # noqa: ANN001, F811
    tasks = first(appworld_root, 2)
    won = assess(green.url, {"participants": {"agent": purples["reference"]},
                             "config": {"task_ids": tasks, "workers": 2, "interaction": "code"}})
    assert won.state == "completed", won.statuses
    assert won.data is not None and won.data["tgc"] == 100.0 and won.data["config"]["interaction"] == "code"
    versions = won.data["versions"]
    assert versions["protocol"] == "appworld-a2a-code/1" and versions["isolation"].startswith("bubblewrap")
    result = result_of(won.data, tasks[0])
    assert result.interaction == "code" and result.isolation and result.trajectory.code.executions == 1
    report = result.completion.bridge_report
    assert report.ended_by == "complete_task" and report.steps == 1 and report.tool_calls == 1
    lost = assess(green.url, {"participants": {"agent": purples["noop"]},
                              "config": {"task_ids": tasks[:1], "interaction": "code"}})
    assert lost.state == "completed" and lost.data is not None and lost.data["tgc"] == 0.0
    assert result_of(lost.data, tasks[0]).outcome == "failed"


def test_the_llm_purple_reads_its_traceback_and_solves_the_task_in_code_mode(green, env, tmp_path: Path) -> None:  # noqa: ANN001, F811
    with FakeOpenAI(chat_replies=list(SCRIPT)) as fake:
        llm_env = {**env, "OPENAI_API_KEY": "sk-test-code", "OPENAI_BASE_URL": fake.base_url}
        process, url, _ = start(["purple", "--kind", "llm"], llm_env, tmp_path / "llm.log")
        try:
            outcome = assess(green.url, {"participants": {"agent": url}, "config": {
                "task_ids": [TASK], "interaction": "code", "predictor": "ground_truth"}})
        finally:
            process.stop()
        requests = [r["body"] for r in fake.requests if r["path"].endswith("/chat/completions")]
    assert outcome.state == "completed", outcome.statuses
    assert len(requests) == 3
    assert requests[0]["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT} and "tools" not in requests[0]
    assert "appworld-a2a-code/1" in last_user_message(requests[0])
    fed_back = last_user_message(requests[1])  # the sandbox's traceback, as the Green relayed it
    assert fed_back.startswith("Output:\nExecution failed. Traceback:") and "KeyError: 'e_mail'" in fed_back
    corrected = last_user_message(requests[2])  # the Green's corrective message, in code mode's terms
    assert corrected.startswith("Your last message held no code to run (") and "```python" in corrected
    result = result_of(outcome.data, TASK)
    assert (result.outcome, result.interaction) == ("passed", "code"), result.reason
    report = result.completion.bridge_report
    assert (report.ended_by, report.tool_calls, report.corrections) == ("complete_task", 2, 1)
    code = result.trajectory.code
    assert (code.executions, code.failed_executions) == (2, 1)


CODE_ATTACKS = ("code_stall", "code_surrogate", "code_surrogate_arg", "code_nan")


def test_code_that_attacks_the_protocol_is_charged_to_the_purple_never_retried(  # noqa: F811
        green, appworld_root: Path) -> None:  # noqa: ANN001
    modes = [*CODE_ATTACKS, "code_solve"]
    tasks = first(appworld_root, len(modes))
    with HostilePurple(dict(zip(tasks, modes)), world=WorldData(appworld_root)) as purple:
        outcome = assess(green.url, {"participants": {"agent": purple.url}, "config": {
            "task_ids": tasks, "workers": 2, "max_steps": 2, "turn_timeout_s": 60, "interaction": "code",
            "predictor": "ground_truth"}})
    assert outcome.state == "completed", outcome.statuses
    data = outcome.data
    rows = {mode: row for mode, row in zip(modes, (next(r for r in data["rows"] if r["task_id"] == t) for t in tasks))}
    why = {mode: (row["outcome"], row["purple_fault"], row["attempts"], (row["reason"] or "")[:200])
           for mode, row in rows.items()}
    assert data["infra_errors"] == 0 and not data["incomplete"], why
    assert all(statuses == [statuses[0]] for statuses in attempts_of(data).values()), attempts_of(data)  # no retry
    assert all(row["attempts"] == 1 for row in rows.values()), why
    assert all(rows[mode]["outcome"] in ("failed", "blue_error") for mode in CODE_ATTACKS), why
    assert rows["code_solve"]["outcome"] == "passed", why
    executions = [json.loads(line) for task in tasks[:len(CODE_ATTACKS)]
                  for log in (Path(data["run_dir"]) / "tasks" / task).rglob("mcp_executions.jsonl")
                  for line in log.read_text().splitlines()]
    stalled = [e for e in executions if e["killed"]]
    assert any("protocol" in e["killed"] for e in stalled), executions  # the forged 300 kB call id
    assert not any("battle ended" in (e["killed"] or "") for e in executions), executions
    assert folder_bytes(Path(data["run_dir"])) < 5 * 2**20


def test_a_call_too_long_for_appworld_fails_inside_the_code_and_the_battle_is_judged_once(  # noqa: F811
        green, appworld_root: Path) -> None:  # noqa: ANN001
    """Issue 50 in code mode: the long call once ended the REPL with "its battle ended"; now the code gets AppWorld's
    failed-request form naming the limit, the REPL goes on, and the battle is judged on its first attempt."""
    task = first(appworld_root, 1)[0]
    with HostilePurple({task: "code_long_query"}) as purple:
        outcome = assess(green.url, {"participants": {"agent": purple.url}, "config": {
            "task_ids": [task], "max_steps": 5, "turn_timeout_s": 60, "interaction": "code",
            "predictor": "ground_truth"}})
    assert outcome.state == "completed", outcome.statuses
    row = outcome.data["rows"][0]
    assert (row["outcome"], row["attempts"], outcome.data["infra_errors"]) == ("failed", 1, 0), row
    assert attempts_of(outcome.data) == {task: ["completed"]}
    (answer,) = [text for texts in purple.answers.values() for text in texts]
    assert "Exception: Response status code is 422:\n{\"message\":\"Request too large" in answer, answer[-600:]
    assert f"takes at most {MAX_REQUEST_LINE_BYTES}" in answer and "battle ended" not in answer
    code = result_of(outcome.data, task).trajectory.code
    assert (code.executions, code.failed_executions) == (2, 1)  # the REPL was not ended: the second one ran
