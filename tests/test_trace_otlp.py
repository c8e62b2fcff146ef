"""`appworld-green export --format otlp`: a real eval's battles as OpenTelemetry GenAI spans in OTLP/JSON.

Two real evals for the module (the reference Blue; two tasks in tools mode, one in code mode), exported with the
CLI and read back line by line: one trace per battle, its root `invoke_agent` span carrying the battle's
`traceparent` ids from result.json, one `execute_tool` span per call of the call log (timed as the gateway timed
it) and per execution (a code-mode `apis` call under its execution), the verdict and each AppWorld test as
`gen_ai.evaluation.result` events. A battle folder exports alone to the same ids; a battle recorded without a
trace context gets ids derived from its id, the same on every export; a `paraphrase` in result.json becomes an
attribute of the root. The W3C `traceparent` rule (`kernel.trace_context`) refuses anything but a valid header.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest

from green_agent.models.eval_run import EvalResults
from green_agent.models.result import BattleResult
from green_agent.trace.otel.battle_spans import EVALUATION_EVENT
from green_agent.trace.otel.otlp_json import spans_of
from green_agent.trace.otel.spans import Span
from kernel.trace_context import derived_context, new_context, parse_traceparent
from test_batch_e2e import CLI, cli_env
from test_scope_policy_e2e import run_eval

pytestmark = pytest.mark.e2e
TOOLS_TASKS = ["f0a1c01_1", "f0a7c07_1"]
CODE_TASK = "f0f4d44_1"


class Runs(NamedTuple):
    tools: Path
    code: Path
    env: dict[str, str]
    tmp: Path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, appworld_root: Path) -> Runs:
    tmp = tmp_path_factory.mktemp("otlp")
    run_eval(appworld_root, tmp, "tools", TOOLS_TASKS)
    run_eval(appworld_root, tmp, "code", [CODE_TASK], "--interaction", "code")
    return Runs(tmp / "tools", tmp / "code", cli_env(appworld_root, tmp), tmp)


def export(path: Path, out: Path, env: dict[str, str]) -> list[list[Span]]:
    proc = subprocess.run([CLI, "export", str(path), "--format", "otlp", "--out", str(out)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "as OTLP/JSON" in proc.stdout
    return [spans_of(line) for line in out.read_text().splitlines()]


def battles(run: Path) -> list[tuple[BattleResult, Path]]:
    results = EvalResults.model_validate_json((run / "results.json").read_text())
    return [(BattleResult.model_validate_json((run / r.result_path).read_text()), (run / r.result_path).parent)
            for r in results.rows]


def check_tree(spans: list[Span]) -> Span:
    """One trace, one root (no parent), every other span's parent in the trace; the root."""
    assert len({s.trace_id for s in spans}) == 1
    ids = {s.span_id for s in spans}
    assert len(ids) == len(spans), "span ids are unique"
    roots = [s for s in spans if s.parent_id is None]
    assert len(roots) == 1 and roots[0] is spans[0]
    assert all(s.parent_id in ids for s in spans[1:])
    assert all(s.start_ns <= s.end_ns for s in spans)
    return roots[0]


def test_a_run_exports_one_trace_per_battle_with_its_calls_and_its_verdict(runs: Runs) -> None:
    exported = export(runs.tools, runs.tmp / "tools.jsonl", runs.env)
    expected = battles(runs.tools)
    assert len(exported) == len(expected) == len(TOOLS_TASKS)
    for spans, (result, folder) in zip(exported, expected):
        root = check_tree(spans)
        context = parse_traceparent(result.traceparent)
        assert context is not None, "a new battle records its trace context in result.json"
        assert (root.trace_id, root.span_id) == (context.trace_id, context.root_span_id)
        assert root.name == f"invoke_agent {result.blue_agent_name}"
        attrs = root.attributes
        assert attrs["gen_ai.operation.name"] == "invoke_agent" and attrs["appworld.task_id"] == result.task_id
        assert (attrs["appworld.interaction"], attrs["appworld.door"], attrs["appworld.outcome"]) == (
            "tools", "mcp", result.outcome)
        assert "appworld.paraphrase" not in attrs
        calls = [json.loads(line) for line in (folder / "mcp_calls.jsonl").read_text().splitlines()]
        tools = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
        assert [s.attributes["gen_ai.tool.name"] for s in tools] == [c["tool_name"] for c in calls]
        assert [s.attributes["gen_ai.tool.call.id"] for s in tools] == [f"call-{n}" for n in range(1, len(calls) + 1)]
        for span, call in zip(tools, calls):
            assert span.name == f"execute_tool {call['tool_name']}"
            took_ms = (span.end_ns - span.start_ns) / 1e6
            assert abs(took_ms - call["duration_ms"]) < 0.01, "timed as the gateway timed it"
            assert span.status == ("ok" if call["success"] else "error")
            assert span.attributes["appworld.refused"] is (call["in_scope"] is False)
        exchange = next(s for s in spans if s.name == "message/send")
        assert exchange.parent_id == root.span_id and all(s.parent_id == exchange.span_id for s in tools)
        assert "AppWorld" in str(exchange.attributes["appworld.message.text"])
        events = [e for e in root.events if e.name == EVALUATION_EVENT]
        assert len(events) == 1 + result.evaluation.num_tests
        verdict = events[0].attributes
        assert (verdict["gen_ai.evaluation.name"], verdict["gen_ai.evaluation.score.value"],
                verdict["gen_ai.evaluation.score.label"]) == ("appworld", float(result.evaluation.success),
                                                             result.outcome)
        tests = [e.attributes for e in events[1:]]
        assert sum(t["gen_ai.evaluation.score.value"] for t in tests) == len(result.evaluation.passes)
        assert all(t["gen_ai.evaluation.explanation"] for t in tests)


