"""The hostile Blue: an agent under test that uses whatever it can reach to win, against real processes.

Each Blue here is a real A2A agent (the shipped Blues' wiring) on loopback that knows the slot's
ports and AppWorld's and the gateway's routes, as anyone reading this repository does. Each attack
must be refused, visible in the result, and leave the verdict what AppWorld says of the honest work
done (here: completing the task with the right answer, or with none):

1. the gateway's control routes on the Blue-facing port (widen the scope, rename or clear the battle,
   read the completion), its /health (battle id, task id, scope), the control listener without its secret;
2. AppWorld's servers directly: account passwords, the admin app, /evaluate, /execute, /close, /initialize;
3. a Blue left over from the previous battle on the slot, calling with its old token into the next battle;
4. an APIs server that stalls (SIGSTOP) while the Blue works: an infrastructure error, never its loss;
5. an OpenAI-compatible endpoint that echoes the API key in its error text (`--blue llm`): the key
   reaches no output.

Round two:
6. a selective dodger that answers a task it cannot solve with a fault of its own (a JSON-RPC error,
   HTTP 500, a dropped connection, a process exit, a failed A2A task): judged and charged, and TGC is
   over every task of the run (an AppWorld server killed under a Blue is still ours: retried, not charged);
7. a Blue flooding `complete_task` as its battle ends: nothing reaches the next battle;
8. calls after `complete_task`: refused; the judged answer is the first; every served call is archived;
9. refused calls (anyone can send them): their log records are small and rate-limited.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil
import pytest
import requests
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from a2a_purples import LONG_QUERY
from faults_support import (MCP_HEADERS, InProcessServer, answers, blue_server, complete_through_gateway, files_text,
                            mcp_call, wait_until)
from green_agent.engine.config import BattleChoices
from green_agent.models.eval_run import EvalResults
from kernel.ports import free_port
from test_batch_e2e import CLI, assert_nothing_left, cli_env, slot_ports
from green_agent.local_battle import run_on_slot
from green_agent.models.result import BattleResult
from kernel.settings import Settings
from green_agent.runtime.slot import WorldSlot
from kernel.slot_credentials import require_credentials
from kernel.world_data import WorldData
from mcp_gateway.request_limits import MAX_REQUEST_LINE_BYTES

pytest_plugins = ["faults_support"]
pytestmark = pytest.mark.e2e
ECHOED_KEY = "sk-echo-" + "9" * 40


def _battle(env: Settings, slot: WorldSlot, task_id: str, blue_url: str, name: str, deadline_s: float = 60) -> BattleResult:
    choices = BattleChoices(blue=name, predictor="ground_truth", deadline_s=deadline_s)
    return run_on_slot(task_id, choices, env, slot.urls, blue_url, env.runs_dir / f"hostile-{name}", f"hostile-{name}")


def _right_answer(env: Settings, task_id: str) -> Any:
    """The honest work, shortened: the task's answer (a stand-in for a Blue that solved it)."""
    return json.loads((WorldData(env.appworld_root).task_dir(task_id) / "ground_truth" / "answer.json").read_text())


def _mcp_url(text: str) -> str:
    return next(line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("MCP endpoint (Streamable HTTP): "))


def _complete(mcp_url: str, answer: Any = None) -> dict:
    arguments = {} if answer is None else {"answer": answer}
    return requests.post(mcp_url, json=mcp_call(1, "supervisor__complete_task", arguments), headers=MCP_HEADERS,
                         timeout=60).json()


