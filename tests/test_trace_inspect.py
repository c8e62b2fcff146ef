"""The Inspect AI export: a real eval's battles written with inspect_ai's writer, read back with its reader and
served by its own viewer (`inspect view`), seen in headless Chromium.

inspect-ai is the optional extra `make inspect` installs (requirements-inspect.txt; `make test` depends on it).
The run (one for the module): the no-op Blue on one task for two trials (tools mode), so samples share an id
and differ by epoch. The viewer is a JS app (it fetches the log and unpacks it in a web worker), so Chromium
is driven over the DevTools pipe in real time (tests/chromium_cdp.py), not with `--dump-dom`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from chromium_cdp import ChromiumPage
from faults_support import answers, wait_until
from green_agent.models.eval_run import EvalResults
from green_agent.models.result import BattleResult
from green_agent.trace.reader import read_trace
from kernel.ports import free_port
from test_batch_e2e import CLI, cli_env
from test_report_html import chromium  # noqa: F401 - the fixture
from test_scope_policy_e2e import run_eval

pytestmark = pytest.mark.e2e
INSPECT = str(Path(sys.executable).parent / "inspect")
SCREENSHOTS_ENV = "TRACE_SCREENSHOTS"
"""A folder for the viewer's screenshots (samples list, transcript, a markup reply), for a person to look at
(default: the test's tmp_path)."""
REPLY = "Ended task f0a1c01_1 without doing it (no-op Blue)."
MARKUP = '**bold-md** [a link](http://198.51.100.7/x) <b id="injected">tag</b> ![pic](http://198.51.100.7/p.png)'
"""What a hostile agent could reply: markdown and HTML aimed at the viewer (198.51.100.7: TEST-NET-2)."""


class Exported(NamedTuple):
    run: Path
    results: EvalResults
    log: Path
    env: dict[str, str]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, appworld_root: Path) -> Exported:
    """One real eval (no-op Blue, f0a1c01_1, two trials), exported with the CLI to `noop.eval`."""
    tmp = tmp_path_factory.mktemp("inspect")
    results = run_eval(appworld_root, tmp, "noop", ["f0a1c01_1"], "--blue", "noop", "--trials", "2")
    env = cli_env(appworld_root, tmp)
    out = export(tmp / "noop", tmp / "logs" / "noop.eval", env)
    return Exported(tmp / "noop", results, out, env)


