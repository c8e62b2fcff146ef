"""A run as an Inspect AI eval log, written with inspect_ai's own models and writer (an optional extra).

`export_run(run_dir, out)` reads the run's `results.json` and each battle's `result.json` and `trace.jsonl`
through the run-folder reader (`green_agent.runfolder`: a hostile folder is refused, nothing outside it is read),
and writes one `EvalLog` (`inspect_ai.log.write_eval_log`; `.eval` or `.json` by the file's name):
- one `EvalSample` per battle: `id` the task id, `epoch` the trial; `input` the task message the agent
  got (from the trace; the instruction when there is none); `target` empty (the expected answer is never
  exported);
- `messages`: the task message as the user's, each call or execution as an assistant tool call and its
  result (or error) as the tool's message, the Blue's A2A reply as the assistant's last message;
- `events`: one `ToolEvent` per call and per execution (a code-mode execution's `apis` calls too), with
  the arguments, the result, the timings and the error; then a `ScoreEvent` per score (the transcript's verdict);
- `scores`: `appworld` (1 when AppWorld's evaluation passed, the headline as explanation, tests passed /
  total in the metadata) and `outcome` (our graded outcome, the verdict's reason as explanation); each
  score's `answer` is the answer the agent submitted, as sent (the viewer's ANSWER column);
- `metadata`: task, scenario, difficulty, interaction, scope (predictor, policy, APIs), cost, battle id.
Every record and result is scrubbed again of the secrets this process knows for its battle (`kernel.scrubber`;
the trace and result.json were scrubbed when they were written).
The log's results carry the run's TGC as the `appworld` score's accuracy, its stats the first battle's start and
the last one's end. The log says `ViewerConfig(trust_content=False)`: everything in it came from or through the
agent under test, so `inspect view` shows it as plain text (no markdown, links or media). inspect_ai is imported only
here, so the rest of the CLI runs without it; a missing extra is a `BadInputError` naming `make inspect`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from green_agent.models.eval_run import EvalResults, EvalRow
from green_agent.models.result import BattleResult
from green_agent.models.result_assembly import scrubbed as scrubbed_result
from green_agent.runfolder.limits import TRACE
from green_agent.runfolder.reader import RunFolder, read_eval_results
from green_agent.trace.reader import call_numbers, read_trace
from kernel.errors import BadInputError
from kernel.trace_log import scrubbed
from kernel.trace_record import TRACE_FILE, TraceRecord

MISSING = ("the Inspect export needs the optional extra inspect-ai: run `make inspect` "
           "(or `.venv/bin/pip install -r requirements-inspect.txt`)")


def _inspect() -> Any:
    try:
        import inspect_ai.event as event
        import inspect_ai.log as log
        import inspect_ai.model as model
        import inspect_ai.scorer as scorer
        import inspect_ai.tool as tool
        import inspect_ai.viewer as viewer
    except ImportError:
        raise BadInputError(MISSING) from None
    return type("Inspect", (), {"event": event, "log": log, "model": model, "scorer": scorer, "tool": tool,
                                "viewer": viewer})


def _call_id(record: TraceRecord, index: int, numbers: dict[int, int]) -> str:
    """`call-<n>` with the call's number in its battle (`call_numbers`), else `<kind>-<index>`."""
    number = numbers.get(id(record))
    return f"call-{number}" if number else f"{record.kind}-{index}"


def _tool_parts(ia: Any, record: TraceRecord, index: int) -> tuple[str, dict[str, Any], Any]:
    """(function, arguments, error or None) of a call or an execution."""
    if record.kind == "execution":
        failed = not record.ok or record.timed_out or record.killed
        kind = "timeout" if record.timed_out else "limit" if record.killed else "unknown"
        error = ia.tool.ToolCallError(kind, (record.result or "")[:2000]) if failed else None
        return "execute", {"code": record.text or ""}, error
    error = ia.tool.ToolCallError("unknown", record.error or "failed") if not record.ok else None
    return record.tool or "?", dict(record.arguments or {}), error


def _events(ia: Any, records: list[TraceRecord]) -> list[Any]:
    events, numbers = [], call_numbers(records)
    for index, record in enumerate(records):
        if record.kind not in ("tool_call", "execution"):
            continue
        function, arguments, error = _tool_parts(ia, record, index)
        completed = None
        if record.duration_ms is not None:
            from datetime import timedelta
            completed = record.at + timedelta(milliseconds=record.duration_ms)
        events.append(ia.event.ToolEvent(
            id=_call_id(record, index, numbers), function=function, arguments=arguments, result=record.result or "",
            timestamp=record.at, completed=completed, error=error, failed=error is not None,
            working_time=(record.duration_ms or 0) / 1000,
            metadata={"source": record.source, "call": numbers.get(id(record)), "seq": record.seq,
                      "status_code": record.status_code,
                      "in_scope": record.in_scope}))
    return events


