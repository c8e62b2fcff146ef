"""End to end on the AgentBeats platform: the wheel's backend + MCP server (isolated database), the
Green and the offline Blues launched from a scenario file through the SDK exactly as `run_scenario`
does (ScenarioManager in tmux, fresh TMUX_TMPDIR), real AppWorld servers and the MCP gateway.

Five battles, all on loopback and free ports:
1. the Green's model replaced by the scripted OpenAI stand-in playing the card's plan tool by tool,
   the reference Blue: `finished`, winner `blue_agent`, the record holds the result detail and markdown;
2. same Green, the no-op Blue (started over REST as the web UI does): winner `green_agent`;
3. the offline scenario: `green_mode = "deterministic"` (no model request at all), the reference
   Blue: winner `blue_agent`;
4. the LLM scenario: the LLM Green and the LLM Blue (blue_agent card and tools, the gateway over
   SSE), both models scripted; the Blue reads an API doc (a native tool: its SDK entry is not
   posted), looks an API up, calls one outside its scope and ends the task without doing it:
   winner `green_agent`.
5. the offline scenario in code mode (`interaction = "code"`): the reference Blue sends the solution as one
   execution; the Blue's entry is that execution, with its code, its output and its calls folded in.
For battles 1, 3, 4 and 5 the stored battle is what a person follows on the page (`assert_page`):
5 runs of consecutive `reported_by` (system, the Green's steps, the Blue's calls, the Green's wait,
the result alone under its verdict's name: the web UI opens every group collapsed, and the last
group's header chip, `Blue won` / `Blue lost` / `Draw`, is what says who won), the Blue's calls
reported under its name, a compact result whose message's first line ends in a stop (the UI's
60-character preview joins lines), no absolute local path.
Afterwards the tmux server is killed and nothing the test started is left listening.
`AGENTBEATS_E2E_RECORD=FILE` keeps battle 4's stored record (the evidence of the page) in FILE.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from green_agent.agentbeats import harness
from green_agent.runtime.appworld_servers import AppWorldServers, AppWorldServerSpec
from green_agent.runtime.processes import ManagedProcess
from kernel.ports import free_port, port_is_free
from kernel.settings import REPO_ROOT, SCENARIO_DIR
from fake_openai import FakeOpenAI
from kernel.world_data import WorldData
from markdown_shape import assert_reads_without_css

pytestmark = pytest.mark.e2e
VENV_BIN = Path(sys.executable).parent
BATTLE_TIMEOUT_S = 150.0
GREEN_NEEDLE = "You are the AppWorld Green Agent"
BLUE_NEEDLE = "You are AppWorld LLM Blue"
BLUE_SCRIPT = {"steps": [
    {"tool": "read_api_doc", "args": {"app_name": "supervisor", "api_name": "complete_task"}},  # native: no SDK entry
    {"tool": "api_docs__show_api_descriptions", "args": {"app_name": "supervisor"}},
    {"tool": "call_api", "args": {"app_name": "supervisor", "api_name": "show_addresses", "arguments": {}}},
    {"tool": "supervisor__complete_task", "args": {}}], "final": "Done."}
MAX_RUNS = 5
VERDICT_CHIP = {"blue_agent": "Blue won", "green_agent": "Blue lost", "draw": "Draw"}
"""The UI maps any `reported_by` containing "green" to the Green's chip, so none of these may contain it."""
DETAIL_KEYS = {"winner", "outcome", "tests_passed", "blue_answer", "duration_s", "evidence"}
LOCAL_PATH = re.compile(r"(?<![\w.:/~\-<>])/(?:tmp|home|work|root|usr|var|opt|srv|mnt)/")
CARD_PLAN = ["setup_appworld_environment", "predict_required_apis", "build_task_message", "dispatch_task_to_blue",
             "wait_for_task_completion", "save_appworld_state", "get_complete_task_metrics", "close_appworld_environment",
             "report_battle_result"]


def card_copy(source: Path, target: Path, port: int) -> Path:
    """The shipped card with its url pointing at the test's agent port."""
    text = re.sub(r'(?m)^url = ".*"$', f'url = "http://127.0.0.1:{port}/"', source.read_text())
    target.write_text(text)
    return target