def test_control_routes_are_not_on_the_blue_facing_port(shared_env: Settings, shared_slot: WorldSlot,
                                                       shared_task: str) -> None:
    seen: dict[str, Any] = {}
    answer = _right_answer(shared_env, shared_task)

    async def attacker(text: str) -> str:
        parts = urlsplit(_mcp_url(text))
        base = f"{parts.scheme}://{parts.netloc}"
        attempts = {"widen": ("PUT", "/control/battle", {"battle_id": "hijack", "scope": None}),
                    "clear": ("DELETE", "/control/battle", None),
                    "completion": ("GET", "/control/completion?battle_id=x&wait=0", None)}
        seen["statuses"] = {name: requests.request(method, base + path, json=body, timeout=10).status_code
                            for name, (method, path, body) in attempts.items()}
        seen["health"] = requests.get(base + "/health", timeout=10).json()
        seen["done"] = _complete(_mcp_url(text), answer)
        return "done"

    with blue_server("control-plane attacker", attacker) as blue:
        result = _battle(shared_env, shared_slot, shared_task, blue.url, "control")
    credentials = require_credentials(shared_slot.urls.apis_url)
    no_secret = requests.put(f"{credentials.control_url}/control/battle", json={"battle_id": "x"}, timeout=10)
    assert set(seen["statuses"].values()) <= {404, 405}, seen["statuses"]
    assert seen["health"] == {"status": "ok"}  # no battle id, task id or scope
    assert no_secret.status_code == 401
    assert (result.status, result.winner, result.outcome) == ("completed", "blue_agent", "passed"), result.reason
    assert result.trajectory is not None and result.trajectory.total_calls == 1  # its call stayed its battle's
    assert result.trajectory.calls_per_tool == {"supervisor__complete_task": 1}


def test_appworld_servers_refuse_a_blue_that_knows_their_ports(shared_env: Settings, shared_slot: WorldSlot,
                                                               shared_task: str) -> None:
    urls, seen = shared_slot.urls, {}

    async def attacker(text: str) -> str:
        task = {"task_id": shared_task}
        attempts = {
            "passwords": ("GET", f"{urls.apis_url}/supervisor/account_passwords", None),
            "admin": ("GET", f"{urls.apis_url}/admin/users", None),
            "evaluate": ("POST", f"{urls.env_url}/evaluate", {**task, "suppress_errors": True}),
            "execute": ("POST", f"{urls.env_url}/execute", {**task, "code": "apis.supervisor.complete_task()"}),
            "close": ("POST", f"{urls.env_url}/close", task),
            "initialize": ("POST", f"{urls.env_url}/initialize", {**task, "experiment_name": "hijack"}),
        }
        seen.update({name: requests.request(method, url, json=body, timeout=30).status_code
                     for name, (method, url, body) in attempts.items()})
        complete_through_gateway(text)  # then gives up honestly: no answer
        return "done"

    with blue_server("AppWorld attacker", attacker) as blue:
        result = _battle(shared_env, shared_slot, shared_task, blue.url, "appworld")
    assert seen == dict.fromkeys(seen, 404) and len(seen) == 6, seen
    # judged as AppWorld says for the work done (no answer): a loss, not an unscored infra_error
    assert (result.status, result.winner, result.outcome) == ("completed", "green_agent", "failed"), result.reason
    assert result.cleanup is not None and result.cleanup.closed is True  # the Green closed its own world


def test_a_blue_left_over_from_the_previous_battle_touches_nothing(shared_env: Settings, shared_slot: WorldSlot,
                                                                   shared_task: str) -> None:
    old_url: dict[str, str] = {}
    next_started, late_reply = threading.Event(), {}

    async def lingering(text: str) -> str:
        old_url["mcp"] = _mcp_url(text)
        _complete(old_url["mcp"], _right_answer(shared_env, shared_task))  # wins its own battle honestly
        return "done"

    async def idle(text: str) -> str:
        next_started.set()
        return "thinking"

    def linger_into_the_next_battle() -> None:
        next_started.wait(60)
        late_reply["complete"] = _complete(old_url["mcp"])
        late_reply["profile"] = requests.post(old_url["mcp"], json=mcp_call(2, "supervisor__show_profile", {}),
                                              headers=MCP_HEADERS, timeout=30).json()

    with blue_server("lingering Blue", lingering) as first, blue_server("idle Blue", idle) as second:
        won = _battle(shared_env, shared_slot, shared_task, first.url, "linger-first")
        attacker = threading.Thread(target=linger_into_the_next_battle, daemon=True)
        attacker.start()
        result = _battle(shared_env, shared_slot, shared_task, second.url, "linger-next", deadline_s=8)
        attacker.join(timeout=30)
    assert won.winner == "blue_agent", won.reason
    for reply in late_reply.values():
        assert reply["result"]["isError"] and "battle has ended" in reply["result"]["content"][0]["text"]
    assert (result.status, result.outcome) == ("timeout", "timeout"), result.reason  # its complete_task did not count
    assert result.trajectory is not None and result.trajectory.total_calls == 0
    assert result.cleanup is not None and result.cleanup.refused_calls == {}  # not the next battle's refusals
    late = [json.loads(line) for line in shared_env.agentbeats_mcp_log_path.read_text().splitlines()
            if '"battle_id":"hostile-linger-first"' in line and '"refused":"battle_ended"' in line]
    assert len(late) == 2  # charged to the battle whose token they held


