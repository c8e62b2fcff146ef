"""Faults on purpose end to end: real AppWorld servers, the real gateway, the shipped Blues and purples, on loopback.

One dev task whose reference solution changes the world (`TASK`, 14 calls; under `SPEC` its amazon login and a
write API are faulted) at rate 0.3, with `timeout_s=1` so the test stays fast (the plan does not depend on it):
- the reference Blue (no retry) fails and the reference-retry Blue passes, both judged, never an infra error;
- the retrying battle's world change log equals a fault-free battle's (a faulted call never reaches AppWorld);
- the same seed twice faults the same calls the same way, another seed other calls;
- each faulted call's record holds what the agent received, and the trace says the same;
- code mode: the REPL raises AppWorld's requester's exception; the retrying code passes;
- the A2A door: a sweep is a profile; the reference-retry purple passes through the bridge, the artifact carries it.
Bad specs are refused before anything starts (tests/test_fault_plan.py, also on the A2A door below).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from a2a_support import assess, env, green, start  # noqa: F401 - fixtures
from change_log_support import diff_change_logs, read_change_log
from green_agent.commands.battle import summary as battle_summary
from green_agent.engine.config import BattleChoices
from green_agent.local_battle import open_blue, run_on_slot
from green_agent.models.reliability_profile import ReliabilityProfile
from green_agent.models.result import BattleResult
from green_agent.runtime.slot import SlotSpec, SlotUrls, WorldSlot
from green_agent.steps.archive import state_digest
from green_agent.trace.reader import read_trace
from green_agent.trace.terminal import print_trace
from kernel.call_log_reader import read_call_log
from kernel.fault_spec import parse_fault_spec
from kernel.ports import free_port
from kernel.settings import Settings, load_settings
from kernel.task_ids import TaskRef
from test_batch_e2e import CLI, cli_env, slot_ports

pytestmark = pytest.mark.e2e

TASK = "f0a7c07_2"
SALT = "4f1c8a30f32f36a5a8cac12b82f36c0fafbf958bcfb6f4bbfdf8abf1780fafe9"
"""A published run's secret, fixed so the plan is known (`kernel.fault_spec`): under it and seed 1 the first call
(amazon's login) gets a 503, and 5 of the first 18 calls are faulted."""
SPEC = f"rate=0.3,seed=1,timeout_s=1,salt={SALT}"


@pytest.fixture(scope="module")
def e2e_settings(tmp_path_factory: pytest.TempPathFactory, appworld_root: Path) -> Settings:
    tmp = tmp_path_factory.mktemp("reliability-e2e")
    return load_settings().model_copy(update={"appworld_root": appworld_root, "runs_dir": tmp / "runs",
                                              "agentbeats_mcp_log_path": tmp / "calls.jsonl", "openai_api_key": None})


@pytest.fixture(scope="module")
def slot(e2e_settings: Settings) -> Iterator[tuple[SlotUrls, dict[str, str]]]:
    spec = SlotSpec(env_port=free_port(), apis_port=free_port(), gateway_port=free_port())
    runs = e2e_settings.runs_dir
    with ExitStack() as stack:
        world = stack.enter_context(WorldSlot(
            spec, appworld_root=e2e_settings.appworld_root, appworld_python=e2e_settings.appworld_python,
            log_dir=runs / "slot-logs", mcp_log_path=e2e_settings.agentbeats_mcp_log_path,
            lock_dir=runs / ".slot-locks"))
        blues = {blue: stack.enter_context(open_blue(blue, e2e_settings, world.urls, runs / "blue-logs"))
                 for blue in ("reference", "reference-retry", "reference-reckless")}
        yield world.urls, blues


def battle(settings: Settings, slot: tuple[SlotUrls, dict[str, str]], name: str, blue: str, spec: str | None,
           interaction: str = "tools") -> BattleResult:
    urls, blues = slot
    choices = BattleChoices(blue=blue, predictor="all", interaction=interaction,  # type: ignore[arg-type]
                            faults=parse_fault_spec(spec) if spec else None)
    return run_on_slot(TaskRef(task_id=TASK, source="id"), choices, settings, urls, blues[blue],
                       settings.runs_dir / name, f"rel-{name}", publish_salt=True)  # as `battle` does


def faults_of(result: BattleResult) -> list[tuple[int, str, str]]:
    assert result.trajectory is not None
    return [(c.position, c.api, c.kind) for c in result.trajectory.faulted_calls]


@pytest.fixture(scope="module")
def tools_runs(e2e_settings: Settings, slot: tuple[SlotUrls, dict[str, str]]) -> dict[str, BattleResult]:
    runs = {"reference": ("reference", SPEC), "retry": ("reference-retry", SPEC), "again": ("reference-retry", SPEC),
            "other_seed": ("reference-retry", SPEC.replace("seed=1", "seed=2")), "plain": ("reference-retry", None)}
    return {name: battle(e2e_settings, slot, name, blue, spec) for name, (blue, spec) in runs.items()}


def test_the_reference_blue_loses_to_the_faults_and_the_retrying_one_passes_never_an_infra_error(
        tools_runs: dict[str, BattleResult]) -> None:
    lost, won = tools_runs["reference"], tools_runs["retry"]
    assert (lost.status, lost.winner) == ("completed", "green_agent") and lost.outcome != "passed"
    assert (won.status, won.outcome, won.winner) == ("completed", "passed", "blue_agent")
    for result in (lost, won):
        assert result.faults == parse_fault_spec(SPEC) and result.error is None
        assert result.trajectory.upstream_faults == 0 and result.trajectory.faults_injected
    assert faults_of(lost)[0] == (1, "amazon.login", "error")  # the first call it made was faulted; it gave up
    assert len(won.trajectory.faulted_calls) >= 3 and all(c.recovered for c in won.trajectory.faulted_calls)
    assert won.trajectory.faults_recovered == won.trajectory.faults_injected
    assert {c.kind for c in won.trajectory.faulted_calls} <= {"error", "rate_limit", "timeout"}


def test_a_faulted_call_never_reaches_the_world(tools_runs: dict[str, BattleResult]) -> None:
    won, plain = tools_runs["retry"], tools_runs["plain"]
    assert plain.outcome == "passed" and plain.trajectory.faulted_calls == [] and plain.faults is None
    ends = [read_change_log(Path(r.run_dir) / "appworld" / "dbs") for r in (won, plain)]  # every app's log, exactly
    assert diff_change_logs(TASK, ends[0], ends[1]) == []
    assert any(ends[0][app] for app in ends[0] if app not in ("admin", "supervisor"))  # the task changed the world
    assert won.trajectory.total_calls == plain.trajectory.total_calls + len(won.trajectory.faulted_calls)


def test_the_same_seed_faults_the_same_calls_and_another_seed_others(tools_runs: dict[str, BattleResult]) -> None:
    assert faults_of(tools_runs["retry"]) == faults_of(tools_runs["again"]) == faults_of(tools_runs["reference"])[:1] \
        + faults_of(tools_runs["retry"])[1:]
    assert faults_of(tools_runs["other_seed"]) != faults_of(tools_runs["retry"])
    assert tools_runs["other_seed"].outcome == "passed"


def test_each_faulted_call_records_what_the_agent_received_and_the_trace_shows_it(
        tools_runs: dict[str, BattleResult]) -> None:
    won = tools_runs["retry"]
    records = read_call_log(Path(won.archive.call_log))
    faulted = [r for r in records if r.fault]
    assert [(r.fault.position, r.fault.kind) for r in faulted] == [(p, k) for p, _, k in faults_of(won)]
    traced = {t.seq: t for t in read_trace(Path(won.run_dir) / "trace.jsonl") if t.kind == "tool_call"}
    for record in faulted:
        assert record.fault.delivered and record.status_code in (429, 503, 504) and not record.success
        assert traced[record.seq].fault == record.fault.kind and traced[record.seq].result == record.fault.delivered
    page = (Path(won.run_dir) / "trace.html").read_text()
    assert page.count('class="tag injected"') == len(faulted)
    assert page.count("recovered at call #") == len(faulted) and "recovers call #" in page  # each one redone
    console = io.StringIO()
    print_trace(read_trace(Path(won.run_dir) / "trace.jsonl"), file=console)
    shown = console.getvalue()
    assert shown.count("recovered at call #") == len(faulted)
    for record in faulted:  # what the agent received, printed once a fault (it was printed as the error too)
        same = sum(r.fault.delivered == record.fault.delivered for r in faulted)
        assert shown.count(record.fault.delivered[:60]) == same


def test_the_secret_is_in_nothing_the_agent_saw_and_published_once_the_battle_is_over(
        tools_runs: dict[str, BattleResult]) -> None:
    won = tools_runs["retry"]
    folder = Path(won.run_dir)
    holding = {p.relative_to(folder).as_posix() for p in folder.rglob("*")
               if p.is_file() and SALT in p.read_text("latin-1")}
    assert holding == {"result.json"}  # not the task message, no answer, no call record, no trace: only the verdict's
    assert won.fault_salt == SALT and won.faults.commitment == hashlib.sha256(SALT.encode()).hexdigest()
    assert tools_runs["plain"].fault_salt is None


def test_code_mode_raises_appworlds_requester_exception_and_the_retrying_code_passes(
        e2e_settings: Settings, slot: tuple[SlotUrls, dict[str, str]]) -> None:
    lost = battle(e2e_settings, slot, "code-reference", "reference", SPEC, "code")
    won = battle(e2e_settings, slot, "code-retry", "reference-retry", SPEC, "code")
    assert lost.outcome != "passed" and lost.status == "completed" and lost.error is None
    assert (won.outcome, won.interaction) == ("passed", "code")
    executions = [t for t in read_trace(Path(lost.run_dir) / "trace.jsonl") if t.kind == "execution"]
    first = read_call_log(Path(lost.archive.call_log))
    delivered = next(r.fault.delivered for r in first if r.fault)
    assert delivered.startswith("Response status code is 503:\n{\"message\":\"Service temporarily unavailable")
    assert delivered.splitlines()[0] in executions[0].result and "Exception: " in executions[0].result
    assert faults_of(won) and all(c.recovered for c in won.trajectory.faulted_calls)
    assert all(r.fault.delivered.startswith("Response status code is ")
               for r in read_call_log(Path(won.archive.call_log)) if r.fault)


def test_the_a2a_door_runs_the_profile_and_the_retrying_purple_passes(green, env, tmp_path: Path) -> None:  # noqa: F811
    """`config.faults` with a sweep: the `reliability` command's sequence through the bridge (a baseline, one arm per
    rate, one secret); the artifact's headline is the baseline's and `profile` holds every arm."""
    rejected = assess(green.url, {"participants": {"agent": "http://127.0.0.1:9"},
                                  "config": {"task_ids": [TASK], "faults": {"rate": 0.3, "seed": "1"}}})
    assert rejected.state == "rejected" and "config.faults: seed must be an integer" in rejected.statuses[-1]
    purple, url, _ = start(["purple", "--kind", "reference-retry"], env, tmp_path / "purple.log")
    try:
        outcome = assess(green.url, {"participants": {"agent": url}, "config": {"task_ids": [TASK], "predictor": "all",
                         "faults": {"rate": [0.3, 0.6], "seed": 1, "timeout_s": 1, "salt": SALT}}})
    finally:
        purple.stop()
    assert outcome.state == "completed", outcome.statuses
    data = outcome.data
    assert data["tgc"] == 100.0 and data["infra_errors"] == 0 and data["faults"] is None  # the baseline's headline
    assert data["run_dir"].endswith("/baseline") and data["rows"][0]["faults_injected"] is None
    profile = data["profile"]
    assert [(a["name"], a["rate"]) for a in profile["arms"]] == [("faults-rate0.3", 0.3), ("faults-rate0.6", 0.6)]
    assert [p["rate"] for p in profile["curve"]] == [0.3, 0.6] and profile["tgc_baseline"] == 100.0
    first = profile["arms"][0]
    assert first["tgc"] == 100.0 and first["ratio"] == 1.0 and first["faults"]["seed"] == 1
    assert first["recovery"]["faults_injected"] >= 3
    assert first["recovery"]["faults_recovered"] == first["recovery"]["faults_injected"]
    assert profile["fault_salt"] == SALT and profile["fault_commitment"] == hashlib.sha256(SALT.encode()).hexdigest()
    assert all("salt" not in a["faults"] for a in profile["arms"])  # published once, beside the commitment
    run = Path(data["run_dir"]).parent
    assert (run / "reliability.json").is_file() and (run / "reliability.html").is_file()
    assert json.loads((run / "faults-rate0.6" / "results.json").read_text())["fault_salt"] == SALT
    assert "Reliability profile against this baseline" in outcome.texts[0]


def test_the_a2a_door_asks_in_the_paraphrase_and_the_instruction_bound_purple_loses_it(  # noqa: F811
        green, env, tmp_path: Path) -> None:
    """`config.paraphrase`: a baseline in the task's own words, an arm in the world's authored strong wording; the
    purple that knows its task only by the wording passes the first and loses the second, and never saw the
    original in the arm (every message the bridge sent it)."""
    rejected = assess(green.url, {"participants": {"agent": "http://127.0.0.1:9"},
                                  "config": {"task_ids": [TASK], "paraphrase": ["loud"]}})
    assert rejected.state == "rejected" and "config.paraphrase: unknown strength 'loud'" in rejected.statuses[-1]
    purple, url, _ = start(["purple", "--kind", "instruction-bound"], env, tmp_path / "purple.log")
    try:
        outcome = assess(green.url, {"participants": {"agent": url},
                                     "config": {"task_ids": [TASK], "predictor": "all", "paraphrase": "strong"}})
    finally:
        purple.stop()
    assert outcome.state == "completed", outcome.statuses
    profile = outcome.data["profile"]
    assert outcome.data["tgc"] == 100.0 and [a["name"] for a in profile["arms"]] == ["paraphrase-strong"]
    arm = profile["arms"][0]
    assert arm["tgc"] == 0.0 and arm["ratio"] == 0.0 and [t["task_id"] for t in profile["lost"]] == [TASK]
    run = Path(outcome.data["run_dir"]).parent / "paraphrase-strong"
    row = json.loads((run / "results.json").read_text())["rows"][0]
    assert row["paraphrase"]["strength"] == "strong" and row["paraphrase"]["source"] == "authored"
    sent = [r.text or "" for r in read_trace((run / row["result_path"]).parent / "trace.jsonl")
            if r.kind == "green_message"]
    instruction = json.loads((Path(env["APPWORLD_ROOT"]) / "data" / "tasks" / TASK / "specs.json").read_text())[
        "instruction"]
    authored = [json.loads(line) for line in (Path(env["APPWORLD_ROOT"]) / "data" / "paraphrases" /
                                              "authored.jsonl").read_text().splitlines()]
    wording = next(p["text"] for p in authored if (p["task_id"], p["strength"], p["variant"]) ==
                   (TASK, "strong", row["paraphrase"]["variant"]))
    assert sent and wording in sent[0] and all(instruction not in text for text in sent)


PROFILE_TASKS = ["f0a7c07_2", "f0e5a05_3"]
"""Two dev tasks of two scenarios; the reference Blue (no retry) loses f0a7c07_2 under the sweep's plan."""


def test_the_reliability_command_runs_a_sweep_with_trials_and_writes_the_profile(
        appworld_root: Path, tmp_path: Path) -> None:
    """`reliability` end to end on real servers: a baseline and one arm per rate, every arm's files, the profile on
    the terminal (pass^1..2, the curve), reliability.json valid and linked from every run's report."""
    ports, _ = slot_ports(1)
    out = tmp_path / "rel"
    done = subprocess.run([CLI, "reliability", "--task-ids", ",".join(PROFILE_TASKS), "--blue", "reference",
                           "--predictor", "ground_truth", "--faults", "rate=0.3+0.6,seed=1,timeout_s=1",
                           "--trials", "2", "--out", str(out), "--slot-ports", ports, "--deadline", "120"],
                          env=cli_env(appworld_root, tmp_path), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert {p.name for p in out.iterdir() if p.is_dir()} == {"baseline", "faults-rate0.3", "faults-rate0.6"}
    profile = ReliabilityProfile.model_validate_json((out / "reliability.json").read_text())
    salt = profile.fault_salt
    assert salt and hashlib.sha256(salt.encode()).hexdigest() == profile.fault_commitment
    for arm in ("faults-rate0.3", "faults-rate0.6"):
        assert json.loads((out / arm / "results.json").read_text())["fault_salt"] == salt
        assert json.loads((out / arm / "run.json").read_text())["config"]["faults"]["commitment"] == \
            profile.fault_commitment
    assert profile.tgc_baseline == 100.0 and profile.arms[0].lost_tasks[:1] == ["f0a7c07_2"]
    assert profile.consistency is not None and set(profile.consistency.pass_hat_k) == {"1", "2"}
    assert "pass^1 1.00, pass^2 1.00" in done.stdout and "curve (fault rate: r_fault [interval]):" in done.stdout
    assert "  0.3: " in done.stdout and "  0.6: " in done.stdout and "lost faults-rate0.3 f0a7c07_2" in done.stdout
    for run in ("baseline", "faults-rate0.3", "faults-rate0.6"):
        assert 'href="../reliability.html"' in (out / run / "report.html").read_text()
    page = (out / "reliability.html").read_text()
    assert "faults-rate0.3/tasks/f0a7c07_2/" in page and "trace.html" in page


def test_a_faulted_battle_rejudges_equal_its_faults_never_replayed(tools_runs: dict[str, BattleResult],
                                                                  e2e_settings: Settings) -> None:
    """`rejudge` replays only calls that reached the world: a call answered with a fault on purpose is skipped."""
    won = tools_runs["retry"]
    env = {**os.environ, "APPWORLD_ROOT": str(e2e_settings.appworld_root), "OPENAI_API_KEY": ""}
    done = subprocess.run([str(Path(sys.executable).with_name("appworld-green")), "rejudge", won.run_dir],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "call logs replayed: 1 of 1 give the saved end state" in done.stdout
    assert done.stdout.rstrip().endswith("1 of 1 verdicts re-judged equal")


def _forged(source: BattleResult, folder: Path, mark: Callable[[list[dict]], None], unwrite: str | None = None) -> Path:
    """A copy of `source`'s battle folder whose call log `mark` edits; `unwrite`: a statement taken out of the
    saved supervisor state, result.json's digest of the state recomputed (what the marked call wrote, hidden)."""
    shutil.copytree(source.run_dir, folder)
    log = folder / "mcp_calls.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    mark(records)
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    if unwrite is not None:
        dbs = folder / "appworld" / "dbs"
        lines = (dbs / "supervisor.jsonl").read_text().splitlines(keepends=True)
        (dbs / "supervisor.jsonl").write_text("".join(line for line in lines if not line.startswith(unwrite)))
        record = json.loads((folder / "result.json").read_text())
        record["archive"]["dbs_digest"] = state_digest(dbs)
        (folder / "result.json").write_text(json.dumps(record))
    return folder


def _rejudged(folder: Path, settings: Settings) -> subprocess.CompletedProcess:
    env = {**os.environ, "APPWORLD_ROOT": str(settings.appworld_root), "OPENAI_API_KEY": ""}
    return subprocess.run([str(Path(sys.executable).with_name("appworld-green")), "rejudge", str(folder)],
                          capture_output=True, text=True, env=env, timeout=300)


def test_a_fault_marker_the_plan_does_not_account_for_is_a_forged_folder(tools_runs: dict[str, BattleResult],
                                                                        e2e_settings: Settings,
                                                                        tmp_path: Path) -> None:
    """The replay skips records marked as injected faults, so a forger would mark a real call as one: each such
    record must be where the run's spec, its published secret and the plan put a fault of that kind. The red
    team's case: in a run without faults, complete_task marked faulted and its write taken out of the saved state
    (re-judged "1 of 1 equal" before the check)."""
    def on_complete_task(records: list[dict]) -> None:  # a run without faults: supervisor is never faulted anyway
        (last,) = [r for r in records if r["tool_name"] == "supervisor__complete_task"]
        last["fault"] = {"kind": "error", "position": 3, "delivered": "Service temporarily unavailable"}

    def on_a_read(records: list[dict]) -> None:  # a faulted run: a read the plan never faulted
        read = next(r for r in records if r["tool_name"].startswith("amazon__show") and r["fault"] is None)
        read["fault"] = {"kind": "timeout", "position": 40, "delivered": "Gateway timeout"}

    cases = (  # before the check, the last two re-judged equal (the first differed only by AppWorld's own test)
        (_forged(tools_runs["plain"], tmp_path / "complete", on_complete_task, unwrite='["UPDATE tasks SET status=?'),
         "(supervisor__complete_task) is marked as an injected fault, but the run ran without faults"),
        (_forged(tools_runs["plain"], tmp_path / "plain-read", on_a_read),
         "is marked as an injected fault, but the run ran without faults"),
        (_forged(tools_runs["retry"], tmp_path / "faulted-read", on_a_read),
         "the plan puts no timeout fault at its position 40"))
    for folder, says in cases:
        done = _rejudged(folder, e2e_settings)
        assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
        assert says in done.stdout and done.stdout.rstrip().endswith("0 of 1 verdicts re-judged equal")


def test_a_lost_answer_reaches_the_world_so_a_blind_repeat_writes_twice_and_the_task_fails(
        e2e_settings: Settings, slot: tuple[SlotUrls, dict[str, str]], tmp_path: Path) -> None:
    """`lost_response`: every write's answer lost (up to `max_consecutive` in a row), the call itself forwarded. The
    reference-retry Blue repeats a 504 blindly, so the same write reaches the world again and AppWorld's tests fail
    the task; `rejudge` replays the lost calls too (they changed the world) and finds the state equal."""
    result = battle(e2e_settings, slot, "lost", "reference-retry",
                    f"rate=1,seed=1,kinds=lost_response,timeout_s=0.2,salt={SALT}")
    assert result.status == "completed" and result.outcome != "passed" and result.trajectory.upstream_faults == 0
    records = read_call_log(Path(result.archive.call_log))
    lost = [r for r in records if r.fault]
    assert lost and all(r.fault.kind == "lost_response" and r.fault.upstream_status and r.status_code == 504
                        and "did not answer within 0.2 seconds" in r.fault.delivered for r in lost)
    reached = [r.call_key for r in records if r.tool_name == lost[0].tool_name and (
        r.fault is not None or (r.status_code is not None and r.refused is None))]
    assert len(reached) >= 2 and len(set(reached)) == 1  # the same write reached the world again
    assert {c.repeated for c in result.trajectory.faulted_calls} == {True}
    assert result.trajectory.retries_after_fault >= 2
    done = _rejudged(Path(result.run_dir), e2e_settings)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "call logs replayed: 1 of 1 give the saved end state" in done.stdout


def test_a_loss_to_an_unrecovered_fault_is_named_wherever_the_verdict_is_shown(
        tools_runs: dict[str, BattleResult], e2e_settings: Settings, tmp_path: Path) -> None:
    """Issue 60: the reference Blue's battle under SPEC lost to the 503 on its first faultable call; the battle's summary, its
    page's verdict box, `appworld-green trace`, an eval's summary and its report name it, and count the fault as
    injected, apart from the agent's own failed calls."""
    lost = tools_runs["reference"]
    why = "lost after an unrecovered 503 on amazon.login (call 3 of 4)"  # after two supervisor calls
    assert why in lost.explanation.headline
    assert why in battle_summary(lost) and "1 injected fault(s), 0 recovered; 0 failed" in battle_summary(lost)
    assert why in (Path(lost.run_dir) / "trace.html").read_text()
    env = {**os.environ, "APPWORLD_ROOT": str(e2e_settings.appworld_root), "OPENAI_API_KEY": ""}
    shown = subprocess.run([str(Path(sys.executable).with_name("appworld-green")), "trace", lost.run_dir],
                           capture_output=True, text=True, env=env, timeout=120)
    assert shown.returncode == 0 and why in shown.stdout, shown.stdout[-2000:] + shown.stderr[-2000:]
    ports, _ = slot_ports(1)
    out = tmp_path / "eval"
    done = subprocess.run([str(Path(sys.executable).with_name("appworld-green")), "eval", "--task-ids", TASK,
                           "--blue", "reference", "--predictor", "all", "--faults", SPEC, "--out", str(out),
                           "--slot-ports", ports], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "faults injected 1, recovered 0 (by kind, recovered/injected: error 0/1)" in done.stdout
    assert f"{TASK} (trial 1): Green wins: {why}" in done.stdout
    report = (out / "report.html").read_text()
    assert 'id="headline-faults"' in report and ">0/1<" in report and why in report
    assert report.count('<td class="injected">injected fault: error</td>') == 1  # not the agent's failed call
    assert json.loads((out / "results.json").read_text())["rows"][0]["failed_calls"] == 0



def test_a_blue_that_retries_everything_at_once_pays_in_429s_and_calls_and_scores_no_better(
        tools_runs: dict[str, BattleResult], e2e_settings: Settings, slot: tuple[SlotUrls, dict[str, str]]) -> None:
    """The reckless Blue repeats every failure at once: each repeat within a 429's retry-after is answered 429 again
    (tools mode), so it spends its tries there and makes more calls than the retrying Blue, for no better score."""
    careful_retry, reckless = tools_runs["retry"], battle(e2e_settings, slot, "reckless", "reference-reckless", SPEC)
    assert reckless.status == "completed" and reckless.trajectory.upstream_faults == 0
    assert (reckless.outcome == "passed") <= (careful_retry.outcome == "passed")
    assert reckless.trajectory.total_calls > careful_retry.trajectory.total_calls
    assert reckless.trajectory.faults_retry_after_ignored > 0 and reckless.trajectory.retries_after_fault > \
        careful_retry.trajectory.retries_after_fault
