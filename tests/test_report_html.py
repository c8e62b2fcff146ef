"""The HTML report, rendered by a real headless Chromium (Debian's package, installed if missing).

A run directory is produced by the real batch pipeline on fakes (tests/batch_fakes.py), with one
task's instruction and call log made hostile (markup, a password argument) to check escaping and
redaction. Chromium's `--dump-dom` gives the DOM after the page's script ran.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from batch_fakes import FakeBattles, FakeSlots
from green_agent.engine.config import BattleChoices
from green_agent.batch.evaluate import EvalRequest, run_eval
from green_agent.batch.rows import write_outputs
from green_agent.batch.taskinfo import load_task_info, save_task_info
from green_agent.cli import main
from kernel.settings import Settings

HOSTILE = "<script>window.pwned=1</script><b id=\"injected\">bold</b> & \"quotes\""
SECRET = "hunter2-do-not-leak"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's chromium; installed with apt-get when missing (the Makefile's `browser` target does the same)."""
    path = shutil.which("chromium")
    if path is None:
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, timeout=600)
        subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], capture_output=True, timeout=1200,
                       env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
        path = shutil.which("chromium")
    if path is None:
        pytest.fail("chromium is not installed and `apt-get install -y chromium` failed: run `make browser` as root")
    return path


@contextmanager
def chromium_env() -> Iterator[dict[str, str]]:
    """Chromium's environment, its TMPDIR a short folder of its own, removed after: Chromium leaves its singleton
    socket there when it is killed, and a socket's path must stay under 108 bytes (a test's tmp_path may not)."""
    temp = tempfile.mkdtemp(prefix="chromium-")
    try:
        yield {**os.environ, "TMPDIR": temp}
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def dump_dom(chromium: str, page: Path, profile: Path, fragment: str = "") -> str:
    with chromium_env() as env:
        proc = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                               f"file://{page}{fragment}"], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.fixture()