def test_a_stalled_apis_server_is_an_infrastructure_error_not_a_loss(shared_env: Settings, shared_slot: WorldSlot,
                                                                     shared_task: str) -> None:
    apis_pid = shared_slot.servers.apis.pid  # type: ignore[union-attr]
    seen: dict[str, Any] = {}
    answer = _right_answer(shared_env, shared_task)

    async def blue(text: str) -> str:
        os.killpg(apis_pid, signal.SIGSTOP)
        try:
            seen["stalled"] = requests.post(_mcp_url(text), json=mcp_call(1, "supervisor__show_profile", {}),
                                            headers=MCP_HEADERS, timeout=60).json()
        finally:
            os.killpg(apis_pid, signal.SIGCONT)
        seen["done"] = _complete(_mcp_url(text), answer)  # the rest of its work succeeds
        return "done"

    try:
        with blue_server("Blue on a stalled server", blue) as server:
            result = _battle(shared_env, shared_slot, shared_task, server.url, "stalled", deadline_s=90)
    finally:
        os.killpg(apis_pid, signal.SIGCONT)
    assert seen["stalled"]["result"]["isError"] and "did not answer" in seen["stalled"]["result"]["content"][0]["text"]
    assert (result.status, result.winner, result.outcome) == ("infra_error", None, "infra_error"), result.reason
    assert "supervisor__show_profile" in result.reason and "timeout" in result.reason
    assert result.trajectory is not None and result.trajectory.upstream_faults == 1


def test_a_call_too_long_for_appworld_is_the_blues_api_error_and_the_battle_is_judged(
        shared_env: Settings, shared_slot: WorldSlot, shared_task: str) -> None:
    """Issue 50 through the MCP door: the request line AppWorld's server reset (the gateway let the exception out:
    the Blue got a JSON-RPC error and no record) is never sent; the Blue gets the limit as an API error."""
    seen: dict[str, Any] = {}

    async def blue(text: str) -> str:
        seen["long"] = requests.post(_mcp_url(text), json=mcp_call(1, "amazon__search_products", {"query": LONG_QUERY}),
                                     headers=MCP_HEADERS, timeout=60).json()
        seen["done"] = _complete(_mcp_url(text))
        return "done"

    with blue_server("Blue with a long call", blue) as server:
        result = _battle(shared_env, shared_slot, shared_task, server.url, "long-call")
    assert "result" in seen["long"], seen["long"]  # a tool result, not a JSON-RPC error
    long = seen["long"]["result"]
    message = long["structuredContent"]["response"]["message"]
    assert not long["isError"] and long["structuredContent"]["response"]["is_error"] is True  # AppWorld's 4xx: data
    assert message.startswith("Request too large") and f"takes at most {MAX_REQUEST_LINE_BYTES}" in message
    assert (result.status, result.winner, result.outcome) == ("completed", "green_agent", "failed"), result.reason
    assert result.trajectory is not None and result.trajectory.upstream_faults == 0
    assert result.trajectory.failed_calls_per_tool == {"amazon__search_products": 1}


def _key_echoing_endpoint(calls: list[str]) -> Starlette:
    """An OpenAI-compatible endpoint that answers every request with a 401 quoting the caller's key."""
    async def refuse(request: Request) -> JSONResponse:
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        calls.append(request.url.path)
        return JSONResponse({"error": {"message": f"Incorrect API key provided: {key}. You can find your API key "
                                                  "at https://platform.openai.com/account/api-keys.",
                                       "type": "invalid_request_error", "code": "invalid_api_key"}}, 401)

    return Starlette(routes=[Route("/{path:path}", refuse, methods=["GET", "POST"])])