def scenario_toml(tmp: Path, ports: dict[str, int], urls: dict[str, str], backend_mcp: str, green_mode: str) -> str:
    tools = SCENARIO_DIR / "green_agent" / "orchestration_tools.py"
    offline = SCENARIO_DIR / "offline"
    return f'''[scenario]
name = "appworld_e2e"

[appworld]
task = "1"
split = "dev"
predictor = "ground_truth"
deadline_s = 90
reply_grace_s = 10
green_mode = "{green_mode}"
interaction = "tools"
env_url = "{urls['env']}"
apis_url = "{urls['apis']}"
gateway_url = "{urls['gateway']}"
call_log_path = "{tmp / 'calls.jsonl'}"
runs_dir = "{tmp / 'runs'}"

[[agents]]
name = "AppWorld Green"
card = "green_card.toml"
launcher_host = "127.0.0.1"
launcher_port = {ports['green_launcher']}
agent_host = "127.0.0.1"
agent_port = {ports['green']}
model_type = "openai"
model_name = "fake-model"
tools = ["{tools}"]
mcp_servers = ["{backend_mcp}"]
is_green = true
battle_timeout = 600

  [[agents.participant_requirements]]
  role = "blue_agent"
  name = "blue_agent"
  required = true
  participant_agent = "Reference Blue"

[[agents]]
name = "Reference Blue"
card = "reference_card.toml"
launcher_host = "127.0.0.1"
launcher_port = {ports['ref_launcher']}
agent_host = "127.0.0.1"
agent_port = {ports['ref']}
tools = ["{offline / 'reference_blue_tools.py'}"]

[[agents]]
name = "AppWorld LLM Blue"
card = "llm_blue_card.toml"
launcher_host = "127.0.0.1"
launcher_port = {ports['llm_launcher']}
agent_host = "127.0.0.1"
agent_port = {ports['llm']}
model_type = "openai"
model_name = "fake-model"
tools = ["{SCENARIO_DIR / 'blue_agent' / 'tools.py'}"]
mcp_servers = ["{urls['gateway']}/sse"]

[[agents]]
name = "No-op Blue"
card = "noop_card.toml"
launcher_host = "127.0.0.1"
launcher_port = {ports['noop_launcher']}
agent_host = "127.0.0.1"
agent_port = {ports['noop']}
tools = ["{offline / 'noop_blue_tools.py'}"]

[launch]
mode = "tmux"
tmux_session_name = "appworld_e2e"
'''


