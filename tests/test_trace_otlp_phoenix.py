"""The OTLP export against a real Phoenix: a dev run loaded from its export, the same run sent live, an A2A battle
whose instrumented purple's spans join the battle's trace, and no OpenTelemetry at all when no endpoint is set.

Phoenix (arize-phoenix, pinned in requirements-phoenix.txt) runs from its own virtualenv (`make phoenix`;
`make test` depends on it), one server for the module, on loopback ports of this worker, with a temporary working
directory and its telemetry off. Spans are read back with Phoenix's own client (`tests/phoenix_spans.py`, run by
.venv-phoenix's Python). Each part sends to a Phoenix project of its own (`openinference.project.name` in
`OTEL_RESOURCE_ATTRIBUTES`, which the SDK's resource reads), so the live and the file copies of a run never meet.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from a2a_support import assess, first, start
from faults_support import answers, wait_until
from green_agent.models.eval_run import EvalResults
from green_agent.models.result import BattleResult
from green_agent.runtime.processes import ManagedProcess
from green_agent.trace.reader import read_trace
from kernel.ports import free_port
from green_agent.trace.otel.otlp_json import spans_of
from kernel.trace_context import parse_traceparent
from test_batch_e2e import CLI, assert_nothing_left, cli_env, slot_ports

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[1]
PHOENIX = REPO / ".venv-phoenix" / "bin"
READER = Path(__file__).resolve().parent / "phoenix_spans.py"
DEV_BATTLES = 21


class Phoenix(NamedTuple):
    url: str
    log: Path


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    assert (PHOENIX / "phoenix").is_file(), "Phoenix's virtualenv is missing: run `make phoenix`"
    tmp = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(tmp / "work"), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(free_port()), "PHOENIX_TELEMETRY_ENABLED": "false"}
    process = ManagedProcess("phoenix", [str(PHOENIX / "phoenix"), "serve"], tmp / "phoenix.log", env=env)
    process.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: answers(url), 180, "Phoenix up")
        yield Phoenix(url, tmp / "phoenix.log")
    finally:
        process.stop()


def spans_in(phoenix: Phoenix, project: str, expected: int, timeout_s: float = 60) -> list[dict[str, Any]]:
    """The project's spans once `expected` are there (Phoenix ingests in the background), read by its client."""
    deadline, found = time.monotonic() + timeout_s, []
    while time.monotonic() < deadline:
        proc = subprocess.run([str(PHOENIX / "python"), str(READER), phoenix.url, project], capture_output=True,
                              text=True, timeout=120, env=reader_env(phoenix))
        found = json.loads(proc.stdout) if proc.returncode == 0 else []
        if len(found) >= expected:
            return found
        time.sleep(1)
    raise AssertionError(f"{len(found)} of {expected} spans in Phoenix project {project}; its log: "
                         f"{phoenix.log.read_text()[-2000:]}")


def reader_env(phoenix: Phoenix) -> dict[str, str]:
    """The reader's environment: importing Phoenix's package makes its working folders, kept in the test's own
    (never the user's ~/.phoenix)."""
    return {**os.environ, "PHOENIX_WORKING_DIR": str(phoenix.log.parent / "work")}


def project_env(env: dict[str, str], phoenix: Phoenix, project: str) -> dict[str, str]:
    return {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.url,
            "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={project}"}


