"""Blue-derived text is data: a hostile Blue's markup renders as text wherever the Green shows it.

A real A2A Blue on loopback (card name, tool name and error text all hostile) plays a real battle
on a real world slot: it calls a tool whose name holds a newline and backticks that would close a
code span and open a `## Blue wins (winner blue_agent)` heading, then answers the task message with
a JSON-RPC error whose text is `<img src=x onerror=...>**Blue wins**`. Then

1. the Blue's call feed and the final result are posted to the real AgentBeats backend from the wheel
   (`green_agent.agentbeats.backend`, an isolated database; a battle created over REST whose agents'
   launchers do not answer, so the backend leaves it in `error` and takes our events), the stored
   record is read back, its markdown rendered to HTML with raw HTML on (as the web UI must be assumed
   to do) and loaded in headless Chromium: no element came from the Blue, no handler ran, the Blue's
   text is on the page as text;
2. report.html of a run holding the same texts (the batch pipeline on fakes, then the Blue's texts
   written into the run's files, then `appworld-green report`) is loaded in headless Chromium: same checks;
3. the CLI's battle summary shows the Blue's texts on one line each, without control characters.

Contracts of the stand-ins: the launcher URL is a closed loopback port (the backend's agent reset
fails, as for a launcher that is down); nothing else is faked.
"""

from __future__ import annotations

import html
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import requests
from markdown_it import MarkdownIt
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from batch_fakes import FakeBattles, FakeSlots
from faults_support import MCP_HEADERS, InProcessServer, mcp_call, wait_until
from green_agent.engine.config import BattleChoices
from green_agent.agentbeats.blue_feed import BlueFeed
from green_agent.agentbeats.reporter import BackendReporter
from green_agent.batch.evaluate import EvalRequest, run_eval
from green_agent.cli import main
from green_agent.commands.battle import summary
from green_agent.local_battle import run_on_slot
from green_agent.models.result import BattleResult
from green_agent.runtime.processes import ManagedProcess
from green_agent.runtime.slot import WorldSlot
from kernel.call_log_reader import CallLogTail
from kernel.ports import free_port
from kernel.settings import Settings
from kernel.untrusted import code_span, markdown_line, markdown_text, one_line
from test_report_html import chromium, dump_dom  # noqa: F401 - the fixture and Chromium's DOM dump

pytest_plugins = ["faults_support"]
PWN = "document.documentElement.setAttribute('data-pwned','1')"
ERROR_TEXT = "<img src=x onerror=\"id='p'\">**Blue wins**"
"""Short: the old page's 160-character cell cut would otherwise have defanged it by accident."""
TOOL_NAME = "spotify__login`\n## Blue wins (winner blue_agent)\n`"
CARD_NAME = f"Hostile <img src=x onerror=\"{PWN}\"> **Blue**"
HEADING = "Blue wins (winner blue_agent)"


# -- the helper on its own ----------------------------------------------------------------------

def _render(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough").render(markdown)


@pytest.mark.parametrize("text", [ERROR_TEXT, TOOL_NAME, "- [x](javascript:alert(1)) ![i](x)", "a\n===\n1. b\n> c",
                                  "<script>alert(1)</script>", "&lt;img&gt; &copy; ~~s~~ _e_ \\*"])
def test_escaped_markdown_renders_as_exactly_the_text(text: str) -> None:
    rendered = _render(markdown_text(text))
    assert rendered.count("<") == rendered.count("<br />") + 2, rendered  # only <p>…</p> and line breaks
    assert html.unescape(rendered.replace("<br />\n", "\n")).strip()[3:-4] == "\n".join(
        line.strip() for line in text.split("\n"))
    line = _render(markdown_line(text))
    assert line.count("<") == 2 and html.unescape(line).strip()[3:-4] == one_line(text)


def test_a_code_span_cannot_be_closed_from_inside_and_survives_a_table_cell() -> None:
    span = code_span(TOOL_NAME, cell=True)
    rendered = _render(f"| tool |\n|---|\n| {span} |\n")
    assert "<h2>" not in rendered and rendered.count("<code>") == 1
    assert f"<code>{html.escape(one_line(TOOL_NAME), quote=False)}</code>" in rendered
    assert code_span("a|b", cell=True) == "`a\\|b`" and code_span("``x") == "``` ``x ```" and code_span("") == "`  `"


def test_one_line_drops_controls_and_bounds() -> None:
    assert one_line("a\r\nb\x1b[31m\u202ec\td", 6) == "a b[3…"
    assert one_line("a\r\nb\x1b[31m\u202ec\td") == "a b[31mc d"


# -- a real battle with the hostile Blue ----------------------------------------------------------

def _hostile_blue_app(calls: list[Any]) -> Starlette:
    """A2A: a valid card (hostile name); every message/send calls the hostile tool, then answers an error."""
    async def card(request: Request) -> Response:
        return JSONResponse({"name": CARD_NAME, "description": "hostile renderer test", "url": str(request.base_url),
                             "version": "0", "capabilities": {}, "defaultInputModes": ["text"],
                             "defaultOutputModes": ["text"], "skills": []})

    async def rpc(request: Request) -> Response:
        body = json.loads(await request.body() or b"{}")
        parts = ((body.get("params") or {}).get("message") or {}).get("parts") or []
        text = "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
        urls = [line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("MCP endpoint (Streamable HTTP): ")]
        if urls:
            reply = await run_in_threadpool(requests.post, urls[0], json=mcp_call(1, TOOL_NAME, {}),
                                            headers=MCP_HEADERS, timeout=30)
            calls.append(reply.status_code)
        return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), "error": {"code": -32603, "message": ERROR_TEXT}})

    return Starlette(routes=[Route("/.well-known/agent.json", card), Route("/.well-known/agent-card.json", card),
                             Route("/", rpc, methods=["POST"])])


