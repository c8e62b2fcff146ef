"""`appworld-green rejudge` and standard-or-custom end to end: real evals, real AppWorld, a fresh evaluator process.

Four runs are made once for the module, each through the CLI as a user makes them: the demo's eval (dev, the
reference Blue, 2 workers) in tools mode, the same Blue in code mode on three dev tasks (the whole split in code
mode costs a minute more and re-judges nothing the tools run does not), an enforced-scope run on two tasks where the lexical
predictor misses a gold API (f0f4d44_2 ends `scope_error`), and a code-mode run with `--unsafe-code-in-process`
on a machine made to lack bubblewrap (PATH without `bwrap`, CODE_SANDBOX=bubblewrap: the same stand-in as
tests/test_code_prerequisites.py). Edited copies of a run are re-judged: a verdict flipped in one result.json, a
row changed in one battle's saved dbs, a statement AppWorld never writes (ATTACH) added to another's; a noop
Blue's failed battle forged consistently into a pass with the reference battle's saved dbs (caught by replaying
its call log), and forged whole, its call log too (the message names where the state differs, never the replayed
value the forger lacks); a saved state whose SQL never ends (stopped at the time limit, the next battles re-judged);
a run whose every saved state never ends (stopped at the run's time limit, the rest listed).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from green_agent.steps.archive import state_digest
from kernel.settings import load_settings
from shared_evals import SharedEval
from test_batch_e2e import slot_ports
from workers import free_slot

pytestmark = pytest.mark.e2e
CLI = str(Path(sys.executable).parent / "appworld-green")
QUESTION = "f0a7c07_1"
"""A dev question task (its answer is a row of the supervisor's change log) that the reference Blue passes."""
ACTION = "f0b2d02_2"
HASHED = "f0c9e09_1"
CODE_TASKS = (QUESTION, ACTION, HASHED)


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "APPWORLD_ROOT": str(load_settings().appworld_root), "RUNS_DIR": str(tmp / "runs"),
            "OPENAI_API_KEY": "", **extra}


def _cli(*args: str, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=timeout)


def _eval(tmp: Path, name: str, *args: str, workers: int = 1, **env: str) -> Path:
    out = tmp / name
    ports, _ = slot_ports(workers)  # this xdist worker's own ports, never the shared slot indices
    done = _cli("eval", "--blue", "reference", "--out", str(out), "--workers", str(workers), "--slot-ports", ports,
                *args, env=_env(tmp, **env))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rejudge")


@pytest.fixture(scope="module")
def tools_run(tmp: Path) -> Path:
    return _eval(tmp, "dev-tools", "--split", "dev", workers=2)  # the demo's eval


@pytest.fixture(scope="module")
def code_run(tmp: Path) -> Path:
    return _eval(tmp, "dev-code", "--task-ids", ",".join(CODE_TASKS), "--interaction", "code", workers=2)


@pytest.fixture(scope="module")
def enforce_run(enforced_tools_eval: SharedEval) -> Path:
    return enforced_tools_eval.out  # shared with tests/test_scope_policy_e2e.py (conftest), read only


@pytest.fixture(scope="module")
def unsafe_run(tmp: Path) -> Path:
    return _eval(tmp, "unsafe", "--task-ids", QUESTION, "--interaction", "code", "--unsafe-code-in-process",
                 PATH=str(Path(sys.executable).parent), CODE_SANDBOX="bubblewrap")


@pytest.fixture(scope="module")
def noop_run(tmp: Path) -> Path:
    out = tmp / "noop"
    done = _cli("eval", "--blue", "noop", "--task-ids", QUESTION, "--out", str(out), env=_env(tmp))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def _results(run: Path) -> dict:
    return json.loads((run / "results.json").read_text())


