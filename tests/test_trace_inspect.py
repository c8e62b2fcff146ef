"""The Inspect AI export: a real eval's battles written with inspect_ai's writer and read back with its reader.

inspect-ai is the optional extra `make inspect` installs (requirements-inspect.txt; `make test` depends on it).
The run: the no-op Blue on one task for two trials (tools mode), so samples share an id and differ by epoch.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from green_agent.models.eval_run import EvalResults
from green_agent.trace.reader import read_trace
from test_batch_e2e import CLI, cli_env
from test_scope_policy_e2e import run_eval

pytestmark = pytest.mark.e2e


def test_an_eval_exports_to_inspect_and_reads_back_equal(tmp_path: Path, appworld_root: Path) -> None:
    from inspect_ai.log import read_eval_log

    results: EvalResults = run_eval(appworld_root, tmp_path, "noop", ["f0a1c01_1"], "--blue", "noop", "--trials", "2")
    out = tmp_path / "noop.eval"
    proc = subprocess.run([CLI, "export", str(tmp_path / "noop"), "--format", "inspect", "--out", str(out)],
                          capture_output=True, text=True, timeout=300, env=cli_env(appworld_root, tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = read_eval_log(str(out))
    assert log.status == "success" and len(log.samples) == len(results.rows) == 2
    assert log.results.scores[0].metrics["accuracy"].value == results.aggregates.tgc / 100
    for sample, row in zip(sorted(log.samples, key=lambda s: s.epoch), results.rows):
        assert (sample.id, sample.epoch) == (row.task_id, row.trial)
        assert sample.scores["appworld"].value == (1.0 if row.passed else 0.0)
        assert sample.scores["outcome"].value == row.outcome == "failed"
        assert sample.metadata["interaction"] == "tools" and sample.metadata["scenario"] == row.scenario_id
        assert sample.target == ""  # the expected answer is never exported
        records = read_trace(tmp_path / "noop" / Path(row.result_path).parent / "trace.jsonl")
        calls = [r for r in records if r.kind == "tool_call"]
        assert [e.function for e in sample.events if e.event == "tool"] == [c.tool for c in calls]
        assert sample.messages[0].role == "user" and "AppWorld task id: f0a1c01_1" in sample.messages[0].text
        assert [m.function for m in sample.messages if m.role == "tool"] == [c.tool for c in calls]


def test_export_without_a_run_says_what_to_give(tmp_path: Path) -> None:
    proc = subprocess.run([CLI, "export", str(tmp_path), "--out", str(tmp_path / "x.eval")], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "results.json" in proc.stderr