def run_dir(tmp_path: Path, world_copy, mini_tasks: tuple[str, str]) -> Path:
    """A finished two-task run (fake battles: one passed, one collateral_damage) with hostile content."""
    damaged = mini_tasks[1]
    settings = Settings(appworld_root=world_copy(splits={"mini": mini_tasks}), runs_dir=tmp_path / "runs")
    out = tmp_path / "run"
    request = EvalRequest(split="mini", choices=BattleChoices(blue="fake", predictor="ground_truth"), out=out, workers=2)
    run_eval(request, settings, progress_stream=io.StringIO(), factory=FakeSlots(),
             battle=FakeBattles(outcomes={damaged: "collateral_damage"}))
    info = load_task_info(out, damaged)
    assert info is not None
    save_task_info(out, info.model_copy(update={"instruction": HOSTILE}))
    calls = [{"timestamp": "2026-01-01T00:00:0%dZ" % i, "tool_name": tool, "arguments": args, "success": ok,
              "error": None if ok else "401: wrong password", "duration_ms": 10.0 * (i + 1), "seq": i}
             for i, (tool, args, ok) in enumerate([
                 ("simple_note__login", {"username": "ava", "password": SECRET}, False),
                 ("simple_note__login", {"username": "ava", "password": SECRET}, True),
                 ("simple_note__search_notes", {"access_token": "eyJhbGciOi.eyJzdWIiOiJ4In0.c2lnbmF0dXJl",
                                                "query": "<img src=x onerror=alert(1)>"}, True)])]
    (out / "tasks" / damaged / "mcp_calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    assert main(["report", str(out)]) == 0  # the report command regenerates everything from disk
    return out


def test_report_opens_in_chromium_with_headline_numbers_and_every_task(chromium: str, run_dir: Path,
                                                                       tmp_path: Path) -> None:
    results = json.loads((run_dir / "results.json").read_text())
    assert results["aggregates"]["tgc"] == 50.0 and results["aggregates"]["sgc"] == 50.0
    dom = dump_dom(chromium, run_dir / "report.html", tmp_path / "profile")
    assert 'data-ready="1"' in dom, "the page's script did not run"
    tgc_card = re.search(r'id="headline-tgc"><div class="v">([^<]+)<', dom)
    sgc_card = re.search(r'id="headline-sgc"><div class="v">([^<]+)<', dom)
    assert tgc_card and tgc_card.group(1) == "50.0%"
    assert sgc_card and sgc_card.group(1) == "50.0%"
    assert re.search(r'id="headline-passed"><div class="v">1/2/2<', dom)
    for task_id in results["manifest"]["task_ids"]:
        assert f'id="detail-{task_id}-1"' in dom and f">{task_id}</a>" in dom
    assert "collateral_damage" in dom and "AssertionError: &lt;missing&gt; == 'note'" in dom
    assert dom.count("<svg") == 3  # difficulty, calls per battle, latency histogram
    assert "401: wrong password" in dom and "simple_note__search_notes" in dom


def test_report_escapes_task_content_and_never_shows_credentials(chromium: str, run_dir: Path, tmp_path: Path) -> None:
    html = (run_dir / "report.html").read_text()
    assert SECRET not in html and "eyJhbGciOi" not in html and "[REDACTED]" in html
    dom = dump_dom(chromium, run_dir / "report.html", tmp_path / "profile")
    assert '<b id="injected">' not in dom and "window.pwned=1</script>" not in dom
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in dom
    assert "&lt;img src=x onerror=alert(1)&gt;" in dom
    assert dom.count("<script>") == 1  # only the report's own script


def test_sorting_by_url_fragment_reorders_the_table(chromium: str, run_dir: Path, tmp_path: Path) -> None:
    def task_order(dom: str) -> list[str]:
        body = dom.split('<table id="battles">', 1)[1].split("</table>", 1)[0]
        return re.findall(r'<a href="#detail-([^"]+)-\d+">', body)

    ascending = task_order(dump_dom(chromium, run_dir / "report.html", tmp_path / "p1", "#sort=task:asc"))
    descending = task_order(dump_dom(chromium, run_dir / "report.html", tmp_path / "p2", "#sort=task:desc"))
    assert ascending == sorted(ascending) and len(ascending) == 2
    assert descending == list(reversed(ascending))
    by_calls = dump_dom(chromium, run_dir / "report.html", tmp_path / "p3", "#sort=calls:desc")
    assert '<span id="sort-state">calls:desc</span>' in by_calls


def test_report_command_refuses_a_directory_that_is_not_a_run(tmp_path: Path) -> None:
    assert main(["report", str(tmp_path)]) == 2
    with pytest.raises(Exception, match="not an eval run directory"):
        write_outputs(tmp_path)


def test_a_failed_tasks_detail_shows_the_instruction_the_answer_vs_expected_and_the_failed_requirement(
        chromium: str, run_dir: Path, tmp_path: Path, mini_tasks: tuple[str, str]) -> None:
    damaged = mini_tasks[1]
    path = run_dir / "tasks" / damaged / "result.json"
    stored = json.loads(path.read_text())
    stored["evaluation"]["failures"].append({"requirement": "assert answers match.", "label": "no_op_fail",
                                            "trace": "AssertionError:  '12' == '445.29'"})
    path.write_text(json.dumps(stored))
    assert main(["report", str(run_dir)]) == 0
    dom = dump_dom(chromium, run_dir / "report.html", tmp_path / "profile")
    detail = dom[dom.index(f'id="detail-{damaged}-1"'):]
    detail = detail[:detail.index("</details>")]
    assert "<b>Instruction:</b> &lt;script&gt;" in detail  # the (hostile) instruction, as text
    assert "<b>Blue's answer:</b> 12 · <b>expected:</b> 445.29" in detail  # a local page: the expected answer too
    assert '<li>the note exists <span class="muted">(the change the task asked for)</span></li>' in detail
    assert "Green wins: the Blue changed something the task should not have touched" in detail  # the summary line


def test_charts_have_visible_titles_and_whole_task_ids_and_the_table_says_why(run_dir: Path) -> None:
    html = (run_dir / "report.html").read_text()
    captions = re.findall(r"<figcaption>([^<]+)</figcaption>", html)
    assert "Calls per battle (red: failed calls)" in captions and len(captions) == html.count("<svg")
    results = json.loads((run_dir / "results.json").read_text())
    calls_chart = html.split("Calls per battle", 1)[1].split("</svg>", 1)[0]
    height = float(re.search(r'viewBox="0 0 \d+ (\d+)"', calls_chart).group(1))  # type: ignore[union-attr]
    for task_id in results["manifest"]["task_ids"]:
        assert f">{task_id}</text>" in calls_chart  # the whole id, never cut
    longest = max(len(t) for t in results["manifest"]["task_ids"])
    assert height - (220 - 46) >= longest * 6.0 * 0.87  # room under the plot for the rotated label
    table = html.split('<table id="battles">', 1)[1].split("</table>", 1)[0]
    assert '<th data-key="why" data-numeric="0">Why</th>' in table
    whys = re.findall(r'<td data-v="([^"]*)" class="why">', table)
    assert len(whys) == len(results["rows"]) and all(whys)
    damaged = next(r for r in results["rows"] if r["outcome"] == "collateral_damage")
    assert any("not met" in w or "touched" in w or "damage" in w for w in whys), (whys, damaged["task_id"])
