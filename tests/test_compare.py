"""`compare` on hand-made runs: the statistics, the refusals, the CLI's table, JSON and HTML page.

Runs are `EvalResults` built from rows (the shape `results.json` holds) and written to disk where
the CLI reads them; the real-run comparison is tests/test_compare_e2e.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest

from green_agent.batch.aggregate import aggregate, scenario_of
from green_agent.batch.compare import compare_runs
from green_agent.cli import main
from green_agent.models.comparison import Comparison
from green_agent.models.eval_run import EvalResults, EvalRow, RunConfig, RunManifest
from green_agent.runfolder.layout import BattleKey, result_path
from kernel.errors import BadInputError

TASKS = [f"s{i // 3}_{i % 3 + 1}" for i in range(21)]


def run(verdict: Callable[[int, int], bool], tasks: list[str] = TASKS, trials: int = 1, split: str | None = "dev",
        root: str = "/world", digests: dict[str, str] | None = None, blue: str = "x") -> EvalResults:
    rows = [EvalRow(task_id=t, trial=k, scenario_id=scenario_of(t), difficulty=i % 3 + 1, battle_id=f"b{i}{k}",
                    status="completed", outcome="passed" if verdict(i, k) else "failed", passed=verdict(i, k),
                    result_path=result_path(BattleKey(t, k), trials))
            for i, t in enumerate(tasks) for k in range(1, trials + 1)]
    manifest = RunManifest(run_id=f"run-{blue}", fingerprint="f", task_set_digest="d",
                           config=RunConfig(blue=blue, predictor="ground_truth", split=split, trials=trials,
                                            deadline_s=60), task_ids=tasks, appworld_root=root,
                           task_digests=digests if digests is not None else {t: "0" * 16 for t in tasks},
                           created_at=datetime.now(timezone.utc))
    return EvalResults(status="completed", manifest=manifest, rows=rows,
                       aggregates=aggregate(rows, len(rows), trials, tasks), generated_at=datetime.now(timezone.utc))


def test_all_fail_against_all_pass_is_a_hundred_points_and_significant() -> None:
    c = compare_runs(run(lambda i, k: False), run(lambda i, k: True), "a", "b")
    assert (c.overall.difference, c.overall.verdict) == (100.0, "b_better")
    # the test swaps whole scenarios: 7 scenarios all one way is the smallest p they allow, 2 / 2^7
    assert c.overall.test.name == "scenario permutation" and c.overall.test.p_value == pytest.approx(2 * 0.5 ** 7)
    assert (c.overall.test.b_only, c.overall.test.a_only, c.overall.test.scenarios) == (21, 0, 7)
    assert c.overall.ci is not None and 0 < c.overall.ci.low < 100.0 == c.overall.ci.high
    assert c.counts == {"better": 21, "worse": 0, "same": 0, "both": 0, "a_only": 0, "b_only": 21, "neither": 0}
    assert set(c.by_difficulty) == {"1", "2", "3"} and c.by_difficulty["1"].tasks == 7
    assert c.overall.message.startswith("B is better: B - A = +100.0 points")


def test_identical_runs_cannot_be_told_apart_and_say_what_could_be() -> None:
    verdict = lambda i, k: i % 3 != 0  # noqa: E731
    c = compare_runs(run(verdict), run(verdict), "a", "b")
    assert c.overall.difference == 0.0 and c.overall.verdict == "cannot_tell" and c.overall.test.p_value == 1.0
    # no change seen on 7 scenarios does not rule out a change on a third of tasks like these: not 0 to 0
    assert c.overall.ci is not None and c.overall.ci.low == -c.overall.ci.high and 25 < c.overall.ci.high < 50
    assert c.overall.minimum_detectable is not None and c.overall.minimum_detectable > 20
    assert f"A difference below {c.overall.minimum_detectable:.0f} points cannot be told apart from noise on 21 tasks " \
        "in 7 scenarios" in c.overall.message and c.overall.message.startswith("Cannot tell A and B apart")


def test_one_scenario_gets_no_interval_and_says_so() -> None:
    c = compare_runs(run(lambda i, k: False, tasks=TASKS[:3]), run(lambda i, k: True, tasks=TASKS[:3]), "a", "b")
    assert c.overall.ci is None and c.overall.minimum_detectable is None and c.overall.verdict == "cannot_tell"
    assert "no interval: one scenario" in c.overall.message and "One scenario is too few" in c.overall.message


def test_the_test_swaps_whole_scenarios_and_leaves_out_tied_ones() -> None:
    a = run(lambda i, k: i % 2 == 1)
    b = run(lambda i, k: i % 3 != 0)
    c = compare_runs(a, b, "a", "b")
    import numpy as np
    from scipy.stats import permutation_test

    b_only = sum(1 for i in range(21) if i % 3 != 0 and i % 2 == 0)
    a_only = sum(1 for i in range(21) if i % 3 == 0 and i % 2 == 1)
    assert (c.overall.test.b_only, c.overall.test.a_only) == (b_only, a_only) == (7, 3)
    sums_a = [sum(i % 2 == 1 for i in range(3 * s, 3 * s + 3)) for s in range(7)]
    sums_b = [sum(i % 3 != 0 for i in range(3 * s, 3 * s + 3)) for s in range(7)]
    keep = [s for s in range(7) if sums_a[s] != sums_b[s]]
    expected = permutation_test(([sums_a[s] for s in keep], [sums_b[s] for s in keep]),
                                lambda x, y, axis=-1: np.sum(np.asarray(y) - np.asarray(x), axis=axis),
                                permutation_type="samples", vectorized=True).pvalue  # exact: 2^len(keep) patterns
    assert c.overall.test.scenarios_differing == len(keep) and c.overall.test.p_value == pytest.approx(expected)
    assert c.overall.verdict == "cannot_tell"
    assert [t.task_id for t in c.tasks if t.change == "worse"] == [TASKS[i] for i in (3, 9, 15)]


def test_with_trials_the_test_swaps_scenarios_of_pass_rates() -> None:
    a = run(lambda i, k: (i + k) % 2 == 0, trials=3)
    b = run(lambda i, k: (i + k) % 3 != 0, trials=3)
    c = compare_runs(a, b, "a", "b")
    assert c.overall.test.name == "scenario permutation" and 0 < c.overall.test.p_value < 1
    assert "both" not in c.counts  # pass rates, not single verdicts
    again = compare_runs(a, b, "a", "b")
    assert again.overall == c.overall  # seeded


def test_different_task_sets_are_refused_naming_the_difference_unless_intersect() -> None:
    a, b = run(lambda i, k: True), run(lambda i, k: False, tasks=TASKS[:19])
    with pytest.raises(BadInputError, match=r"2 task\(s\) only in A \(s6_2, s6_3\), 0 only in B .*--intersect"):
        compare_runs(a, b, "a", "b")
    c = compare_runs(a, b, "a", "b", intersect=True)
    assert c.overall.tasks == 19 and c.only_in_a == ["s6_2", "s6_3"] and c.intersect


def test_different_splits_and_worlds_are_refused() -> None:
    with pytest.raises(BadInputError, match="different splits"):
        compare_runs(run(lambda i, k: True), run(lambda i, k: True, split="train"), "a", "b")
    other = {t: ("1" if t == "s2_2" else "0") * 16 for t in TASKS}
    with pytest.raises(BadInputError, match=r"different worlds: task\(s\) s2_2 differ"):
        compare_runs(run(lambda i, k: True), run(lambda i, k: True, digests=other), "a", "b", intersect=True)
    with pytest.raises(BadInputError, match="different worlds .* no task digests"):
        compare_runs(run(lambda i, k: True, digests={}), run(lambda i, k: True, root="/other", digests={}), "a", "b")
    with pytest.raises(BadInputError, match="share no task"):
        compare_runs(run(lambda i, k: True), run(lambda i, k: True, tasks=["zzz_1"]), "a", "b", intersect=True)


def test_a_task_unjudged_in_one_run_counts_as_not_passed_like_the_headline_and_is_listed() -> None:
    b = run(lambda i, k: True)
    b.rows[0] = b.rows[0].model_copy(update={"outcome": "infra_error", "status": "infra_error", "passed": False})
    del b.rows[1]  # no result at all
    c = compare_runs(run(lambda i, k: True), b, "a", "b")
    assert c.incomplete_tasks == TASKS[:2] and c.overall.tasks == 21
    assert [t.change for t in c.tasks[:3]] == ["worse", "worse", "same"] and c.tasks[1].outcomes_b == []
    headline = aggregate(b.rows, 21, 1, TASKS).tgc
    assert c.overall.tgc_b == pytest.approx(100 * 19 / 21, abs=0.01) and headline == pytest.approx(c.overall.tgc_b)


def write(results: EvalResults, directory: Path) -> Path:
    directory.mkdir(parents=True)
    (directory / "results.json").write_text(results.model_dump_json())
    return directory


def test_cli_prints_a_table_writes_json_and_html_and_escapes_what_came_from_the_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(run(lambda i, k: False, blue="<b>noop</b>"), tmp_path / "a")
    b = write(run(lambda i, k: True, blue="reference"), tmp_path / "b")
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "cmp.html")]) == 0
    table = capsys.readouterr().out
    assert "B is better" in table and "scenario permutation" in table and "difficulty 3" in table
    assert "better in B (21): s0_1 fail -> pass (failed -> passed)" in table
    assert ("tasks: 21 better in B, 0 worse, 0 the same; passed in both runs 0, only in A 0, only in B 21, "
            "in neither 0.") in table
    assert "MDD (min. detectable): the smallest B - A difference" in table
    assert table.rstrip().endswith(f"wrote the comparison page (open it in a browser): {(tmp_path / 'cmp.html').resolve()}")
    page = (tmp_path / "cmp.html").read_text()
    assert "passed in both runs 0" in page and "MDD (min. detectable)" in page
    assert "<b>noop</b>" not in page and "&lt;b&gt;noop&lt;/b&gt;" in page and 'id="verdict"' in page
    assert main(["compare", str(a / "results.json"), str(b), "--json", "--out", str(tmp_path / "cmp.json"),
                 "--confidence", "0.9"]) == 0
    out, err = capsys.readouterr()
    printed = Comparison.model_validate_json(out)
    assert f"wrote the comparison JSON: {(tmp_path / 'cmp.json').resolve()}" in err  # stdout stays pure JSON
    assert printed == Comparison.model_validate_json((tmp_path / "cmp.json").read_text())
    assert printed.confidence_level == 0.9 and printed.overall.ci is not None and printed.overall.ci.level == 0.9


def test_cli_refusals_are_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(run(lambda i, k: True), tmp_path / "a")
    b = write(run(lambda i, k: True, tasks=TASKS[:3]), tmp_path / "b")
    assert main(["compare", str(a), str(b)]) == 2
    assert "only in A" in capsys.readouterr().err
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").write_text("{}")
    assert main(["compare", str(a), str(tmp_path / "run")]) == 2
    assert "appworld-green report" in capsys.readouterr().err
    assert main(["compare", str(a), str(a), "--confidence", "1.5"]) == 2
    assert "--confidence" in capsys.readouterr().err
    assert json.loads((a / "results.json").read_text())["status"] == "completed"


def test_a_one_scenario_run_says_in_words_that_it_has_no_interval_wherever_intervals_are_shown(tmp_path: Path) -> None:
    from green_agent.batch.report_html import render_html
    from green_agent.batch.rows import interval_fields
    from green_agent.commands.eval import summary

    one = run(lambda i, k: i != 1, tasks=TASKS[:3])
    agg = one.aggregates
    assert agg.tgc_ci is None and agg.sgc_ci is None and agg.tgc_wilson is not None  # Wilson is still shown beside
    words = "no interval: one scenario cannot show how scenarios vary"
    text = summary(one, tmp_path)
    assert f"TGC 66.7 [{words}] (Wilson" in text and f"SGC 0.0 [{words}]" in text
    assert f'id="ci-tgc">{words}</div>' in render_html(one, [])
    fields = interval_fields(agg)
    assert fields["tgc_ci"] is None and fields["no_interval"] == words
    two = run(lambda i, k: i != 1, tasks=TASKS[:6]).aggregates
    assert two.tgc_ci is not None and interval_fields(two)["no_interval"] is None
    assert "95% CI" in summary(run(lambda i, k: i != 1, tasks=TASKS[:6]), tmp_path)


def test_the_minimum_detectable_difference_counts_scenarios_and_how_alike_their_tasks_are() -> None:
    from green_agent.stats.power import minimum_detectable_difference

    from statsmodels.stats.power import TTestPower

    mixed = compare_runs(run(lambda i, k: i % 3 != 0), run(lambda i, k: i % 3 != 0), "a", "b").overall
    assert mixed.design_effect == 1.0  # every scenario's mean alike: its tasks vary, scenarios do not
    effect = TTestPower().solve_power(effect_size=None, nobs=7, alpha=0.05, power=0.8)  # 7 scenarios, 6 df
    assert mixed.minimum_detectable == round(100 * effect * (2 / 3 * 1 / 3 * 2 / 3) ** 0.5, 1) == 49.0  # pooled 2/3
    together = compare_runs(run(lambda i, k: (i // 3) % 2 == 0), run(lambda i, k: (i // 3) % 2 == 0), "a", "b")
    assert together.overall.design_effect == 3.0  # a scenario's tasks pass or fail together: one task each
    assert together.overall.minimum_detectable == minimum_detectable_difference(21, 4 / 7, scenarios=7,
                                                                                design_effect=3.0)
    assert together.overall.minimum_detectable > mixed.minimum_detectable  # type: ignore[operator]
    assert "design effect 3.0" in together.overall.message


def test_when_the_runs_cannot_show_how_alike_a_scenarios_tasks_are_the_sentence_says_it_took_the_worst() -> None:
    c = compare_runs(run(lambda i, k: False), run(lambda i, k: True), "a", "b").overall  # every pooled rate 50%
    assert c.design_effect == 3.0 and "cannot show how alike they are" in c.message


def test_the_changed_tasks_say_why_each_side_ended_as_it_did(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_run, b_run = run(lambda i, k: False), run(lambda i, k: True)
    a_run.rows[0] = a_run.rows[0].model_copy(update={"tests_passed": 1, "tests_total": 4})
    a_run.rows[1] = a_run.rows[1].model_copy(update={"outcome": "infra_error", "status": "infra_error",
                                                      "error_type": "AppWorldUnavailableError", "error_step": "setup"})
    c = compare_runs(a_run, b_run, "a", "b")
    assert c.tasks[0].reasons_a == ["1/4 tests passed"] and c.tasks[0].reasons_b == ["passed"]
    assert c.tasks[1].reasons_a == ["not judged: AppWorldUnavailableError in step setup"]
    a, b = write(a_run, tmp_path / "a"), write(b_run, tmp_path / "b")
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "cmp.html")]) == 0
    assert "s0_1 fail -> pass (failed (1/4 tests passed) -> passed)" in capsys.readouterr().out
    page = (tmp_path / "cmp.html").read_text()
    assert "failed (1/4 tests passed)" in page and "infra_error (not judged: AppWorldUnavailableError in step setup)" in page


def test_the_changed_tasks_link_each_trials_trace_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_run, b_run = run(lambda i, k: False), run(lambda i, k: i == 0)
    a, b = write(a_run, tmp_path / "a"), write(b_run, tmp_path / "b")
    for folder in (a / "tasks" / TASKS[0], b / "tasks" / TASKS[0]):
        folder.mkdir(parents=True)
        (folder / "trace.html").write_text("<p>story</p>")
    (tmp_path / "b" / "tasks" / TASKS[1]).mkdir(parents=True)  # a changed task's trial with no page: no link
    (tmp_path / "out").mkdir()
    inside = b_run.rows[2]
    b_run.rows[2] = inside.model_copy(update={"result_path": "../a/tasks/" + TASKS[0] + "/result.json"})
    (b / "results.json").write_text(b_run.model_dump_json())  # a result path out of its run: B is refused
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "out" / "cmp.html")]) == 2
    assert "results.json row 3: result_path '../a/tasks/s0_1/result.json' is not where" in capsys.readouterr().err
    assert compare_runs(a_run, b_run, "a", "b", run_dirs=(a, b)).tasks[2].pages_b == [None]  # nor followed there
    b_run.rows[2] = inside
    (b / "results.json").write_text(b_run.model_dump_json())
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "out" / "cmp.html")]) == 0
    page = (tmp_path / "out" / "cmp.html").read_text()
    changed = page[page.index('id="changed"'):]
    assert changed.count('class="trace"') == 2
    assert f'href="../a/tasks/{TASKS[0]}/trace.html">A1 trace</a>' in changed
    assert f'href="../b/tasks/{TASKS[0]}/trace.html">B1 trace</a>' in changed
    c = compare_runs(a_run, b_run, "a", "b", run_dirs=(a, b))
    assert c.tasks[0].pages_b == [str((b / "tasks" / TASKS[0] / "trace.html").resolve())]
    assert c.tasks[2].pages_b == [None] and c.tasks[1].pages_a == [None]