def test_an_api_key_echoed_by_the_model_endpoint_reaches_no_output(shared_env: Settings, shared_slot: WorldSlot,
                                                                   shared_task: str, tmp_path: Path) -> None:
    urls, run_dir, calls = shared_slot.urls, tmp_path / "run", []
    with InProcessServer(_key_echoing_endpoint(calls)) as endpoint:
        env = {**os.environ, "OPENAI_API_KEY": ECHOED_KEY, "OPENAI_BASE_URL": endpoint.url + "/v1",
               "OPENAI_AGENTS_DISABLE_TRACING": "1", "APPWORLD_ROOT": str(shared_env.appworld_root),
               "RUNS_DIR": str(tmp_path / "runs"), "AGENTBEATS_MCP_LOG_PATH": str(shared_env.agentbeats_mcp_log_path)}
        argv = [str(Path(sys.executable).parent / "appworld-green"), "--env-file", "/dev/null", "battle",
                "--task-id", shared_task, "--blue", "llm", "--predictor", "ground_truth", "--env-url", urls.env_url,
                "--apis-url", urls.apis_url, "--gateway-url", urls.gateway_url or "", "--out", str(run_dir),
                "--deadline", "60", "--json"]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode in (0, 3), done.stderr[-2000:]
    assert calls, "the LLM Blue never asked its model endpoint"
    result = json.loads(done.stdout)
    assert result["winner"] != "blue_agent", result["reason"]
    texts = {"stdout": done.stdout, "stderr": done.stderr, **files_text(run_dir), **files_text(tmp_path / "runs")}
    blue_logs = [name for name in texts if "blue-llm" in name]
    assert blue_logs, sorted(texts)  # the LLM Blue's own log was written and searched
    assert [where for where, text in texts.items() if ECHOED_KEY in text] == []
    assert any("Incorrect API key provided: [REDACTED]" in text for text in texts.values()), "the echo never arrived"


def test_a_world_changed_behind_the_greens_back_is_reported_as_what_it_is(shared_env: Settings, shared_slot: WorldSlot,
                                                                          shared_task: str) -> None:
    """Not the Blue's doing (it cannot reach the env server): another holder of the slot's secrets closes the world."""
    guard = require_credentials(shared_slot.urls.apis_url).guard_headers()

    async def blue(text: str) -> str:
        closed = requests.post(f"{shared_slot.urls.env_url}/close", json={"task_id": shared_task}, headers=guard,
                               timeout=60)
        assert closed.status_code == 200
        complete_through_gateway(text)
        return "done"

    with blue_server("Blue beside a meddler", blue) as server:
        result = _battle(shared_env, shared_slot, shared_task, server.url, "world-changed")
    assert (result.status, result.winner, result.outcome) == ("infra_error", None, "infra_error"), result.reason
    assert result.error is not None and result.error.type == "WorldChangedError", result.error
    assert "behind the Green's back" in result.error.message


# -- round two: no dodging by errors, no spill into the next battle, no change after completion ------------

DODGER = Path(__file__).resolve().parent / "dodger_blue.py"


@contextmanager
def dodger(mode: str, solved: dict[str, Any], tmp: Path) -> Iterator[str]:
    """The selective dodger (tests/dodger_blue.py) as a process on a free port; always stopped."""
    answers_file = tmp / f"answers-{mode}.json"
    answers_file.write_text(json.dumps(solved))
    port = free_port()
    process = subprocess.Popen([sys.executable, str(DODGER), "--port", str(port), "--mode", mode,
                                "--answers", str(answers_file)], start_new_session=True)
    try:
        wait_until(lambda: answers(f"http://127.0.0.1:{port}/.well-known/agent-card.json"), 20, "dodger up")
        yield f"http://127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


@pytest.mark.parametrize("mode,kind", [("error", "error_reply"), ("http500", "http_error"),
                                       ("drop", "connection_dropped"), ("exit", "connection_dropped"),
                                       ("failed", "task_failed")])
def test_a_blue_that_answers_its_task_with_a_fault_is_judged_and_charged(
        shared_env: Settings, shared_slot: WorldSlot, shared_task: str, tmp_path: Path, mode: str, kind: str) -> None:
    with dodger(mode, {}, tmp_path) as url:
        result = _battle(shared_env, shared_slot, shared_task, url, f"dodge-{mode}")
    assert (result.status, result.winner, result.outcome) == ("blue_error", "green_agent", "blue_error"), result.reason
    assert result.error is None and result.blue_fault is not None and result.blue_fault.kind == kind
    assert result.evaluation is not None and not result.evaluation.success  # the world as it stands
    assert result.timings["wait"] < 20  # seen when the fault arrived, not at the deadline
    assert result.cleanup is not None and result.cleanup.closed is True