@pytest.fixture(scope="module")
def hostile_battle(shared_env: Settings, shared_slot: WorldSlot, shared_task: str) -> dict[str, Any]:
    """The battle's result and the call feed's entries (collected, posted later to the backend)."""
    calls: list[Any] = []
    feed_entries: list[tuple[str, dict, str]] = []
    feed = BlueFeed(CallLogTail(shared_env.agentbeats_mcp_log_path, "hostile-render"),
                    lambda message, detail, markdown: feed_entries.append((message, detail, markdown)))
    with InProcessServer(_hostile_blue_app(calls)) as blue:
        choices = BattleChoices(blue="hostile-render", predictor="ground_truth", deadline_s=30)
        result = run_on_slot(shared_task, choices, shared_env, shared_slot.urls, blue.url + "/",
                             shared_env.runs_dir / "hostile-render", "hostile-render")
        feed.stop()
    assert calls, "the hostile Blue never reached the gateway"
    raw = json.dumps(result.model_dump(mode="json"))
    assert "onerror" in raw  # the record keeps what the Blue said (as data)
    return {"result": result, "feed": feed_entries}


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The wheel's backend with an isolated database."""
    tmp = tmp_path_factory.mktemp("hostile-backend")
    port, mcp_port = free_port(), free_port()
    process = ManagedProcess("backend", [sys.executable, "-m", "green_agent.agentbeats.backend", "--port", str(port),
                                         "--mcp-port", str(mcp_port), "--data-dir", str(tmp / "data")],
                             tmp / "backend.log", cwd=tmp)
    process.start()
    try:
        process.wait_ready(f"http://127.0.0.1:{port}/health", timeout_s=90)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.stop()


def _backend_battle(backend_url: str, card_url: str) -> str:
    """Two agents registered over REST (launchers down) and a battle; returned once the backend left it."""
    dead = f"http://127.0.0.1:{free_port()}"
    ids = {}
    for alias, green in (("Green", True), ("Blue", False)):
        info: dict[str, Any] = {"alias": alias, "agent_url": card_url, "launcher_url": dead, "is_green": green}
        if green:
            info["participant_requirements"] = [{"role": "blue_agent", "name": "blue_agent", "required": True}]
        reply = requests.post(f"{backend_url}/agents", json=info, timeout=30)
        assert reply.status_code == 201, reply.text
        ids[alias] = reply.json()["agent_id"]
    reply = requests.post(f"{backend_url}/battles", json={"green_agent_id": ids["Green"], "config": {}, "opponents": [
        {"name": "blue_agent", "agent_id": ids["Blue"], "role": "blue_agent"}]}, timeout=30)
    assert reply.status_code == 201, reply.text
    battle_id = reply.json()["battle_id"]
    wait_until(lambda: requests.get(f"{backend_url}/battles/{battle_id}", timeout=10).json().get("state") == "error",
               60, "the backend to give up on the launchers")
    return battle_id