def _rejudge(run: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return _cli("rejudge", str(run), *args, env=_env(tmp))


def test_a_dev_eval_rejudges_21_of_21_equal_and_is_standard(tools_run: Path, tmp: Path) -> None:
    done = _rejudge(tools_run, tmp)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.rstrip().endswith("21 of 21 verdicts re-judged equal")
    assert "call logs replayed: 21 of 21 give the saved end state" in done.stdout
    results = _results(tools_run)
    rows = [line for line in done.stdout.splitlines() if line.startswith(results["manifest"]["run_id"])]
    assert len(rows) == 21 and all(line.endswith(" equal") for line in rows) and "DIFFERS" not in done.stdout
    assert (results["standard"], results["custom"]) == (True, [])
    prov = results["provenance"]
    assert prov["interaction"] == "tools" and prov["whole_split"] and prov["task_set"] == "the whole dev split"
    assert prov["appworld"] == "0.1.3.post1" and len(prov["world_digest"]) == 64 and prov["task_pack"]
    assert prov["grader"]["outcome_rule"] >= 1 and prov["rejudge_command"] == f"appworld-green rejudge {tools_run}"
    assert prov["sandbox"] is None
    summary = json.loads((tools_run / "agentbeats_results.json").read_text())["results"][0]
    assert summary["standard"] is True and summary["provenance"]["world_digest"] == prov["world_digest"]
    html = (tools_run / "report.html").read_text()
    assert 'data-standard="standard"' in html and f"verify: appworld-green rejudge {tools_run}" in html


def test_a_code_mode_eval_rejudges_equal_and_records_its_sandbox(code_run: Path, tmp: Path) -> None:
    done = _rejudge(code_run, tmp)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.rstrip().endswith("3 of 3 verdicts re-judged equal") and "DIFFERS" not in done.stdout
    assert "call logs replayed: 3 of 3 give the saved end state" in done.stdout  # the executions' apis calls
    results = _results(code_run)
    assert all(row["passed"] for row in results["rows"])
    assert (results["standard"], results["custom"]) == (False, ["task set: a list of 3 task(s), not a whole split"])
    prov = results["provenance"]
    assert prov["interaction"] == "code" and not prov["whole_split"]
    assert (prov["sandbox"] or "").startswith(("bubblewrap sandbox", "landlock sandbox"))
    assert prov["rejudge_command"] == f"appworld-green rejudge {code_run}"


def test_a_verdict_flipped_in_result_json_is_caught(tools_run: Path, tmp: Path) -> None:
    copy = tmp / "flipped"
    shutil.copytree(tools_run, copy)
    path = copy / "tasks" / ACTION / "result.json"
    record = json.loads(path.read_text())
    record.update(outcome="failed", winner="green_agent")
    path.write_text(json.dumps(record))
    done = _rejudge(copy, tmp, "--json")
    assert done.returncode == 4, done.stderr[-2000:]
    assert record["battle_id"] in done.stderr and "differ when re-judged" in done.stderr
    report = json.loads(done.stdout)
    assert (report["rejudged"], report["equal"]) == (21, 20)
    (flipped,) = [b for b in report["battles"] if b["status"] == "differs"]
    assert flipped["battle_id"] == record["battle_id"] and flipped["rejudged_outcome"] == "passed"
    assert "outcome: recorded failed, re-judged passed" in flipped["differences"]
    assert "winner: recorded green_agent, re-judged blue_agent" in flipped["differences"]


def test_a_changed_db_row_and_a_foreign_statement_are_caught(code_run: Path, tmp: Path) -> None:
    copy = tmp / "edited-dbs"
    shutil.copytree(code_run, copy)
    dbs = copy / "tasks" / QUESTION / "appworld" / "dbs" / "supervisor.jsonl"
    lines = dbs.read_text().splitlines()
    (index,) = [i for i, line in enumerate(lines) if line.startswith('["UPDATE tasks SET')]
    sql, params, many = json.loads(lines[index])
    params[re.findall(r"(\w+)=\?", sql).index("answer")] = "1.00"  # the Blue's answer, now wrong
    lines[index] = json.dumps([sql, params, many])
    dbs.write_text("\n".join(lines) + "\n")
    hashed = copy / "tasks" / HASHED / "appworld" / "dbs" / "supervisor.jsonl"  # a row no test reads
    first = json.loads(hashed.read_text().splitlines()[0])
    first[1] = ["A" * len(v) if isinstance(v, str) and v.endswith("=") else v for v in first[1]]  # its record_hash
    hashed.write_text("\n".join([json.dumps(first), *hashed.read_text().splitlines()[1:]]) + "\n")
    attached = tmp / "attached.db"
    with open(copy / "tasks" / ACTION / "appworld" / "dbs" / "admin.jsonl", "a") as handle:
        handle.write(json.dumps([f"ATTACH DATABASE '{attached}' AS x", [], False]) + "\n")
    done = _rejudge(copy, tmp)
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]
    ids = {task: json.loads((copy / "tasks" / task / "result.json").read_text())["battle_id"]
           for task in (QUESTION, ACTION, HASHED)}
    assert f"{ids[QUESTION]} differs: success: recorded True, re-judged False" in done.stdout
    assert f"{ids[QUESTION]} differs: outcome: recorded passed, re-judged" in done.stdout
    assert f"{ids[ACTION]} differs: the saved end state cannot be re-judged: admin.jsonl line" in done.stdout
    assert "not an INSERT, UPDATE or DELETE" in done.stdout and not attached.exists()
    assert f"{ids[HASHED]} differs: the saved end state (appworld/dbs) is not the one the run archived" in done.stdout
    assert done.stdout.rstrip().endswith("0 of 3 verdicts re-judged equal")
    assert all(battle_id in done.stderr for battle_id in ids.values())