def _messages(ia: Any, records: list[TraceRecord], instruction: str) -> tuple[str, list[Any]]:
    """(input text, chat messages): the executions of code mode are the turns, their calls stay events."""
    code_mode = any(r.kind == "execution" for r in records)
    task = next((r.text for r in records if r.kind == "task_message" and r.text), None) or instruction
    messages: list[Any] = [ia.model.ChatMessageUser(content=task)]
    numbers = call_numbers(records)
    for index, record in enumerate(records):
        if record.kind == "execution" or record.kind == "tool_call" and not code_mode:
            function, arguments, error = _tool_parts(ia, record, index)
            call_id = _call_id(record, index, numbers)
            messages.append(ia.model.ChatMessageAssistant(
                content="", tool_calls=[ia.tool.ToolCall(id=call_id, function=function, arguments=arguments)]))
            messages.append(ia.model.ChatMessageTool(content=record.result or "", tool_call_id=call_id,
                                                     function=function, error=error))
        elif record.kind in ("agent_message", "agent_reply") and (record.text or record.error):
            messages.append(ia.model.ChatMessageAssistant(content=record.text or record.error or ""))
        elif record.kind == "green_message" and record.text:
            messages.append(ia.model.ChatMessageUser(content=record.text))
    return task, messages


def _scores(ia: Any, row: EvalRow, result: BattleResult | None) -> dict[str, Any]:
    headline = result.explanation.headline if result and result.explanation else row.reason()
    tests = {"tests_passed": row.tests_passed, "tests_total": row.tests_total}
    answer = result.trajectory.submitted_answer if result and result.trajectory else None
    return {"appworld": ia.scorer.Score(value=1.0 if row.passed else 0.0, answer=answer, explanation=headline,
                                        metadata=tests),
            "outcome": ia.scorer.Score(value=row.outcome, answer=answer,
                                       explanation=(result.reason if result else None) or headline)}


def _metadata(row: EvalRow, result: BattleResult | None, results: EvalResults) -> dict[str, Any]:
    scope = result.scope if result else None
    return {"task_id": row.task_id, "scenario": row.scenario_id, "difficulty": row.difficulty,
            "interaction": results.manifest.config.interaction, "battle_id": row.battle_id,
            "scope": {"predictor": scope.predictor, "policy": scope.policy, "apis": scope.apis} if scope else None,
            "cost_usd": row.cost_usd, "purple_cost_usd": row.purple_cost_usd, "outcome": row.outcome,
            "winner": result.winner if result else None}


def sample_of(ia: Any, folder: RunFolder, row: EvalRow, results: EvalResults) -> Any:
    """One battle as an `EvalSample` (its files read from the run folder `folder`)."""
    path = folder.path / row.result_path
    result = folder.result_at(path).result
    result = scrubbed_result(result) if result is not None else None
    trace = folder.file(path.parent / TRACE_FILE, TRACE)
    records = [scrubbed(r) for r in read_trace(trace)] if trace is not None else []
    task, messages = _messages(ia, records, (result.instruction if result else None) or row.task_id)
    last = next((m for m in reversed(messages) if m.role == "assistant" and m.text), None)
    scores = _scores(ia, row, result)
    scored_at = (result.finished_at if result else None) or results.generated_at
    verdict = [ia.event.ScoreEvent(score=score, scorer=name, timestamp=scored_at) for name, score in scores.items()]
    return ia.log.EvalSample(
        id=row.task_id, epoch=row.trial, input=task, target="", messages=messages,
        output=ia.model.ModelOutput.from_content(results.manifest.config.blue, last.text if last else ""),
        scores=scores, metadata=_metadata(row, result, results), events=_events(ia, records) + verdict,
        started_at=result.started_at if result else None, completed_at=result.finished_at if result else None,
        total_time=row.duration_s)


def build_log(run_dir: Path) -> Any:
    """The run as an inspect_ai `EvalLog` (in memory)."""
    ia = _inspect()
    run_dir = Path(run_dir)
    results = read_eval_results(run_dir)
    folder = RunFolder(run_dir if run_dir.is_dir() else run_dir.parent)
    config, manifest = results.manifest.config, results.manifest
    samples = [sample_of(ia, folder, row, results) for row in results.rows]
    accuracy = results.aggregates.tgc / 100 if results.aggregates.tgc is not None else 0.0
    spec = ia.log.EvalSpec(
        created=results.generated_at.isoformat(), task=f"appworld/{config.split or 'tasks'}",
        run_id=manifest.run_id, model=f"appworld-green/{config.blue}",
        dataset=ia.log.EvalDataset(name=config.split or "tasks", samples=len(manifest.task_ids),
                                   sample_ids=list(manifest.task_ids)),
        config=ia.log.EvalConfig(epochs=config.trials),
        metadata={"interaction": config.interaction, "predictor": config.predictor,
                  "scope_policy": config.scope_policy, "deadline_s": config.deadline_s,
                  "appworld_green": manifest.versions.get("appworld_green"), "status": results.status},
        viewer=ia.viewer.ViewerConfig(trust_content=False))
    scores = [ia.log.EvalScore(name="appworld", scorer="appworld", scored_samples=len(samples),
                               metrics={"accuracy": ia.log.EvalMetric(name="accuracy", value=accuracy)})]
    started = [s.started_at for s in samples if s.started_at]
    completed = [s.completed_at for s in samples if s.completed_at]
    stats = ia.log.EvalStats(started_at=min(started, default=""), completed_at=max(completed, default=""))
    return ia.log.EvalLog(
        status="success" if results.status == "completed" else "error", eval=spec, stats=stats,
        results=ia.log.EvalResults(total_samples=len(samples), completed_samples=len(samples), scores=scores),
        samples=samples)


def export_run(run_dir: Path, out: Path) -> int:
    """Write the run's Inspect eval log to `out`; returns the number of samples."""
    log = build_log(run_dir)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _inspect().log.write_eval_log(log, str(out))
    return len(log.samples or [])