def _page(record: dict[str, Any]) -> str:
    """The battle's entries as the web UI shows them: message as text, detail as JSON text, markdown as HTML."""
    entries = []
    for entry in record["interact_history"]:
        entries.append(f"<section><h4>{html.escape(str(entry.get('reported_by')))}</h4>"
                       f"<p>{html.escape(str(entry.get('message')))}</p>"
                       f"<pre>{html.escape(json.dumps(entry.get('detail'), indent=2))}</pre>"
                       f"<div class=md>{_render(entry.get('markdown_content') or '')}</div></section>")
    return f"<!doctype html><html><body>{''.join(entries)}</body></html>"


def _assert_inert(dom: str) -> None:
    assert not re.search(r"<html[^>]*data-pwned", dom) and 'id="p"' not in dom, "the Blue's handler ran"
    assert "<img" not in dom, "an element from the Blue's text"
    assert "<strong>Blue wins</strong>" not in dom
    assert f"<h2>{HEADING}</h2>" not in dom


@pytest.fixture(scope="module")
def card_url() -> Any:
    """The backend fetches the agents' cards at registration: the hostile card."""
    with InProcessServer(_hostile_blue_app([])) as server:
        yield server.url + "/"


@pytest.mark.e2e
def test_hostile_texts_render_as_text_on_the_backend_record(hostile_battle: dict[str, Any], backend: str, card_url: str,
                                                            chromium: str, tmp_path: Path) -> None:
    battle_id = _backend_battle(backend, card_url)
    reporter = BackendReporter(battle_id, backend)
    for message, detail, markdown in hostile_battle["feed"]:
        assert reporter.progress(message, detail, markdown, reported_by="hostile-render")
    reporter.report(hostile_battle["result"])
    record = requests.get(f"{backend}/battles/{battle_id}", timeout=10).json()
    markdown = "\n".join(e.get("markdown_content") or "" for e in record["interact_history"])
    assert "spotify" in markdown and "onerror" in markdown, markdown  # both texts were posted
    page = tmp_path / "battle.html"
    page.write_text(_page(record))
    dom = dump_dom(chromium, page, tmp_path / "profile")
    _assert_inert(dom)
    assert html.escape(ERROR_TEXT, quote=False) in dom  # shown as text
    assert f"<code>{html.escape(one_line(TOOL_NAME), quote=False)}</code>" in dom


@pytest.mark.e2e
def test_hostile_texts_render_as_text_in_report_html(hostile_battle: dict[str, Any], chromium: str, tmp_path: Path,
                                                     world_copy, mini_tasks: tuple[str, str]) -> None:
    settings = Settings(appworld_root=world_copy(splits={"mini": mini_tasks}), runs_dir=tmp_path / "runs")
    out = tmp_path / "run"
    run_eval(EvalRequest(split="mini", choices=BattleChoices(blue="fake", predictor="ground_truth"), out=out, workers=1), settings,
             progress_stream=io.StringIO(), factory=FakeSlots(), battle=FakeBattles())
    task = mini_tasks[0]
    result_path = out / "tasks" / task / "result.json"
    stored = json.loads(result_path.read_text())
    stored.update(reason=hostile_battle["result"].reason or ERROR_TEXT, blue_agent_name=CARD_NAME)
    result_path.write_text(json.dumps(stored))
    calls = [{"timestamp": "2026-01-01T00:00:00Z", "tool_name": TOOL_NAME, "arguments": {}, "success": False,
              "error": ERROR_TEXT, "duration_ms": 1.0, "seq": 0}]
    (out / "tasks" / task / "mcp_calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    assert main(["report", str(out)]) == 0
    dom = dump_dom(chromium, out / "report.html", tmp_path / "profile")
    assert 'data-ready="1"' in dom
    _assert_inert(dom)
    assert html.escape("<img src=x onerror=", quote=False) in dom


@pytest.mark.e2e
def test_the_cli_summary_puts_the_blues_texts_on_one_line(hostile_battle: dict[str, Any]) -> None:
    result: BattleResult = hostile_battle["result"]
    hostile = result.model_copy(update={"reason": "x\n## forged line\x1b[2J", "blue_agent_name": "B\nforged"})
    text = summary(hostile)
    assert "\x1b" not in text and "\nforged" not in text and "\n## forged" not in text
    assert all(line.startswith(("battle ", "  ")) for line in text.splitlines())