def test_a_failed_battle_forged_into_a_pass_is_caught_by_its_own_calls(noop_run: Path, code_run: Path,
                                                                        tmp: Path) -> None:
    """The noop Blue's battle (complete_task, no answer) given the reference battle's saved dbs, verdict, results.json
    row and a recomputed dbs_digest: AppWorld's evaluator and every record agree, only the call log does not."""
    forged, task = tmp / "forged", Path("tasks") / QUESTION
    shutil.copytree(noop_run, forged)
    shutil.rmtree(forged / task / "appworld" / "dbs")
    shutil.copytree(code_run / task / "appworld" / "dbs", forged / task / "appworld" / "dbs")
    record, good = (json.loads((run / task / "result.json").read_text()) for run in (forged, code_run))
    assert record["outcome"] == "failed" and [c["arguments"] for c in _calls(forged / task)] == [{"status": "success"}]
    record.update({k: good[k] for k in ("outcome", "winner", "status", "reason", "evaluation", "explanation")})
    record["archive"]["dbs_digest"] = state_digest(forged / task / "appworld" / "dbs")
    (forged / task / "result.json").write_text(json.dumps(record))
    results = _results(forged)
    (row,) = [r for r in _results(code_run)["rows"] if r["task_id"] == QUESTION]
    results["rows"][0].update({k: row[k] for k in ("outcome", "passed", "tests_passed", "tests_total")})
    (forged / "results.json").write_text(json.dumps(results))
    done = _rejudge(forged, tmp)
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]
    assert (f"{record['battle_id']} differs: its own calls do not produce the saved end state: replaying the 1 "
            "forwarded call(s) of mcp_calls.jsonl gives another supervisor.jsonl (line ") in done.stdout
    assert "call logs replayed: 0 of 1 give the saved end state" in done.stdout
    assert done.stdout.rstrip().endswith("0 of 1 verdicts re-judged equal") and record["battle_id"] in done.stderr


FORGED_HASH = "AAAAAAAAAAA="
_RECORD_HASH = re.compile(r"[A-Za-z0-9+/]{11}=")
"""The shape of AppWorld's record_hash (a base64 xxh64 of the row)."""