def export(run: Path, out: Path, env: dict[str, str]) -> Path:
    proc = subprocess.run([CLI, "export", str(run), "--format", "inspect", "--out", str(out)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def test_an_eval_exports_to_inspect_and_reads_back_equal(exported: Exported) -> None:
    from inspect_ai.log import read_eval_log

    results, tmp_path = exported.results, exported.run.parent
    log = read_eval_log(str(exported.log))
    assert log.status == "success" and len(log.samples) == len(results.rows) == 2
    assert log.results.scores[0].metrics["accuracy"].value == results.aggregates.tgc / 100
    assert log.eval.viewer.trust_content is False  # the agent's text is data: the viewer shows it as plain text
    assert log.stats.started_at and log.stats.completed_at >= log.stats.started_at
    for sample, row in zip(sorted(log.samples, key=lambda s: s.epoch), results.rows):
        assert (sample.id, sample.epoch) == (row.task_id, row.trial)
        assert sample.scores["appworld"].value == (1.0 if row.passed else 0.0)
        assert sample.scores["outcome"].value == row.outcome == "failed"
        assert [e.scorer for e in sample.events if e.event == "score"] == ["appworld", "outcome"]
        assert sample.metadata["interaction"] == "tools" and sample.metadata["scenario"] == row.scenario_id
        assert sample.target == ""  # the expected answer is never exported
        submitted = BattleResult.model_validate_json((exported.run / row.result_path).read_text()).trajectory
        assert sample.scores["appworld"].answer == (submitted.submitted_answer if submitted else None)
        records = read_trace(tmp_path / "noop" / Path(row.result_path).parent / "trace.jsonl")
        calls = [r for r in records if r.kind == "tool_call"]
        assert [e.function for e in sample.events if e.event == "tool"] == [c.tool for c in calls]
        tools = [e for e in sample.events if e.event == "tool"]  # numbered in the battle; the gateway's seq beside
        assert [(e.id, e.metadata["call"], e.metadata["seq"]) for e in tools] == [
            (f"call-{n}", n, c.seq) for n, c in enumerate(calls, start=1)]
        assert sample.messages[0].role == "user" and "AppWorld task id: f0a1c01_1" in sample.messages[0].text
        assert [m.function for m in sample.messages if m.role == "tool"] == [c.tool for c in calls]


@pytest.fixture()
def inspect_view(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """inspect_ai's own viewer (`inspect view start`) on loopback, a free port, and `tmp_path/logs`.

    Its data folder (it keeps a pid file per port there, and terminates the pid it finds in one) and its working
    folder (it loads a `.env` found up from there) are the test's own, and its environment holds no secret.
    Stopped (its process group killed) whatever happens."""
    logs, home = tmp_path / "logs", tmp_path / "view-home"
    logs.mkdir()
    home.mkdir()
    port = free_port()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "XDG_DATA_HOME": str(home / "data"),
           "XDG_CACHE_HOME": str(home / "cache"), "XDG_CONFIG_HOME": str(home / "config"), "LANG": "C.UTF-8"}
    with open(home / "view.log", "wb") as log:
        process = subprocess.Popen([INSPECT, "view", "start", "--log-dir", str(logs), "--host", "127.0.0.1",
                                    "--port", str(port)], cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        def up() -> bool:
            assert process.poll() is None, f"inspect view exited: {(home / 'view.log').read_text()[-2000:]}"
            return answers(url + "api/log-files")
        wait_until(up, 90, "inspect view answering")
        yield url, logs
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def grid_rows(page: ChromiumPage) -> list[dict[str, str]]:
    """The viewer's sample list as rows of {column header: cell text}."""
    table = page.evaluate("""Array.from(document.querySelectorAll('[role="row"]')).map(r =>
        Array.from(r.querySelectorAll('[role="columnheader"],[role="gridcell"]')).map(c => c.innerText.trim()))""")
    header, *rows = table
    return [dict(zip(header, row)) for row in rows]


def test_inspect_view_shows_the_samples_in_chromium(exported: Exported, inspect_view: tuple[str, Path],
                                                     chromium: str, tmp_path: Path) -> None:  # noqa: F811
    url, logs = inspect_view
    shutil.copy(exported.log, logs / "noop.eval")
    rows = exported.results.rows
    # the same run with the second trial's reply made markup, as a hostile agent could send it
    markup_run = tmp_path / "markup-run"
    shutil.copytree(exported.run, markup_run)
    trace = markup_run / Path(rows[1].result_path).parent / "trace.jsonl"
    assert REPLY in trace.read_text()
    trace.write_text(trace.read_text().replace(REPLY, json.dumps(MARKUP)[1:-1]))
    export(markup_run, logs / "markup.eval", exported.env)
    shots = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path)

    with ChromiumPage(chromium, tmp_path / "profile") as page:
        page.open(f"{url}#/logs/noop.eval/samples/")
        page.wait_text([f"{len(rows)} Samples", "OUTCOME"], 90)
        page.screenshot(shots / "inspect-view-samples.png")
        shown = {(r["ID"], r["EPOCH"], r["APPWORLD"], r["OUTCOME"]) for r in grid_rows(page)}
        assert shown == {(r.task_id, str(r.trial), "1" if r.passed else "0", r.outcome) for r in rows}

        page.open(f"{url}#/logs/noop.eval/samples/sample/f0a1c01_1/1/")  # the transcript: the call, then the verdict
        page.wait_text(["supervisor__complete_task", "Marked the active task complete.", "1/2 tests passed"], 90)
        page.screenshot(shots / "inspect-view-transcript.png")

        page.open(f"{url}#/logs/markup.eval/samples/sample/f0a1c01_1/2/messages")
        text = page.wait_text(["ASSISTANT", "bold-md"], 90)
        page.screenshot(shots / "inspect-view-markup.png")
        assert "**bold-md**" in text and "![pic](http://198.51.100.7/p.png)" in text  # shown as typed, as text
        rendered = page.evaluate("""[document.getElementById('injected'), ...document.querySelectorAll(
            'a[href*="198.51.100.7"], img[src*="198.51.100.7"]'), ...Array.from(document.querySelectorAll('strong,b'))
            .filter(e => e.textContent.includes('bold-md'))].filter(Boolean).map(e => e.outerHTML)""")
        assert rendered == [] and '&lt;b id="injected"&gt;' in page.dom()  # no element made of it; the tag as text
    # the viewer needs nothing beyond its own server (web workers' requests are not the page's: the CSP says 'self')
    assert page.requested and all(u.startswith((url, "data:", "blob:")) for u in page.requested), page.requested


def test_export_without_a_run_says_what_to_give(tmp_path: Path) -> None:
    proc = subprocess.run([CLI, "export", str(tmp_path), "--out", str(tmp_path / "x.eval")], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "results.json" in proc.stderr
