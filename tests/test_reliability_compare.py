"""r_fault on hand-made runs: the paired ratio and its interval (`green_agent.reliability.ratio`), the reliability block
`compare` adds when run B is run A's battles under faults (`green_agent.reliability.r_fault`), and its CLI output.

Runs are `EvalResults` built from rows as test_compare.py builds them; the real runs are in
test_reliability_e2e.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from green_agent.batch.aggregate import aggregate
from green_agent.batch.compare import compare_runs
from green_agent.cli import main
from green_agent.models.eval_run import EvalResults, FaultAggregates, KindFaults
from green_agent.stats.intervals import IntervalOptions
from green_agent.reliability.ratio import paired_ratio
from green_agent.stats.cluster import difference_bounds
from kernel.fault_spec import parse_fault_spec
from test_compare import TASKS, run, write

SPEC = parse_fault_spec("rate=0.3,seed=1,kinds=error+empty")


def faulted(verdict, injected: dict[str, tuple[int, int]] | None = None) -> EvalResults:  # noqa: ANN001
    results = run(verdict, blue="b")
    silent = {"empty"}  # what the agent received: an empty page arrives as a success
    by_kind = {k: KindFaults(injected=i, recovered=r, silent=i if k in silent else 0)
               for k, (i, r) in (injected or {}).items()}
    heard = {quiet: KindFaults(injected=sum(k.injected for n, k in by_kind.items() if (n in silent) == quiet),
                               recovered=sum(k.recovered for n, k in by_kind.items() if (n in silent) == quiet))
             for quiet in (False, True)}
    totals = FaultAggregates(injected=sum(i for i, _ in (injected or {}).values()),
                             recovered=sum(r for _, r in (injected or {}).values()), by_kind=by_kind,
                             loud=heard[False], silent=heard[True])
    aggregates = aggregate(results.rows, len(results.rows), 1, TASKS).model_copy(update={"faults": totals})
    return results.model_copy(update={"faults": SPEC, "aggregates": aggregates, "standard": False,
                                      "custom": [f"faults {SPEC.text()}"]})


def test_the_ratio_is_the_paired_difference_over_the_baseline_clustered_by_scenario() -> None:
    a, b = [1, 1, 0, 1, 1, 1, 1], [1, 0, 0, 1, 1, 0, 1]
    clusters = ["s1", "s1", "s2", "s2", "s3", "s3", "s4"]
    found = paired_ratio(a, b, clusters)
    assert found.ratio == pytest.approx(4 / 6, abs=1e-4)
    bounds = difference_bounds(np.array(b, float) - np.array(a, float), clusters, 0.95)
    assert found.interval.low == pytest.approx(max(0, 1 + bounds.low / (6 / 7)), abs=1e-4)
    assert "paired difference" in found.interval.method and found.interval.low < found.ratio <= found.interval.high
    assert paired_ratio(a, b, clusters) == found  # no random draw: the same files, the same interval


def test_no_ratio_without_a_baseline_pass_and_no_interval_on_one_scenario() -> None:
    none = paired_ratio([0, 0], [1, 0], ["a", "b"])
    assert none.ratio is None and "passed nothing" in none.note
    one = paired_ratio([1, 1, 1], [1, 1, 0], ["a"] * 3)
    assert one.ratio == pytest.approx(2 / 3, abs=1e-4) and one.interval is None and "one scenario" in one.note


def test_compare_adds_the_reliability_block_only_for_a_baseline_against_its_faulted_run() -> None:
    baseline = run(lambda i, k: True)
    lossy = faulted(lambda i, k: i % 3 != 0, {"error": (10, 4), "empty": (5, 5)})
    c = compare_runs(baseline, lossy, "base", "faults")
    r = c.reliability
    assert r is not None and r.faults == SPEC
    assert (r.tgc_baseline, r.tgc_faults, r.r_fault) == (100.0, pytest.approx(66.67, abs=0.01), pytest.approx(
        14 / 21, abs=1e-4))
    assert r.r_fault_ci is not None and r.r_fault_ci.low <= r.r_fault <= r.r_fault_ci.high
    assert r.lost_tasks == [TASKS[i] for i in range(0, 21, 3)] and r.gained_tasks == []
    assert (r.sgc_baseline, r.sgc_faults, r.r_fault_sgc) == (100.0, 0.0, 0.0)
    assert {k: (v.injected, v.recovered, v.loud) for k, v in r.recovery_by_kind.items()} == {
        "error": (10, 4, True), "empty": (5, 5, False)}
    assert (r.recovery_loud, r.recovery_silent) == (0.4, 1.0)
    assert r.message.startswith("With 15 fault(s) injected (9 recovered)") and "7 task(s) passed without" in r.message
    assert compare_runs(baseline, run(lambda i, k: True), "a", "b").reliability is None  # no faults anywhere
    assert compare_runs(lossy, baseline, "faults", "base").reliability is None  # the wrong way round


def test_compare_prints_the_reliability_block_and_its_json(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    base = write(run(lambda i, k: True), tmp_path / "base")
    hit = write(faulted(lambda i, k: i % 7 != 0, {"timeout": (6, 0)}), tmp_path / "faults")
    assert main(["compare", str(base), str(hit)]) == 0
    text = capsys.readouterr().out
    assert "reliability under rate=0.3,seed=1,kinds=error+empty" in text and "r_fault 0.86 (95% CI" in text
    assert "timeout     loud    injected    6, recovered    0 (0%)" in text
    assert main(["compare", str(base), str(hit), "--json", "--out", str(tmp_path / "c.html")]) == 0
    block = json.loads(capsys.readouterr().out)["reliability"]
    assert block["r_fault"] == pytest.approx(18 / 21, abs=1e-4) and block["r_fault_ci"]["level"] == 0.95
    assert block["recovery_by_kind"] == {"timeout": {"injected": 6, "recovered": 0, "rate": 0.0, "loud": True}}
    page = (tmp_path / "c.html").read_text()
    assert '<section id="reliability">' in page and "r_fault" in page