def test_a_selective_dodger_is_charged_over_the_whole_task_set(appworld_root: Path, tmp_path: Path,
                                                               mini_tasks: tuple[str, str]) -> None:
    """It solves the question task and answers the other two with errors: TGC 1/3, never 1/1."""
    action, question = mini_tasks
    other = next(t for t in WorldData(appworld_root).split("dev") if t not in mini_tasks)
    answer = json.loads((WorldData(appworld_root).task_dir(question) / "ground_truth" / "answer.json").read_text())
    out, (ports_arg, ports) = tmp_path / "run", slot_ports(1)
    env = cli_env(appworld_root, tmp_path)
    with dodger("error", {question: answer}, tmp_path) as url:
        argv = [CLI, "eval", "--task-ids", ",".join([question, action, other]), "--blue", url, "--predictor",
                "ground_truth", "--workers", "1", "--out", str(out), "--slot-ports", ports_arg, "--deadline", "60"]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = EvalResults.model_validate_json((out / "results.json").read_text())
    agg = results.aggregates
    rows = [(r.task_id, r.outcome, r.reason(), r.duration_s, r.attempts,
             json.loads((out / r.result_path).read_text()).get("completion")) for r in results.rows]
    assert (agg.passed, agg.judged, agg.infra_errors, agg.outcome_counts["blue_error"]) == (1, 3, 0, 2), rows
    assert agg.tgc == pytest.approx(33.33, abs=0.01) and not agg.incomplete
    board = json.loads((out / "agentbeats_results.json").read_text())["results"][0]
    assert board["tgc"] == pytest.approx(33.33, abs=0.01)
    assert re.search(r"TGC 33\.3 .*\(1/3 battles of the task set passed\)", done.stdout), done.stdout
    assert_nothing_left(ports)