def test_a_forgery_of_calls_state_and_verdict_learns_nothing_from_the_message_to_finish_it(
        noop_run: Path, code_run: Path, tmp: Path) -> None:
    """The red team's case: the noop Blue's battle forged whole (its call log answers the question, its saved state
    holds the answer, its result.json and results.json row say passed, its dbs_digest recomputed); what the forger
    lacks is the record_hash AppWorld computes for the answered row. The difference must name where, never the
    replay's value: a forger who copies whatever hash-shaped value the message shows into the saved state still
    differs."""
    forged, task = tmp / "forged-whole", Path("tasks") / QUESTION
    shutil.copytree(noop_run, forged)
    calls = _calls(forged / task)
    calls[-1]["arguments"] = {"status": "success", "answer": "445.29"}  # the noop's complete_task, now answering
    (forged / task / "mcp_calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    dbs = forged / task / "appworld" / "dbs"
    lines = (dbs / "supervisor.jsonl").read_text().splitlines()
    sql, params, many = json.loads(lines[-1])
    columns = re.findall(r"(\w+)=\?", sql)
    params[columns.index("answer")], params[columns.index("record_hash")] = "445.29", FORGED_HASH
    lines[-1] = json.dumps([sql, params, many], separators=(",", ":"))
    (dbs / "supervisor.jsonl").write_text("\n".join(lines) + "\n")
    record, good = (json.loads((run / task / "result.json").read_text()) for run in (forged, code_run))
    record.update({k: good[k] for k in ("outcome", "winner", "status", "reason", "evaluation", "explanation")})
    results = _results(forged)
    (row,) = [r for r in _results(code_run)["rows"] if r["task_id"] == QUESTION]
    results["rows"][0].update({k: row[k] for k in ("outcome", "passed", "tests_passed", "tests_total")})
    (forged / "results.json").write_text(json.dumps(results))

    def rejudged() -> str:
        record["archive"]["dbs_digest"] = state_digest(dbs)
        (forged / task / "result.json").write_text(json.dumps(record))
        done = _rejudge(forged, tmp)
        assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]
        (message,) = [line for line in done.stdout.splitlines() if "its own calls do not produce" in line]
        return message

    message = rejudged()
    offered = [value for value in _RECORD_HASH.findall(message) if value != FORGED_HASH]
    for value in offered[:1]:  # what the forger copies (the replayed row's hash, where a message printed it)
        (dbs / "supervisor.jsonl").write_text((dbs / "supervisor.jsonl").read_text().replace(FORGED_HASH, value))
    again = rejudged()  # still differs: exit 4
    assert offered == [], message
    for text in (message, again):
        assert (f"gives another supervisor.jsonl (line {len(lines)}, UPDATE tasks: column record_hash differs)"
                in text), text


def _calls(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "mcp_calls.jsonl").read_text().splitlines()]


def test_a_saved_state_whose_sql_never_ends_times_out_and_the_run_goes_on(code_run: Path, tmp: Path) -> None:
    hostile = tmp / "endless-sql"
    shutil.copytree(code_run, hostile)
    with open(hostile / "tasks" / QUESTION / "appworld" / "dbs" / "supervisor.jsonl", "a") as handle:
        handle.write(json.dumps(["UPDATE tasks SET answer = (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                                 "FROM c) SELECT max(x) FROM c) WHERE tasks.id = ?", [1], False]) + "\n")
    # the evidence is the product's: the battle was stopped by its limit and the run went on; the subprocess timeout
    # is only a safety net (on a loaded shared machine AppWorld's start-up alone took minutes)
    done = _cli("rejudge", str(hostile), "--timeout-s", "10", env=_env(tmp))
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]
    battle_id = json.loads((hostile / "tasks" / QUESTION / "result.json").read_text())["battle_id"]
    assert f"{battle_id}: could not re-judge: timed out after 10 s" in done.stdout
    assert done.stdout.rstrip().endswith("2 of 3 verdicts re-judged equal (1 could not be re-judged, listed above)")
    assert f"1 battle(s) of {hostile} could not be re-judged: {battle_id}" in done.stderr


ENDLESS = ["UPDATE tasks SET answer = (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) "
           "FROM c) WHERE tasks.id = ?", [1], False]