def by_trace(spans: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    traces: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for span in spans:
        traces[span["trace_id"]].append(span)
    return traces


def check_battle(spans: list[dict[str, Any]], result: BattleResult, calls: int) -> None:
    """One root (the referee's invoke_agent, Phoenix's AGENT), every parent in the trace, a TOOL span per call, the
    verdict and each test as evaluation events."""
    roots = [s for s in spans if s["parent_id"] is None]
    assert len(roots) == 1, [s["name"] for s in roots]
    (root,) = roots
    context = parse_traceparent(result.traceparent)
    assert context is not None and (root["trace_id"], root["span_id"]) == (context.trace_id, context.root_span_id)
    assert root["span_kind"] == "AGENT" and root["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert root["attributes"]["appworld.task_id"] == result.task_id
    assert root["attributes"]["appworld.outcome"] == result.outcome
    ids = {s["span_id"] for s in spans}
    assert all(s["parent_id"] in ids for s in spans if s is not root)
    tools = [s for s in spans if s["span_kind"] == "TOOL"]
    assert len(tools) == calls and all(s["attributes"]["gen_ai.operation.name"] == "execute_tool" for s in tools)
    assert all(s["name"] == f"execute_tool {s['attributes']['gen_ai.tool.name']}" for s in tools)
    events = [e for e in root["events"] if e["name"] == "gen_ai.evaluation.result"]
    assert len(events) == 1 + result.evaluation.num_tests
    assert events[0]["attributes"]["gen_ai.evaluation.score.value"] == float(result.evaluation.success)


def eval_run(out: Path, env: dict[str, str], *args: str) -> EvalResults:
    ports_arg, ports = slot_ports(2 if "--split" in args else 1)
    proc = subprocess.run([CLI, "eval", "--blue", "reference", "--predictor", "lexical", "--out", str(out),
                           "--slot-ports", ports_arg, "--workers", str(ports_arg.count(",") + 1), *args],
                          capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_nothing_left(ports)
    return EvalResults.model_validate_json((out / "results.json").read_text())


def exported(path: Path, out: Path, env: dict[str, str], *extra: str) -> list[dict[str, Any]]:
    """`export --format otlp` of `path` (a run or a battle folder): its spans, in the reader's shape."""
    proc = subprocess.run([CLI, "export", str(path), "--format", "otlp", "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    spans = [s for line in out.read_text().splitlines() for s in spans_of(line)]
    if extra:
        assert f"sent {len(spans)} span(s)" in proc.stdout and "0 dropped" in proc.stdout, proc.stdout
    return [{"trace_id": s.trace_id, "span_id": s.span_id, "parent_id": s.parent_id, "name": s.name} for s in spans]


def shape(spans: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((s["trace_id"], s["span_id"], s["parent_id"], s["name"]) for s in spans)


def test_a_dev_run_exported_to_otlp_loads_into_phoenix(phoenix: Phoenix, appworld_root: Path,
                                                      tmp_path: Path) -> None:
    env = cli_env(appworld_root, tmp_path)
    results = eval_run(tmp_path / "dev", env, "--split", "dev")
    assert len(results.rows) == DEV_BATTLES and results.otlp_spans_dropped is None, "no endpoint: no live export"
    sent = exported(tmp_path / "dev", tmp_path / "dev.jsonl", project_env(env, phoenix, "file"), "--send")
    loaded = spans_in(phoenix, "file", len(sent))
    assert shape(loaded) == shape(sent)
    traces = by_trace(loaded)
    assert len(traces) == DEV_BATTLES
    for row in results.rows:
        result = BattleResult.model_validate_json((tmp_path / "dev" / row.result_path).read_text())
        check_battle(traces[parse_traceparent(result.traceparent).trace_id], result, row.calls)


def test_an_eval_sent_live_appears_as_its_export_and_a_dead_collector_only_drops_spans(
        phoenix: Phoenix, appworld_root: Path, tmp_path: Path) -> None:
    env = cli_env(appworld_root, tmp_path)
    tasks = ["f0a1c01_1", "f0a7c07_1"]
    results = eval_run(tmp_path / "live", project_env(env, phoenix, "live"), "--task-ids", ",".join(tasks))
    assert results.otlp_spans_dropped == 0 and results.aggregates.tgc == 100.0
    export = exported(tmp_path / "live", tmp_path / "live.jsonl", env)
    live = spans_in(phoenix, "live", len(export))
    assert shape(live) == shape(export), "the battles sent live appear as their export"
    assert len(by_trace(live)) == len(tasks)
    dead = {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{free_port()}"}  # nothing listens there
    results = eval_run(tmp_path / "dead", dead, "--task-ids", ",".join(tasks))
    assert results.aggregates.tgc == 100.0 and results.status == "completed"
    assert results.otlp_spans_dropped == len(exported(tmp_path / "dead", tmp_path / "dead.jsonl", env)) > 0


def test_the_traced_purples_spans_sit_in_the_battles_trace_under_the_referees_root(
        phoenix: Phoenix, appworld_root: Path, tmp_path: Path) -> None:
    env = project_env({**os.environ, "APPWORLD_ROOT": str(appworld_root), "RUNS_DIR": str(tmp_path / "runs"),
                       "OPENAI_API_KEY": ""}, phoenix, "a2a")
    green, green_url, _ = start(["serve", "--heartbeat", "1", "--slot-ports", slot_ports(1)[0]], env,
                                tmp_path / "green.log")
    purple, purple_url, _ = start(["purple", "--kind", "reference-traced"], env, tmp_path / "purple.log")
    try:
        task = first(appworld_root, 1)[0]
        outcome = assess(green_url, {"participants": {"agent": purple_url}, "config": {
            "task_ids": [task], "predictor": "ground_truth"}})
        assert outcome.state == "completed" and outcome.data is not None, outcome.statuses
        folder = Path(outcome.data["run_dir"]) / "tasks" / task
        result = BattleResult.model_validate_json((folder / "result.json").read_text())
        records = read_trace(folder / "trace.jsonl")
        calls = len([r for r in records if r.kind == "tool_call"])
        sent = len([r for r in records if r.kind == "green_message" and r.text])
        context = parse_traceparent(result.traceparent)
        assert context is not None and calls > 0 and sent > 1
        spans = spans_in(phoenix, "a2a", 1 + calls + sent + sent)  # ours: root, calls, exchanges; the purple's turns
        export = exported(folder, tmp_path / "a2a.jsonl", env)
    finally:
        purple.stop()
        green.stop()
    traces = by_trace(spans)
    assert list(traces) == [context.trace_id], "the referee's spans and the purple's share one trace id"
    ours = [s for s in spans if not s["name"].startswith("invoke_agent AppWorld traced")]
    theirs = [s for s in spans if s["name"].startswith("invoke_agent AppWorld traced")]
    check_battle(ours, result, calls)
    assert shape(ours) == shape(export), "the battle sent live (by serve) appears as its export"
    assert root_of(spans)["span_id"] == context.root_span_id, "one root: the referee's"
    assert len(theirs) == sent, "one purple span per message the bridge sent it"
    assert {s["parent_id"] for s in theirs} == {context.root_span_id}
    assert root_of(spans)["attributes"]["appworld.door"] == "a2a"
    assert Counter(s["name"] for s in ours)["message/send"] == sent


def root_of(spans: list[dict[str, Any]]) -> dict[str, Any]:
    (root,) = [s for s in spans if s["parent_id"] is None]
    return root


def test_with_no_endpoint_an_eval_imports_nothing_of_opentelemetry(appworld_root: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in cli_env(appworld_root, tmp_path).items() if not k.startswith("OTEL_")}
    seen = tmp_path / "modules.json"
    ports_arg, ports = slot_ports(1)
    code = ("import atexit, json, sys\n"
            f"atexit.register(lambda: open({str(seen)!r}, 'w').write(json.dumps(sorted(sys.modules))))\n"
            "from green_agent.cli import main\n"
            f"sys.exit(main(['eval', '--task-ids', 'f0a1c01_1', '--blue', 'reference', '--workers', '1', "
            f"'--slot-ports', {ports_arg!r}, '--out', {str(tmp_path / 'run')!r}]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_nothing_left(ports)
    modules = json.loads(seen.read_text())
    assert "green_agent.engine.sequencer" in modules and "green_agent.trace.otel.hook" in modules
    assert [m for m in modules if m.startswith("opentelemetry")] == []
    assert "green_agent.trace.otel.sdk_spans" not in modules and "green_agent.trace.otel.export" not in modules
    results = EvalResults.model_validate_json((tmp_path / "run" / "results.json").read_text())
    assert results.otlp_spans_dropped is None and not list((tmp_path / "run").rglob("otlp_export.json"))
