"""Code mode on the A2A path: `assess` with `interaction: "code"`, the reference and no-op purples, real servers.

The in-band bridge offers the purple one tool, `execute` (protocol appworld-a2a-code/1): the reference
purple replies with its task's reference solution as one fenced python block and must win; the no-op
purple sends only `apis.supervisor.complete_task()` and must lose.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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