def test_code_mode_executions_are_tool_spans_with_their_api_calls_under_them(runs: Runs) -> None:
    (spans,) = export(runs.code, runs.tmp / "code.jsonl", runs.env)
    root = check_tree(spans)
    assert root.attributes["appworld.interaction"] == "code"
    executions = [s for s in spans if s.attributes.get("gen_ai.tool.name") == "execute"]
    calls = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool" and s not in executions]
    assert executions and calls
    assert all("code" in json.loads(str(s.attributes["gen_ai.tool.call.arguments"])) for s in executions)
    by_id = {s.span_id: s for s in executions}
    assert all(c.parent_id in by_id for c in calls), "each apis call sits under the execution that made it"
    assert sum(int(s.attributes.get("appworld.api_calls", 0)) for s in executions) == len(calls)


def test_a_battle_folder_exports_alone_to_the_same_ids(runs: Runs) -> None:
    whole = export(runs.tools, runs.tmp / "again.jsonl", runs.env)
    assert whole == export(runs.tools, runs.tmp / "again2.jsonl", runs.env), "two exports of a run agree"
    _, folder = battles(runs.tools)[1]
    (alone,) = export(folder, runs.tmp / "one.jsonl", runs.env)
    assert alone == whole[1]


def test_a_battle_without_a_trace_context_gets_ids_from_its_id_and_a_paraphrase_shows(runs: Runs) -> None:
    result, folder = battles(runs.tools)[0]
    copy = runs.tmp / "old-battle"
    shutil.copytree(folder, copy)
    data = json.loads((copy / "result.json").read_text())
    data.pop("traceparent")
    data["paraphrase"] = {"variant": "formal", "text": "Kindly tell me the sum."}
    (copy / "result.json").write_text(json.dumps(data))
    (spans,) = export(copy, runs.tmp / "old.jsonl", runs.env)
    derived = derived_context(result.battle_id)
    root = check_tree(spans)
    assert (root.trace_id, root.span_id) == (derived.trace_id, derived.root_span_id)
    assert json.loads(str(root.attributes["appworld.paraphrase"]))["variant"] == "formal"
    (again,) = export(copy, runs.tmp / "old2.jsonl", runs.env)
    assert again == spans


def test_the_otlp_json_is_the_protobuf_mapping_with_hex_ids(runs: Runs) -> None:
    export(runs.tools, runs.tmp / "shape.jsonl", runs.env)
    request = json.loads((runs.tmp / "shape.jsonl").read_text().splitlines()[0])
    (resource,) = request["resourceSpans"]
    assert resource["resource"]["attributes"][0] == {"key": "service.name", "value": {"stringValue": "appworld-green"}}
    spans = resource["scopeSpans"][0]["spans"]
    assert all(len(s["traceId"]) == 32 and len(s["spanId"]) == 16 for s in spans)
    assert isinstance(spans[0]["startTimeUnixNano"], str) and spans[0]["kind"] == 1
    kinds = Counter(s["kind"] for s in spans)
    assert kinds[3] == 1, "the A2A exchange is a client span"


@pytest.mark.parametrize("value", [
    None, 7, "", "00-" + "0" * 32 + "-" + "1" * 16 + "-01", "00-" + "a" * 32 + "-" + "0" * 16 + "-01",
    "01-" + "a" * 32 + "-" + "b" * 16 + "-01", "00-" + "A" * 32 + "-" + "b" * 16 + "-01",
    "00-" + "a" * 32 + "-" + "b" * 16 + "-01\n", "00-" + "a" * 32 + "-" + "b" * 16 + "-01-extra"])
def test_a_traceparent_that_is_not_a_valid_one_is_none(value: object) -> None:
    assert parse_traceparent(value) is None


def test_a_traceparent_round_trips_and_new_contexts_differ() -> None:
    one, two = new_context(), new_context()
    assert parse_traceparent(one.traceparent) == one and one != two
    assert derived_context("b-1") == derived_context("b-1") != derived_context("b-2")
