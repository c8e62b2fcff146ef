"""Intervals, stability and `compare` on real runs: `appworld-green eval` subprocesses on real AppWorld servers.

Runs (module-scoped, on the built world, free slot ports): the reference Blue and the no-op Blue on
one task of each of the 7 dev scenarios (twice for the no-op Blue), the no-op Blue on 2 of them, and
a test-only Blue that passes a task on alternate trials (`AlternatingBlue`) on 2 tasks x 2 trials.
compare's test swaps whole scenarios, so its smallest p is 2 / 2^scenarios: 7 scenarios (2 / 128) are
the fewest that can say p < 0.05 with one task each, kept small for the shared machine.
report.html and the compare page are checked in headless Chromium.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from blue_agent.noop import complete_without_work
from blue_agent.reference import replay_solution
from faults_support import blue_server
from green_agent.models.comparison import Comparison
from green_agent.models.eval_run import EvalResults
from kernel.task_message import parse_task_message
from kernel.world_data import WorldData
from test_batch_e2e import CLI, cli_env, first_tasks, slot_ports
from test_report_html import chromium, dump_dom  # noqa: F401 - the fixture is used by name

pytestmark = pytest.mark.e2e
TASKS = 7


def one_per_scenario(root: Path, count: int) -> list[str]:
    """The first task of each of the first `count` dev scenarios (the dev split lists a scenario's 3 tasks in a row)."""
    return first_tasks(root, 3 * count)[::3]


class AlternatingBlue:
    """A test-only A2A Blue: replays the reference solution on a task's odd visits, gives up on its even ones.

    Tasks in `steady` are always replayed. Contract it stands for: a real Blue over A2A and MCP (the
    shipped Blues' wiring) whose verdict on a task flips between trials.
    """

    def __init__(self, root: Path, steady: set[str]) -> None:
        self.world, self.steady, self.visits = WorldData(root), steady, Counter[str]()

    async def __call__(self, text: str) -> str:
        task = parse_task_message(text)
        self.visits[task.task_id] += 1
        if task.task_id in self.steady or self.visits[task.task_id] % 2 == 1:
            await asyncio.to_thread(replay_solution, self.world.solution_source(task.task_id), task.mcp_url)
            return "replayed"
        await asyncio.to_thread(complete_without_work, task.mcp_url)
        return "gave up"


def evaluate(root: Path, tmp: Path, name: str, blue: str, tasks: list[str], trials: int = 1) -> Path:
    out = tmp / name
    ports, _ = slot_ports(2)
    argv = [CLI, "eval", "--task-ids", ",".join(tasks), "--blue", blue, "--predictor", "ground_truth",
            "--workers", "1" if trials > 1 else "2", "--trials", str(trials), "--out", str(out),
            "--slot-ports", ports if trials == 1 else ports.split(",")[0], "--deadline", "120"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=cli_env(root, tmp), timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "TGC" in proc.stdout and "% CI" in proc.stdout, proc.stdout
    return out


@pytest.fixture(scope="module")
def runs(appworld_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    tmp = tmp_path_factory.mktemp("compare-e2e")
    tasks = one_per_scenario(appworld_root, TASKS)
    assert len({t.rsplit('_', 1)[0] for t in tasks}) == TASKS
    found = {name: evaluate(appworld_root, tmp, name, blue, chosen)
             for name, blue, chosen in (("reference", "reference", tasks), ("noop", "noop", tasks),
                                        ("noop-again", "noop", tasks), ("noop-small", "noop", tasks[:2]))}
    with blue_server("alternating Blue", AlternatingBlue(appworld_root, steady={tasks[1]})) as blue:
        found["alternating"] = evaluate(appworld_root, tmp, "alternating", blue.url, tasks[:2], trials=2)
    yield found


def compare(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, "compare", *map(str, args)], capture_output=True, text=True, timeout=120)


def results(out: Path) -> EvalResults:
    return EvalResults.model_validate_json((out / "results.json").read_text())


def test_reference_against_noop_is_about_a_hundred_points_and_far_below_p_005(runs: dict[str, Path],
                                                                              tmp_path: Path) -> None:
    proc = compare(runs["noop"], runs["reference"], "--json", "--out", tmp_path / "cmp.json")
    assert proc.returncode == 0, proc.stderr
    c = Comparison.model_validate_json(proc.stdout)
    assert c.overall.tasks == TASKS and c.overall.difference >= 85 and c.overall.verdict == "b_better"
    assert c.overall.test.name == "scenario permutation" and c.overall.test.p_value == 2 / 2 ** TASKS
    assert c.overall.minimum_detectable is not None and f"on {TASKS} tasks" in c.overall.message
    table = compare(runs["noop"], runs["reference"])
    assert "B is better" in table.stdout and "cannot be told apart from noise" in table.stdout


def test_two_identical_runs_differ_by_zero_and_cannot_be_told_apart(runs: dict[str, Path]) -> None:
    proc = compare(runs["noop"], runs["noop-again"], "--json")
    c = Comparison.model_validate_json(proc.stdout)
    assert c.overall.difference == 0.0 and c.overall.verdict == "cannot_tell" and c.overall.test.p_value == 1.0
    assert c.overall.ci is not None and c.overall.ci.low < 0.0 < c.overall.ci.high  # 7 scenarios: not 0 to 0
    assert c.overall.message.startswith("Cannot tell A and B apart")
    assert "cannot be told apart from noise on 7 tasks in 7 scenarios" in c.overall.message


def test_runs_over_different_task_sets_are_refused_unless_intersect(runs: dict[str, Path]) -> None:
    proc = compare(runs["reference"], runs["noop-small"])
    assert proc.returncode == 2 and "5 task(s) only in A" in proc.stderr and "--intersect" in proc.stderr
    c = Comparison.model_validate_json(compare(runs["reference"], runs["noop-small"], "--intersect", "--json").stdout)
    assert c.overall.tasks == 2 and len(c.only_in_a) == 5


def test_a_blue_that_passes_on_alternate_trials_flips_its_task(runs: dict[str, Path]) -> None:
    res = results(runs["alternating"])
    stab = res.aggregates.stability
    flaky, steady = res.manifest.task_ids
    assert stab is not None and stab.tasks == 2 and stab.flip_rate == 50.0 and stab.flaky_tasks == [flaky]
    assert stab.pass_rate_histogram == {"0/2": 0, "1/2": 1, "2/2": 1}
    assert stab.tgc_by_trial == {"1": 100.0, "2": 50.0} and stab.tgc_spread_p95 == 50.0
    assert res.aggregates.pass_hat_k == {"1": 0.75, "2": 0.5} and res.aggregates.pass_hat_k_ci is not None
    board = json.loads((runs["alternating"] / "agentbeats_results.json").read_text())["results"][0]
    assert board["flip_rate"] == 50.0 and board["tgc_ci"] == [res.aggregates.tgc_ci.low, res.aggregates.tgc_ci.high]


def test_report_html_shows_the_intervals_in_chromium(runs: dict[str, Path], chromium: str, tmp_path: Path) -> None:
    agg = results(runs["noop"]).aggregates
    assert agg.tgc == 0.0 and agg.tgc_ci is not None and agg.tgc_ci.high > 0  # all fail: still an interval
    dom = dump_dom(chromium, runs["noop"] / "report.html", tmp_path / "p1")
    assert 'data-ready="1"' in dom
    assert f'95% CI {agg.tgc_ci.low:.1f}–{agg.tgc_ci.high:.1f}' in dom and 'id="ci-tgc-wilson"' in dom
    assert 'id="ci-sgc"' in dom and 'class="whisker"' in dom
    flips = dump_dom(chromium, runs["alternating"] / "report.html", tmp_path / "p2")
    assert 'id="stability"' in flips and 'id="ci-flip-rate"' in flips and "Tasks by trials passed" in flips
    page = tmp_path / "cmp.html"
    assert compare(runs["noop"], runs["reference"], "--out", page).returncode == 0
    shown = dump_dom(chromium, page, tmp_path / "p3")
    assert 'id="verdict"' in shown and "B is better" in shown and 'id="diff-all"' in shown
