"""A hostile purple against the in-band bridge, with real processes: `appworld-green serve`, the bridge, real
AppWorld servers and gateway, and a purple that attacks the bridge on the tasks it would lose (issue 31).

What must hold: everything a purple's bytes cause (a reply's size, depth or JSON-RPC shape, an argument too large,
a card too large) is the purple's own fault, judged on the world as it stands and never retried; its card never
chooses where the Green connects; credentials in its URL reach no run file; a purple that completes through
`call_api` ends its conversation at once; retries and `incomplete` are reported as results.json reports them; a
`traceparent` it sends back changes none of the battle's trace ids (issue 59).
"""

from __future__ import annotations

import base64
import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import psutil
import pytest

from a2a_purples import FORGED_TRACEPARENT, HostilePurple
from a2a_support import CLI, Server, assess, env, first, green, purples, result_of  # noqa: F401 - fixtures
from green_agent.trace.otel.otlp_json import spans_of
from kernel.trace_context import parse_traceparent
from kernel.world_data import WorldData
from mcp_gateway.request_limits import MAX_REQUEST_LINE_BYTES

pytestmark = pytest.mark.e2e

ATTACK_FAULTS = {"deep_text": "max_steps", "deep_data": "malformed_reply", "big_arg": "malformed_reply",
                 "rpc_list": "malformed_reply", "rpc_part_kind": "malformed_reply", "rpc_state": "malformed_reply",
                 "rpc_bare": "malformed_reply", "rpc_code": "malformed_reply", "huge_reply": "malformed_reply"}
"""Each attack and the fault it is charged as (a deep JSON in text is not a tool call: corrected until max_steps)."""
BRIDGE_RSS_LIMIT = 200 * 1024 * 1024


class PeakRss:
    """Samples the peak resident memory (VmHWM) of every bridge process under the Green while it runs."""

    def __init__(self, green_pid: int) -> None:
        self.green_pid, self.peak, self.seen = green_pid, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "PeakRss":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            try:
                children = psutil.Process(self.green_pid).children(recursive=True)
            except psutil.NoSuchProcess:
                return
            for child in children:
                try:
                    if "green_agent.a2a.bridge.server" not in " ".join(child.cmdline()):
                        continue
                    self.seen += 1
                    status = Path(f"/proc/{child.pid}/status").read_text()
                except (psutil.NoSuchProcess, psutil.AccessDenied, OSError):
                    continue
                peak_kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM"))
                self.peak = max(self.peak, peak_kb * 1024)