@pytest.fixture(scope="module")
def platform(settings: Any, appworld_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Backend, gateway, stand-in model and the scenario's agents start while this module's own AppWorld
    servers start (own servers: each battle initializes a task no other test touched on them, since
    AppWorld 0.1.3's APIs server fails a second /initialize of one task from another worker thread)."""
    tmp = tmp_path_factory.mktemp("agentbeats-e2e")
    tmux_dir = Path(tempfile.mkdtemp(prefix="abtmux"))  # short: tmux socket paths are limited
    ports = {name: free_port() for name in ("env", "apis", "backend", "backend_mcp", "gateway", "green_launcher",
                                            "green", "ref_launcher", "ref", "noop_launcher", "noop", "llm_launcher", "llm")}
    world = AppWorldServers(AppWorldServerSpec(appworld_root=appworld_root, appworld_python=settings.appworld_python,
                                               env_port=ports["env"], apis_port=ports["apis"], log_dir=tmp / "appworld"))
    urls = {"env": world.spec.env_url, "apis": world.spec.apis_url, "gateway": f"http://127.0.0.1:{ports['gateway']}"}
    backend_url = f"http://127.0.0.1:{ports['backend']}"
    script = {"steps": [{"tool": name, "args": {"battle_id": "{battle_id}"}} for name in CARD_PLAN],
              "final": "Battle {battle_id} judged."}
    fake = FakeOpenAI(scripts={GREEN_NEEDLE: script, BLUE_NEEDLE: BLUE_SCRIPT}, log_path=tmp / "fake_openai.jsonl").start()
    env = {**os.environ, "APPWORLD_ROOT": str(appworld_root), "OPENAI_API_KEY": "sk-e2e-dummy",
           "OPENAI_BASE_URL": fake.base_url, "OPENAI_AGENTS_DISABLE_TRACING": "1", "OPENROUTER_API_KEY": "dummy",
           "TMUX_TMPDIR": str(tmux_dir), "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONUNBUFFERED": "1", "RUNS_DIR": str(tmp / "runs-cli")}
    gateway = ManagedProcess("gateway", [
        str(VENV_BIN / "appworld-green"), "mcp", "--remote-apis-url", urls["apis"], "--port", str(ports["gateway"]),
        "--log-path", str(tmp / "calls.jsonl"), "--appworld-root", str(appworld_root)], tmp / "gateway.log", env=env)
    backend = ManagedProcess("backend", [sys.executable, "-m", "green_agent.agentbeats.backend", "--port",
                                         str(ports["backend"]), "--mcp-port", str(ports["backend_mcp"]),
                                         "--data-dir", str(tmp / "backend-data")], tmp / "backend.log", env=env, cwd=tmp)
    scenario = tmp / "scenario"
    scenario.mkdir()
    card_copy(SCENARIO_DIR / "green_agent" / "green_agent_card.toml", scenario / "green_card.toml", ports["green"])
    card_copy(SCENARIO_DIR / "offline" / "reference_blue_card.toml", scenario / "reference_card.toml", ports["ref"])
    card_copy(SCENARIO_DIR / "offline" / "noop_blue_card.toml", scenario / "noop_card.toml", ports["noop"])
    card_copy(SCENARIO_DIR / "blue_agent" / "blue_agent_card.toml", scenario / "llm_blue_card.toml", ports["llm"])
    mcp_url = f"http://127.0.0.1:{ports['backend_mcp']}/sse"
    (scenario / "scenario.toml").write_text(scenario_toml(tmp, ports, urls, mcp_url, "llm"))
    launcher: subprocess.Popen | None = None
    try:
        gateway.start()
        backend.start()
        launcher = subprocess.Popen([str(VENV_BIN / "appworld-green"), "agentbeats", "run-scenario", str(scenario),
                                     "--no-battle"], env=env, stdout=open(tmp / "launch.log", "w"), stderr=subprocess.STDOUT)
        world.start()
        gateway.wait_ready(urls["gateway"] + "/health", timeout_s=60)
        backend.wait_ready(backend_url + "/health", timeout_s=90)
        assert launcher.wait(timeout=240) == 0, (tmp / "launch.log").read_text()[-3000:]
        # What run_scenario does after load_scenario: register the agents (battle_timeout forwarded, D3), create the battle.
        battle_id = harness.start_battle(harness.load_manager(scenario), backend_url)
        yield {"backend_url": backend_url, "battle_id": battle_id, "fake": fake, "tmp": tmp, "scenario": scenario,
               "world": WorldData(appworld_root)}
    finally:
        if launcher is not None and launcher.poll() is None:
            launcher.kill()
        subprocess.run(["tmux", "kill-server"], env=env, capture_output=True, check=False)
        agent_ports = [ports[k] for k in ("green_launcher", "green", "ref_launcher", "ref", "noop_launcher", "noop",
                                          "llm_launcher", "llm")]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not all(port_is_free(p) for p in agent_ports):
            time.sleep(0.2)
        for process in (backend, gateway, world):
            process.stop()
        fake.stop()
        shutil.rmtree(tmux_dir, ignore_errors=True)
        listening = [p for p in ports.values() if not port_is_free(p)]
        assert not listening, f"still listening after teardown: {listening}"


def runs_of_reporters(record: dict[str, Any]) -> list[tuple[str, int]]:
    """Consecutive entries with the same `reported_by`, as the page groups them: (reported_by, count)."""
    runs: list[tuple[str, int]] = []
    for entry in record.get("interact_history", []):
        if runs and runs[-1][0] == entry.get("reported_by"):
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((entry.get("reported_by"), 1))
    return runs


LOCAL_URL = re.compile(r"(?:https?|wss?)://(?:127\.|localhost|0\.0\.0\.0|\[::1\])", re.IGNORECASE)


def assert_nothing_private_posted(record: dict[str, Any], world: WorldData) -> None:
    """The page is public: no URL of this machine, no personal data of the task's supervisor, and (the scenario's
    predictor is ground_truth) no gold API of the test set, in any entry the Green posted or the record holds."""
    task = world.task(final_entry(record)["message"].splitlines()[1].split(":")[0].removeprefix("Task "))
    posted = json.dumps([{k: v for k, v in e.items() if k != "timestamp"} for e in record["interact_history"]])
    assert not LOCAL_URL.search(posted), LOCAL_URL.search(posted)
    supervisor = task.supervisor
    personal = [supervisor.get(key) for key in ("first_name", "last_name", "email", "phone_number")]
    assert all(value and value not in posted for value in personal), [v for v in personal if v and v in posted]
    scope = next(e for e in green_events(record) if e["message"].startswith("Step 3:"))["detail"]
    assert scope["predictor"] == "ground_truth" and scope["api_count"] >= len(task.gold_apis) > 0, scope
    by_green = json.dumps([e for e in record["interact_history"] if e.get("reported_by") in ("green_agent", *VERDICT_CHIP.values())])
    gold = [api for api in task.gold_apis if api != "supervisor.complete_task"]  # in every scope; the Blue's calls are its own
    shown = [api for api in gold if api in by_green or api.replace(".", "__") in by_green]
    assert gold and not shown, shown


def assert_page(record: dict[str, Any], blue: str, tmp: Path, world: WorldData, blue_entry: str = "tool call") -> None:
    """What a person follows on the battle page: one group per actor, the Blue visible (its calls, or in code mode
    its executions: `blue_entry`), a compact result."""
    runs = runs_of_reporters(record)
    assert len(runs) <= MAX_RUNS, runs
    history = record["interact_history"]
    verdict = VERDICT_CHIP[record["result"]["winner"]]
    assert [who for who, _ in runs] == ["system", "green_agent", blue, "green_agent", verdict], runs
    assert runs[-1] == (verdict, 1) and "green" not in verdict.lower()
    assert any(e["reported_by"] == blue and blue_entry in e["message"] for e in history)
    result = [e for e in history if e.get("is_result")]
    assert len(result) == 1 and result[0] is history[-1]
    detail, message, markdown = result[0]["detail"], result[0]["message"], result[0]["markdown_content"]
    assert len(detail) <= 6 and set(detail) <= DETAIL_KEYS, detail
    headline = message.splitlines()[0]
    assert headline.endswith(".") and headline.startswith(("Blue wins: ", "Green wins: ")) and markdown.startswith(f"**{headline.split(':')[0]}**")
    assert any(line.startswith("Task ") for line in message.splitlines()), message
    assert_reads_without_css(markdown)
    stored = json.dumps(record)
    for local in (str(tmp), str(REPO_ROOT), str(Path.home()), tempfile.gettempdir() + "/"):
        assert local not in stored, f"{local} in the stored battle"
    assert not LOCAL_PATH.search(stored), LOCAL_PATH.search(stored)
    assert "toolcall hooks" not in stored
    assert_nothing_private_posted(record, world)
    assert not re.search(r"/b/(?!\[REDACTED\])[A-Za-z0-9_-]{8,}/", stored)  # the Blue's battle token stays private


def print_history(record: dict[str, Any]) -> None:
    for entry in record["interact_history"]:
        print(f"{entry['reported_by']!r:32} {entry['message']}")


def final_entry(record: dict[str, Any]) -> dict[str, Any]:
    return next(e for e in record["interact_history"] if e.get("is_result"))


def green_events(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in record.get("interact_history", []) if e.get("reported_by") == "green_agent"]


def start(platform: dict[str, Any], blue_alias: str, task: str, green_mode: str = "llm",
          interaction: str = "tools") -> str:
    """Point the Green at `task` (it rereads scenario.toml after each launcher reset) and start a battle over REST."""
    path = platform["scenario"] / "scenario.toml"
    text = re.sub(r'(?m)^task = ".*"$', f'task = "{task}"', path.read_text())
    text = re.sub(r'(?m)^interaction = ".*"$', f'interaction = "{interaction}"', text)
    path.write_text(re.sub(r'(?m)^green_mode = ".*"$', f'green_mode = "{green_mode}"', text))
    agents = harness.agents_by_alias(platform["backend_url"])
    assert agents["AppWorld Green"]["register_info"]["battle_timeout"] == 600  # D3 fix: reached the backend
    return harness.create_battle(platform["backend_url"], agents["AppWorld Green"]["agent_id"],
                                 [{"name": "blue_agent", "agent_id": agents[blue_alias]["agent_id"], "role": "blue_agent"}])


def model_requests(platform: dict[str, Any], battle_id: str) -> list[dict[str, Any]]:
    """Requests the stand-in got for one battle (its battle_start is in every request's input)."""
    return [r for r in platform["fake"].requests if battle_id in json.dumps(r["body"].get("input", ""))]


def test_llm_green_plays_the_card_and_reference_blue_wins(platform: dict[str, Any]) -> None:
    record = harness.wait_battle(platform["backend_url"], platform["battle_id"], BATTLE_TIMEOUT_S)
    assert record["state"] == "finished", record.get("error")
    assert record["result"]["winner"] == "blue_agent", record["result"]
    detail = record["result"]["detail"]
    task_id = platform["world"].split("dev")[0]
    assert detail["outcome"] == "passed" and detail["tests_passed"].split("/")[0] == detail["tests_passed"].split("/")[1]
    assert_page(record, "Reference Blue", platform["tmp"], platform["world"])
    final = [e for e in record["interact_history"] if e.get("is_result")]
    lines = final[0]["message"].splitlines()
    assert lines[0] == "Blue wins: every requirement of the task is met." and lines[1].startswith(f"Task {task_id}: ")
    assert "• **Tests:** " in final[0]["markdown_content"] and final[0]["markdown_content"].count("tests passed") == 1
    steps = [e["message"].split(":")[0] for e in green_events(record) if e["message"].startswith("Step ")]
    assert steps == [f"Step {k}" for k in range(1, 7)], steps  # steps 7-11: summarized in the result, same numbers
    scope = next(e for e in green_events(record) if e["message"].startswith("Step 3:"))["detail"]
    assert scope["apis"].startswith("not shown: ") and scope["api_count"] >= 2, scope  # ground_truth: the gold list
    called = [e["message"] for e in record["interact_history"] if e["message"].startswith("Calling tool ")]
    assert called == [f"Calling tool {name}" for name in CARD_PLAN], called  # the SDK logs each call before it runs
    assert (platform["tmp"] / "runs" / platform["battle_id"] / "result.json").is_file()
    assert len(model_requests(platform, platform["battle_id"])) >= len(CARD_PLAN)  # one model turn per tool


def test_noop_blue_loses(platform: dict[str, Any]) -> None:
    battle_id = start(platform, "No-op Blue", task="2")
    record = harness.wait_battle(platform["backend_url"], battle_id, BATTLE_TIMEOUT_S)
    assert record["state"] == "finished", record.get("error")
    assert record["result"]["winner"] == "green_agent", record["result"]
    detail = record["result"]["detail"]
    assert detail["outcome"] in ("failed", "partial", "collateral_damage")
    message = final_entry(record)["message"]
    assert message.startswith("Green wins: ") and "Failed: " in message, message
    failed = [line for line in message.splitlines() if line.startswith("Failed: ")]
    assert all(line.endswith(("(the change the task asked for)", "(something the task should not have touched)",
                              "(the answer the task asked for)", "(a check of the task)")) for line in failed), failed
    assert_page(record, "No-op Blue", platform["tmp"], platform["world"])


def test_deterministic_green_makes_no_model_call(platform: dict[str, Any]) -> None:
    battle_id = start(platform, "Reference Blue", task="3", green_mode="deterministic")
    record = harness.wait_battle(platform["backend_url"], battle_id, BATTLE_TIMEOUT_S)
    assert record["state"] == "finished", record.get("error")
    assert record["result"]["winner"] == "blue_agent" and record["result"]["detail"]["outcome"] == "passed", record["result"]
    assert model_requests(platform, battle_id) == []
    assert any("deterministic mode" in e["message"] for e in green_events(record))
    assert not [e for e in record["interact_history"] if e["message"].startswith("Calling tool ")]
    assert_page(record, "Reference Blue", platform["tmp"], platform["world"])
    assert requests.get(f"{platform['backend_url']}/battles", timeout=10).status_code == 200


def test_llm_scenario_llm_blue_is_followed_call_by_call_and_loses(platform: dict[str, Any]) -> None:
    battle_id = start(platform, "AppWorld LLM Blue", task="4")
    record = harness.wait_battle(platform["backend_url"], battle_id, BATTLE_TIMEOUT_S)
    print_history(record)
    keep = os.environ.get("AGENTBEATS_E2E_RECORD")  # where to keep the stored battle as evidence (optional)
    if keep:
        Path(keep).write_text(json.dumps(record, indent=2))
    assert record["state"] == "finished", record.get("error")
    assert record["result"]["winner"] == "green_agent", record["result"]
    detail = record["result"]["detail"]
    assert detail["outcome"] != "passed", detail
    markdown = final_entry(record)["markdown_content"]
    assert re.search(r"• \*\*Blue's MCP calls:\*\* 3 \(\d+ failed, 1 out of scope\)", markdown), markdown
    blue = [e for e in record["interact_history"] if e["reported_by"] == "AppWorld LLM Blue"]
    tools = "".join(e.get("markdown_content", "") for e in blue)
    assert all(t in tools for t in ("`api_docs__show_api_descriptions` · in scope", "`supervisor__show_addresses` · out of scope",
                                    "`supervisor__complete_task` · in scope")), tools
    assert_page(record, "AppWorld LLM Blue", platform["tmp"], platform["world"])


def test_code_mode_blue_entries_are_its_executions_with_their_code(platform: dict[str, Any]) -> None:
    """interaction = "code": the reference Blue sends the task's solution as one execution; its entry holds the
    code (in a fence), the output it saw and the solution's API calls folded in (no separate call batches)."""
    battle_id = start(platform, "Reference Blue", task="5", green_mode="deterministic", interaction="code")
    record = harness.wait_battle(platform["backend_url"], battle_id, BATTLE_TIMEOUT_S)
    print_history(record)
    assert record["state"] == "finished", record.get("error")
    assert record["result"]["winner"] == "blue_agent", record["result"]
    blue = [e for e in record["interact_history"] if e["reported_by"] == "Reference Blue"]
    assert len(blue) == 1 and re.fullmatch(r"execution #1: \d+ API calls?, ok \(\d+\.\d s\)", blue[0]["message"]), blue
    detail, markdown = blue[0]["detail"], blue[0]["markdown_content"]
    print(markdown)
    assert detail["api_calls"] >= 2 and detail["calls_ok"] == detail["api_calls"] and detail["ok"] is True, detail
    task_id = platform["world"].split("dev")[4]
    first = next(line for line in platform["world"].solution_source(task_id).splitlines() if line.strip())
    assert first.strip() in markdown and "**Output**" in markdown and "Execution successful." in markdown, markdown
    assert "`supervisor__complete_task` · in scope · ok" in markdown, markdown
    assert_page(record, "Reference Blue", platform["tmp"], platform["world"], blue_entry="execution #")
    run_dir = platform["tmp"] / "runs" / battle_id  # the whole code and output: in the battle's trace
    # the Green posts its result to the backend (the "finished" read above) before it writes the trace page
    page_by = time.monotonic() + 30
    while not (run_dir / "trace.html").is_file() and time.monotonic() < page_by:
        time.sleep(0.1)
    executions = [json.loads(line) for line in (run_dir / "trace.jsonl").read_text().splitlines()
                  if json.loads(line)["kind"] == "execution"]
    assert len(executions) == 1 and first.strip() in executions[0]["text"] and (run_dir / "trace.html").is_file()