def _our_processes(marker: Path) -> list[str]:
    """Command lines of live processes that name `marker` (the TMPDIR a rejudge was given: its AppWorld process's
    work root lies under it)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(marker) in text:
            found.append(text)
    return found


def test_the_runs_time_limit_stops_the_battle_it_falls_in_and_lists_the_rest(code_run: Path, tmp: Path) -> None:
    """Every battle's saved state never ends and each battle may take 10 minutes, but the run may take 20 s: the
    battle the limit falls in is stopped (or AppWorld's start-up, on a loaded box), the rest are listed, not
    dropped, and no AppWorld process is left."""
    hostile, scratch = tmp / "endless-run", tmp / "run-limit-tmp"
    shutil.copytree(code_run, hostile)
    scratch.mkdir()
    for task in CODE_TASKS:
        with open(hostile / "tasks" / task / "appworld" / "dbs" / "supervisor.jsonl", "a") as handle:
            handle.write(json.dumps(ENDLESS) + "\n")
    done = _cli("rejudge", str(hostile), "--json", "--timeout-s", "600", "--run-timeout-s", "20",
                env=_env(tmp, TMPDIR=str(scratch)), timeout=300)
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert (report["rejudged"], report["equal"], report["could_not_rejudge"]) == (3, 0, 3)
    assert report["run_timeout_s"] == 20
    reasons = {b["battle_id"]: b["reason"] for b in report["battles"]}
    assert set(reasons.values()) == {"could not re-judge: the run's time limit (20 s, --run-timeout-s) was reached"}
    assert f"3 battle(s) of {hostile} could not be re-judged" in done.stderr
    assert _our_processes(scratch) == []


def test_a_tiny_run_limit_lists_every_battle_as_not_rejudged(code_run: Path, tmp: Path) -> None:
    done = _rejudge(code_run, tmp, "--run-timeout-s", "0.001")
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]
    ids = [json.loads((code_run / "tasks" / task / "result.json").read_text())["battle_id"] for task in CODE_TASKS]
    for battle_id in ids:
        assert (f"{battle_id}: could not re-judge: the run's time limit (0.001 s, --run-timeout-s) was reached"
                in done.stdout)
    assert done.stdout.rstrip().endswith("0 of 3 verdicts re-judged equal (3 could not be re-judged, listed above)")
    assert "AppWorld: start-up" not in done.stdout  # the limit was past before any battle: AppWorld never started


def test_a_battle_folder_rejudges_equal(tmp: Path) -> None:
    out = tmp / "one-battle"
    done = _cli("battle", "--task-id", QUESTION, "--blue", "reference", "--slot", str(free_slot().index),
                "--out", str(out), env=_env(tmp))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert json.loads((out / "result.json").read_text())["archive"]["dbs_digest"]
    done = _rejudge(out, tmp)
    assert done.returncode == 0 and "(battle)" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.rstrip().endswith("1 of 1 verdicts re-judged equal")


def test_one_battle_alone_and_a_folder_that_is_no_run(tools_run: Path, tmp: Path) -> None:
    done = _rejudge(tools_run, tmp, "--battle", QUESTION)
    assert done.returncode == 0 and done.stdout.rstrip().endswith("1 of 1 verdicts re-judged equal")
    done = _rejudge(tools_run, tmp, "--battle", "nope_1")
    assert done.returncode == 2 and "no battle of" in done.stderr
    done = _rejudge(tmp / "nowhere", tmp)
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_a_scope_error_is_listed_as_not_rejudgeable_and_the_run_is_custom(enforce_run: Path, tmp: Path) -> None:
    done = _rejudge(enforce_run, tmp)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "not re-judgeable: scope_error: the enforced scope refused the agent gmail.show_thread" in done.stdout
    assert done.stdout.rstrip().endswith("1 of 1 verdicts re-judged equal (1 battle(s) not re-judgeable, listed above)")
    assert "DIFFERS" not in done.stdout
    results = _results(enforce_run)
    assert results["standard"] is False
    assert results["custom"] == ["task set: a list of 2 task(s), not a whole split",
                                 "scope policy enforce (standard: advise): the gateway refused APIs outside the "
                                 "predicted scope"]
    assert 'data-standard="custom"' in (enforce_run / "report.html").read_text()


def test_unsafe_code_makes_the_run_custom_and_compare_says_so_before_its_verdict(unsafe_run: Path, tools_run: Path,
                                                                                 tmp: Path) -> None:
    results = _results(unsafe_run)
    assert results["standard"] is False and results["provenance"]["sandbox"].startswith("NO sandbox")
    assert "agent code ran without a real sandbox (NO sandbox: agent code runs as a plain process " \
           "(--unsafe-code-in-process))" in results["custom"]
    done = _cli("compare", str(tools_run), str(unsafe_run), "--intersect", env=_env(tmp))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.rstrip().splitlines()
    assert lines[-2].startswith("Not two standard runs (a standard run compared with a custom one): A is standard run")
    assert "B is custom run (compare with care): task set: a list of 1 task(s)" in lines[-2]
    done = _cli("compare", str(tools_run), str(tools_run), env=_env(tmp))
    assert done.returncode == 0 and "Not two standard runs" not in done.stdout
