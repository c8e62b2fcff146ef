"""The leaderboard kit (`leaderboard/`) end to end: a real sharded assessment merged as the template's workflow
merges it, every leaderboard query run with DuckDB, and the numbers checked against the unsharded run.

One green (`appworld-green serve`) and one purple (tests/mixed_purple.py: the reference solution on three
tasks of one scenario, the no-op on the fourth, a fixed usage reported with every reply) as real processes;
`appworld-green assess` sends 3 shards (and the whole set once) exactly as the platform's runner does.
The merge is the template's jq program run by Debian's `jq` (`make browser` installs it), checked equal to
`green_agent.a2a.leaderboard.merge_shards`. The unsharded run's `results.json` is `eval`'s record (the
assessment runs `batch.evaluate.run_eval`), so the queries' numbers are compared with `eval`'s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from green_agent.a2a.leaderboard import load_queries, load_scenario, merge_shards, run_queries
from green_agent.runtime.processes import ManagedProcess
from kernel.errors import BadInputError
from kernel.ports import free_port
from kernel.settings import REPO_ROOT
from kernel.world_data import WorldData

pytestmark = pytest.mark.e2e
CLI = str(Path(sys.executable).parent / "appworld-green")
KIT = REPO_ROOT / "leaderboard"
TRIALS = 2
# The template's merge, byte for byte (agentbeats-leaderboard-template 69d6115, run-scenario.yml "Aggregate results").
JQ_MERGE = """{
            status: (if all(.[]; .status == "completed") then "completed"
                    elif any(.[]; .status == "completed") then "partial"
                    else "failed" end),
            participants: $participants,
            results: [.[].results[]]
          }"""
IDS = {"appworld_green": "11111111-green", "agent": "22222222-purple"}


class Run(NamedTuple):
    shards: list[Path]
    whole: dict[str, Any]
    tasks: list[str]
    solved: list[str]


def jq_merge(paths: list[Path], participants: dict[str, Any]) -> dict[str, Any]:
    jq = shutil.which("jq")
    assert jq, "Debian's jq is needed (make browser installs it)"
    done = subprocess.run([jq, "-s", "--argjson", "participants", json.dumps(participants), JQ_MERGE, *map(str, paths)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def _assess(scenario: Path, out: Path, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run([CLI, "assess", str(scenario), "--out", str(out)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def run(appworld_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    tmp = tmp_path_factory.mktemp("leaderboard")
    env = {**os.environ, "APPWORLD_ROOT": str(appworld_root), "RUNS_DIR": str(tmp / "runs"), "OPENAI_API_KEY": ""}
    tasks = WorldData(appworld_root).split("dev")[:4]
    solved = tasks[:3]
    slots = ",".join(":".join(str(free_port()) for _ in range(3)) for _ in range(2))
    green_port, purple_port = free_port(), free_port()
    green = ManagedProcess("green", [CLI, "serve", "--port", str(green_port), "--slot-ports", slots], tmp / "g.log",
                           env=env)
    purple = ManagedProcess("purple", [sys.executable, str(REPO_ROOT / "tests" / "mixed_purple.py"), "--port",
                                       str(purple_port), "--solve", ",".join(solved)], tmp / "p.log", env=env)
    with green.running(f"http://127.0.0.1:{green_port}/.well-known/agent-card.json", timeout_s=60), \
            purple.running(f"http://127.0.0.1:{purple_port}/.well-known/agent-card.json", timeout_s=60):
        def scenario(name: str, **config: Any) -> Path:
            path = tmp / f"{name}.toml"
            path.write_text(
                f'[green_agent]\nendpoint = "http://127.0.0.1:{green_port}"\n\n[[participants]]\nrole = "agent"\n'
                f'endpoint = "http://127.0.0.1:{purple_port}"\n\n[config]\n'
                + "".join(f"{key} = {json.dumps(value)}\n" for key, value in config.items()))
            return path

        base = {"task_ids": tasks, "trials": TRIALS, "workers": 2, "predictor": "ground_truth"}
        shards = []
        for index in range(3):
            out = tmp / "shard-artifacts" / f"shard-{index}" / "results.json"
            out.parent.mkdir(parents=True)
            _assess(scenario(f"shard{index}", **base, shard_index=index, num_shards=3), out, env)
            shards.append(out)
        whole = _assess(scenario("whole", **base), tmp / "whole.json", env)
    yield Run(shards, whole, tasks, solved)


def test_the_templates_jq_merge_is_reproduced_and_the_shards_cover_the_task_set(run: Run) -> None:
    merged = jq_merge(run.shards, IDS)
    assert merged == merge_shards(run.shards, IDS)
    assert merged["status"] == "completed" and merged["participants"] == IDS
    assert [r["shard"]["index"] for r in merged["results"]] == [0, 1, 2]
    assert sorted(t["task_id"] for r in merged["results"] for t in r["task_results"]) == sorted(run.tasks)


def test_every_query_gives_the_unsharded_evals_numbers(run: Run, tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "owner-20260101.json").write_text(json.dumps(jq_merge(run.shards, IDS)))
    outputs = {o.name: o for o in run_queries(load_queries(KIT / "queries.json"), tmp_path)}
    assert set(outputs) == {"Overall", "Overall (standard runs only)", "By difficulty", "Outcomes"}
    assert outputs["Overall (standard runs only)"].rows == []  # a task list of 4 with the ground-truth predictor
    whole = run.whole["results"][0]
    agg = json.loads((Path(whole["run_dir"]) / "results.json").read_text())["aggregates"]  # eval's record
    overall = dict(zip(outputs["Overall"].columns, outputs["Overall"].rows[0]))
    assert overall["id"] == IDS["agent"] and len(outputs["Overall"].rows) == 1
    assert overall["TGC"] == pytest.approx(agg["tgc"]) == 75.0  # 3 of 4 tasks solved, every trial
    assert overall["SGC"] == pytest.approx(agg["sgc"])
    assert (overall["Tasks passed"], overall["Tasks"]) == (whole["score"], whole["max_score"]) == (3, 4)
    assert overall["pass^k"] == pytest.approx(agg["pass_hat_k"][str(TRIALS)] * 100)
    assert overall["Mean calls"] == pytest.approx(agg["mean_trajectory"]["calls"], abs=0.01)
    assert overall["Cost per solved task (USD)"] == pytest.approx(agg["cost"]["cost_per_solved_task_usd"])
    assert overall["Cost per solved task (USD)"] > 0
    assert overall["TGC interval"] is None  # a merged interval needs every battle: no single shard has them
    by_difficulty = {row[1]: row[2] for row in outputs["By difficulty"].rows}
    assert by_difficulty == pytest.approx({k: v["tgc"] for k, v in agg["tgc_by_difficulty"].items()})
    outcomes = dict(zip(outputs["Outcomes"].columns, outputs["Outcomes"].rows[0]))
    assert outcomes["passed"] == agg["outcome_counts"].get("passed", 0) == 3 * TRIALS
    assert sum(v for k, v in outcomes.items() if k != "id") == 4 * TRIALS
    # the whole run's own interval is shown when the file holds one shard
    (tmp_path / "results" / "owner-20260101.json").write_text(json.dumps({"status": "completed", "participants": IDS,
                                                                          "results": run.whole["results"]}))
    single = run_queries(load_queries(KIT / "queries.json"), tmp_path)[0]
    assert dict(zip(single.columns, single.rows[0]))["TGC interval"] == whole["intervals"]["tgc_ci"]


def test_each_shard_says_it_is_custom_and_the_standard_query_filters_on_it(run: Run, tmp_path: Path) -> None:
    merged = jq_merge(run.shards, IDS)
    for index, shard in enumerate(merged["results"]):
        words = f"shard {index + 1} of 3 of a task list, not a whole split"
        assert shard["standard"] is False and shard["provenance"]["task_set"] == words
        assert shard["custom"] == [f"task set: {words}",
                                   "scope predictor ground_truth: the agent was shown the task's gold APIs"]
        assert shard["provenance"]["rejudge_command"] == f"appworld-green rejudge {shard['run_dir']}"
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "custom.json").write_text(json.dumps(merged))
    queries = {q.name: q for q in load_queries(KIT / "queries.json")}
    both = [queries["Overall"], queries["Overall (standard runs only)"]]
    overall, standard = run_queries(both, tmp_path)
    assert len(overall.rows) == 1 and standard.rows == []
    relabelled = {**merged, "participants": {**IDS, "agent": "33333333-standard"},
                  "results": [{**r, "standard": True, "custom": []} for r in merged["results"]]}
    (tmp_path / "results" / "standard.json").write_text(json.dumps(relabelled))
    overall, standard = run_queries(both, tmp_path)
    assert len(overall.rows) == 2 and [row[0] for row in standard.rows] == ["33333333-standard"]
    assert standard.rows[0][1:] == next(row for row in overall.rows if row[0] == "33333333-standard")[1:]


def test_the_assessments_run_rejudges_equal_from_its_results_file(run: Run, tmp_path: Path,
                                                                  appworld_root: Path) -> None:
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps({"status": "completed", "participants": IDS, "results": run.whole["results"]}))
    done = subprocess.run([CLI, "rejudge", str(whole)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OPENAI_API_KEY": "", "APPWORLD_ROOT": str(appworld_root)})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.rstrip().endswith(f"{4 * TRIALS} of {4 * TRIALS} verdicts re-judged equal")


def test_the_cost_per_task_is_the_purples_reported_usage_and_reaches_the_artifact(run: Run) -> None:
    whole = run.whole["results"][0]
    cost = whole["cost"]
    battles = 4 * TRIALS
    assert cost["battles"] == battles and cost["purple_known"] == battles and cost["unknown_because"] is None
    assert cost["green_cost_usd"] == 0.0  # the ground-truth predictor spends nothing
    replies = sum(t["calls"] for t in whole["task_results"])  # every tool call is one reply (no corrections here)
    assert cost["purple_cost_usd"] == pytest.approx(0.002 * replies)
    assert cost["cost_per_solved_task_usd"] == pytest.approx(cost["total_cost_usd"] / (3 * TRIALS), abs=1e-6)
    assert cost["purple_input_tokens"] == 100 * replies
    per_task = [t["cost_usd"] for t in whole["task_results"]]
    assert sum(per_task) == pytest.approx(cost["total_cost_usd"], abs=1e-5) and all(c > 0 for c in per_task)
    rows = json.loads((Path(whole["run_dir"]) / "results.json").read_text())["rows"]
    assert all(r["purple_cost_usd"] == pytest.approx(0.002 * r["calls"]) for r in rows)  # eval's record has it too


@pytest.mark.parametrize("statuses,expected", [(("completed", "failed", "completed"), "partial"),
                                               (("failed", "failed", "rejected"), "failed")])
def test_partial_and_failed_shards_give_the_templates_status(run: Run, tmp_path: Path, statuses: tuple[str, ...],
                                                             expected: str) -> None:
    paths = []
    for index, (path, status) in enumerate(zip(run.shards, statuses)):
        data = json.loads(path.read_text())
        data["status"] = status
        if status != "completed":
            data["results"] = []  # the gateway keeps artifacts only when the task completed
        paths.append(tmp_path / f"{index}.json")
        paths[-1].write_text(json.dumps(data))
    assert jq_merge(paths, IDS)["status"] == merge_shards(paths, IDS)["status"] == expected


def test_the_kit_has_the_templates_shape() -> None:
    scenario = load_scenario(KIT / "scenario.json5")
    components = scenario["components"]
    assert components["gateway"]["manifest"].endswith("agentbeats-gateway/refs/tags/v0.3/amber-manifest.json5")
    roles = components["gateway"]["config"]["participant_roles"]
    assert roles == {"green": "appworld_green", "purple1": "agent"}
    assert set(scenario["metadata"]["agentbeats_ids"]) == {"appworld_green", "agent"}
    for name in ("appworld_green", "agent"):
        manifest = components[name]["manifest"]
        assert manifest.startswith("./")
    from green_agent.a2a.leaderboard import load_json5

    purple = load_json5(KIT / "purple-agent.json5")
    assert purple["provides"]["a2a"]["kind"] == "a2a" and "purple --kind" in purple["program"]["entrypoint"]
    # the green's manifest is the repository's amber-manifest.json5, copied as green-agent.json5 (README)
    assert load_json5(REPO_ROOT / "amber-manifest.json5")["provides"]["a2a"]["kind"] == "a2a"


def test_bad_kit_input_gets_a_clear_message(run: Run, tmp_path: Path) -> None:
    broken = tmp_path / "scenario.json5"
    broken.write_text("{ components: { gateway: ")
    with pytest.raises(BadInputError, match=r"scenario.json5 is not valid JSON5"):
        load_scenario(broken)
    broken.write_text("{ components: { gateway: { config: { assessment_config: {} } } } }")
    with pytest.raises(BadInputError, match="participant_roles is missing"):
        load_scenario(broken)
    queries = tmp_path / "queries.json"
    queries.write_text('[{"name": "x", "query": "SELECT 1"')
    with pytest.raises(BadInputError, match="queries.json is not valid JSON"):
        load_queries(queries)
    queries.write_text('[{"name": "x"}]')
    with pytest.raises(BadInputError, match="query 0: query: Field required"):
        load_queries(queries)
    queries.write_text('[{"name": "x", "query": "SELECT 1 AS n FROM read_json_auto(\'results/*.json\')"}]')
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "a.json").write_text(json.dumps(merge_shards(run.shards, IDS)))
    with pytest.raises(BadInputError, match="the first column is 'n', not `id`"):
        run_queries(load_queries(queries), tmp_path)
    missing = [run.shards[0], run.shards[1].parent / "gone.json", run.shards[2]]
    with pytest.raises(BadInputError, match="missing results for shard 1"):
        merge_shards(missing, IDS)
    # jq reads what exists, so the workflow checks every shard file first; so does merge_shards
    assert (run.shards[1].parent / "gone.json").exists() is False