def test_an_appworld_server_killed_once_is_retried_and_not_charged(appworld_root: Path, tmp_path: Path,
                                                                   mini_tasks: tuple[str, str]) -> None:
    _, question = mini_tasks
    answer = json.loads((WorldData(appworld_root).task_dir(question) / "ground_truth" / "answer.json").read_text())
    out, (ports_arg, ports) = tmp_path / "run", slot_ports(1)
    apis_port, battles = ports[1], []

    async def blue(text: str) -> str:
        battles.append(text)
        if len(battles) == 1:  # first attempt: our APIs server dies under the Blue's feet
            for proc in psutil.process_iter(["pid"]):
                with suppress(psutil.Error):
                    if any(c.laddr.port == apis_port and c.status == "LISTEN" for c in proc.net_connections()):
                        proc.kill()
            await asyncio.to_thread(requests.post, _mcp_url(text), json=mcp_call(1, "supervisor__show_profile", {}),
                                    headers=MCP_HEADERS, timeout=60)
            return "the world broke"
        await asyncio.to_thread(_complete, _mcp_url(text), answer)
        return "done"

    with blue_server("Blue on a dying server", blue) as server:
        argv = [CLI, "eval", "--task-ids", question, "--blue", server.url, "--predictor", "ground_truth",
                "--workers", "1", "--out", str(out), "--slot-ports", ports_arg, "--deadline", "60"]
        done = subprocess.run(argv, env=cli_env(appworld_root, tmp_path), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = EvalResults.model_validate_json((out / "results.json").read_text())
    assert len(battles) == 2 and results.rows[0].attempts == 2  # retried on a restarted slot
    assert (results.rows[0].outcome, results.aggregates.tgc, results.aggregates.infra_errors) == ("passed", 100.0, 0)
    assert_nothing_left(ports)


def test_a_blue_flooding_complete_task_as_its_battle_ends_cannot_touch_the_next_battle(
        shared_env: Settings, shared_slot: WorldSlot, shared_task: str) -> None:
    answer, stop, spill = _right_answer(shared_env, shared_task), threading.Event(), {"sent": 0}

    def flood(mcp_url: str) -> None:
        def one() -> None:
            while not stop.is_set():
                with suppress(requests.RequestException):
                    requests.post(mcp_url, json=mcp_call(1, "supervisor__complete_task", {"answer": "spill"}),
                                  headers=MCP_HEADERS, timeout=30)
                    spill["sent"] += 1

        workers = [threading.Thread(target=one, daemon=True) for _ in range(12)]
        for worker in workers:
            worker.start()

    async def spiller(text: str) -> str:
        flood(_mcp_url(text))  # keeps flooding after its own battle ended, into the next one's time
        return "done"

    async def honest(text: str) -> str:
        await asyncio.sleep(1.5)  # the spill has every chance to arrive first
        await asyncio.to_thread(_complete, _mcp_url(text), answer)
        return "done"

    try:
        with blue_server("spilling Blue", spiller) as first, blue_server("honest Blue", honest) as second:
            spilled = _battle(shared_env, shared_slot, shared_task, first.url, "spill-first")
            result = _battle(shared_env, shared_slot, shared_task, second.url, "spill-next")
    finally:
        stop.set()
    assert spill["sent"] > 20 and spilled.outcome != "passed"  # it flooded; 'spill' is not its task's answer
    assert spilled.cleanup is not None and spilled.cleanup.refused_calls.get("episode_over", 0) > 0
    assert (result.status, result.winner, result.outcome) == ("completed", "blue_agent", "passed"), result.reason
    assert result.trajectory is not None and result.trajectory.calls_per_tool == {"supervisor__complete_task": 1}


def test_calls_after_complete_task_are_refused_and_the_judged_answer_is_the_first(
        shared_env: Settings, shared_slot: WorldSlot, shared_task: str) -> None:
    answer, seen = _right_answer(shared_env, shared_task), {}

    async def blue(text: str) -> str:
        url = _mcp_url(text)

        def after(i: int, name: str, arguments: dict) -> dict:
            return requests.post(url, json=mcp_call(i, name, arguments), headers=MCP_HEADERS, timeout=30).json()

        with ThreadPoolExecutor(8) as pool:  # the right answer, and at once a burst of calls racing it
            first = pool.submit(_complete, url, answer)
            burst = [pool.submit(after, i, "supervisor__show_profile", {}) for i in range(2, 9)]
            seen["first"], seen["burst"] = first.result(), [f.result() for f in burst]
        seen["late"] = [after(20, "supervisor__complete_task", {"answer": "999999"}),
                        after(21, "supervisor__show_profile", {})]
        return "done"

    with blue_server("Blue that changes its answer", blue) as server:
        result = _battle(shared_env, shared_slot, shared_task, server.url, "late-answer")
    assert not seen["first"]["result"]["isError"]
    for reply in seen["late"]:
        assert reply["result"]["isError"] and "episode is over" in reply["result"]["content"][0]["text"]
    assert (result.status, result.winner, result.outcome) == ("completed", "blue_agent", "passed"), result.reason
    answered = 1 + sum(not r["result"]["isError"] for r in seen["burst"])  # served, so in the world's history
    assert result.cleanup is not None and result.cleanup.refused_calls.get("episode_over", 0) >= 2
    refused = result.cleanup.refused_calls["episode_over"]  # its own refused calls carry its battle id, so count
    assert answered + refused == 1 + 7 + 2  # (those the refusal log's rate limit left out of the log do not)
    assert result.trajectory is not None and answered <= result.trajectory.total_calls <= answered + refused


def test_refused_calls_cannot_inflate_the_call_log(shared_env: Settings, shared_slot: WorldSlot) -> None:
    log = shared_env.agentbeats_mcp_log_path
    before = log.stat().st_size if log.exists() else 0
    big = {"note": "x" * 100_000}
    url = (shared_slot.urls.gateway_url or "").rstrip("/") + "/mcp"
    with requests.Session() as session:
        replies = [session.post(url, json=mcp_call(i, "supervisor__show_profile", big), headers=MCP_HEADERS,
                                timeout=30) for i in range(100)]
    assert all(r.status_code == 200 and r.json()["result"]["isError"] for r in replies)
    grown = (log.stat().st_size if log.exists() else 0) - before
    assert grown < 100_000, f"100 refused 100 kB calls wrote {grown} bytes of call log"
    last = json.loads(log.read_text().splitlines()[-1])
    assert last["refused"] == "no_battle" and last["arguments"] == {} and last["arguments_bytes"] > 100_000