def attempts_of(data: dict[str, Any]) -> dict[str, list[str]]:
    """task id -> the status of each attempt, from the run's events.jsonl."""
    found: dict[str, list[str]] = {}
    for line in (Path(data["run_dir"]) / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "finish":
            found.setdefault(event["task_id"], []).append(event["status"])
    return found


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def files_containing(folder: Path, needle: str) -> list[str]:
    return [str(p.relative_to(folder)) for p in folder.rglob("*")
            if p.is_file() and needle.encode() in p.read_bytes()]


def test_a_purple_that_attacks_the_bridge_on_the_tasks_it_would_lose_is_charged_never_retried(
        green: Server, appworld_root: Path) -> None:
    modes = [*ATTACK_FAULTS, "call_api_complete", "solve"]
    tasks = first(appworld_root, len(modes))
    with HostilePurple(dict(zip(tasks, modes)), world=WorldData(appworld_root)) as purple, PeakRss(green.pid) as rss:
        outcome = assess(green.url, {"participants": {"agent": purple.url}, "config": {
            "task_ids": tasks, "workers": 2, "max_steps": 40, "turn_timeout_s": 30, "predictor": "ground_truth"}})
    assert outcome.state == "completed", outcome.statuses
    data = outcome.data
    rows = {row["task_id"]: row for row in data["rows"]}
    by_mode = {mode: rows[task] for task, mode in zip(tasks, modes)}
    assert {m: (r["outcome"], r["purple_fault"]) for m, r in by_mode.items() if m in ATTACK_FAULTS} == {
        m: ("blue_error", fault) for m, fault in ATTACK_FAULTS.items()}, [(r["task_id"], r["reason"]) for r in rows.values()]
    assert by_mode["solve"]["outcome"] == "passed" and by_mode["call_api_complete"]["outcome"] == "failed"
    assert data["infra_errors"] == 0 and not data["incomplete"] and data["tgc"] == round(100 / len(tasks), 2)
    assert all(statuses == [statuses[0]] for statuses in attempts_of(data).values()), attempts_of(data)  # no retry
    assert all(row["attempts"] == 1 and row["earlier_attempts"] == [] for row in data["rows"])
    completer = result_of(data, tasks[modes.index("call_api_complete")])
    assert completer.completion.bridge_report.ended_by == "complete_task"
    assert completer.completion.bridge_report.steps == 1  # the conversation ended at once
    assert max(purple.context_posts.values()) <= 40 and sorted(purple.context_posts.values())[0] == 1
    assert rss.seen and rss.peak < BRIDGE_RSS_LIMIT, f"bridge peak RSS {rss.peak / 2**20:.0f} MiB"
    assert folder_bytes(Path(data["run_dir"])) < 5 * 2**20  # nothing of the 100 MB or 5 MB replies was kept


def test_a_call_too_long_for_appworld_is_the_purples_api_error_never_a_retry(green: Server,
                                                                             appworld_root: Path) -> None:
    """Issue 50: the long call once made AppWorld's server reset, which the gateway took for its own fault, and the
    battle was retried (a free re-roll). Now it is never sent: the purple gets the limit as an API error, and the
    battle is judged on its first attempt."""
    task = first(appworld_root, 1)[0]
    with HostilePurple({task: "long_query"}) as purple:
        outcome = assess(green.url, {"participants": {"agent": purple.url}, "config": {
            "task_ids": [task], "max_steps": 5, "turn_timeout_s": 30, "predictor": "ground_truth"}})
    assert outcome.state == "completed", outcome.statuses
    row = outcome.data["rows"][0]
    assert (row["outcome"], row["attempts"], outcome.data["infra_errors"]) == ("failed", 1, 0), row
    assert attempts_of(outcome.data) == {task: ["completed"]}
    (answer,) = [text for texts in purple.answers.values() for text in texts]
    assert answer.startswith("Tool 'amazon__search_products' result:") and "Request too large" in answer
    assert f"takes at most {MAX_REQUEST_LINE_BYTES}" in answer
    result = result_of(outcome.data, task)
    assert result.trajectory.upstream_faults == 0 and result.trajectory.calls_per_tool["amazon__search_products"] == 1


def test_a_100_mb_card_is_refused_unread_and_charged_to_the_purple(green: Server, appworld_root: Path) -> None:
    task = first(appworld_root, 1)[0]
    with HostilePurple({task: "solve"}, world=WorldData(appworld_root), huge_card_after=1) as purple:
        outcome = assess(green.url, {"participants": {"agent": purple.url}, "config": {
            "task_ids": [task], "turn_timeout_s": 20, "predictor": "ground_truth"}})
        assert purple.cards >= 2 and purple.posts == 0  # the request's check got a card, the bridge a huge one
    assert outcome.state == "completed", outcome.statuses
    row = outcome.data["rows"][0]
    assert (row["outcome"], row["purple_fault"], row["attempts"]) == ("blue_error", "malformed_reply", 1), row
    assert folder_bytes(Path(outcome.data["run_dir"])) < 2**20


def test_the_bridge_connects_to_the_participant_url_never_the_cards_and_keeps_its_credentials_out_of_run_files(
        green: Server, appworld_root: Path) -> None:
    task = first(appworld_root, 1)[0]
    gateway_port = green.slot_ports.split(",")[0].split(":")[2]
    user, password = "alice", "Pa55word-not-in-files"
    for card_url in (green.url + "/", f"http://127.0.0.1:{gateway_port}/mcp"):  # serve itself, our gateway
        with HostilePurple({task: "solve"}, world=WorldData(appworld_root), card_url=card_url) as purple:
            url = purple.url.replace("http://", f"http://{user}:{password}@")
            outcome = assess(green.url, {"participants": {"agent": url}, "config": {
                "task_ids": [task], "predictor": "ground_truth"}})
        assert outcome.state == "completed", outcome.statuses
        assert outcome.data["rows"][0]["outcome"] == "passed" and purple.posts > 3, card_url
        expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        assert set(purple.auth_headers) == {expected}  # the credentials are still used, as HTTP Basic auth
        run_dir = Path(outcome.data["run_dir"])
        assert files_containing(run_dir, password) == [] and files_containing(run_dir, f"{user}:") == []
        assert password not in json.dumps(outcome.data) and password not in " ".join(outcome.statuses)


def test_a_participant_url_naming_one_of_our_own_services_is_rejected(green: Server) -> None:
    gateway_port = green.slot_ports.split(",")[0].split(":")[2]
    for url in (green.url, f"http://localhost:{gateway_port}/"):
        outcome = assess(green.url, {"participants": {"agent": url}, "config": {}})
        assert outcome.state == "rejected", (url, outcome.statuses)
        assert "one of the Green's own services" in outcome.statuses[-1]


def test_a_scope_error_makes_the_run_incomplete_in_results_json_and_in_the_artifact(
        green: Server, purples: dict[str, str], appworld_root: Path) -> None:
    task = "f0f4d44_2"  # the lexical predictor leaves two of its gold APIs out (tests/test_scope_policy_e2e.py)
    outcome = assess(green.url, {"participants": {"agent": purples["reference"]}, "config": {
        "task_ids": [task], "predictor": "lexical", "scope_policy": "enforce"}})
    assert outcome.state == "completed", outcome.statuses
    data = outcome.data
    assert data["rows"][0]["outcome"] == "scope_error"
    results = json.loads((Path(data["run_dir"]) / "results.json").read_text())
    assert results["aggregates"]["incomplete"] is True and data["incomplete"] is True
    assert "could not be judged" in outcome.texts[0]


def test_a_traceparent_the_purple_sends_back_never_changes_the_battles(green: Server, appworld_root: Path,
                                                                       tmp_path: Path) -> None:
    """Issue 59: the bridge sends the battle's trace context with every message (header and metadata); a purple
    that answers with a trace context of its own (metadata, DataPart, text) is data: the battle's ids, in result.json
    and in every span of its export, stay the ones the referee made."""
    task = first(appworld_root, 1)[0]
    with HostilePurple({task: "forge_traceparent"}) as purple:
        outcome = assess(green.url, {"participants": {"agent": purple.url}, "config": {
            "task_ids": [task], "max_steps": 5, "predictor": "ground_truth"}})
    assert outcome.state == "completed", outcome.statuses
    result = result_of(outcome.data, task)
    ours = parse_traceparent(result.traceparent)
    assert ours is not None and ours.traceparent != FORGED_TRACEPARENT
    assert len(purple.traceparents) >= 2 and set(purple.traceparents) == {(ours.traceparent, ours.traceparent)}
    folder = Path(outcome.data["run_dir"]) / "tasks" / task
    done = subprocess.run([CLI, "export", str(folder), "--format", "otlp", "--out", str(tmp_path / "t.jsonl")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    spans = spans_of((tmp_path / "t.jsonl").read_text())
    assert {s.trace_id for s in spans} == {ours.trace_id} and spans[0].span_id == ours.root_span_id
    assert any(FORGED_TRACEPARENT in str(s.attributes.get("appworld.reply.text", "")) for s in spans), \
        "what it said is kept, as data"
