"""A finished battle as OpenTelemetry GenAI spans: the one code path of the file export and the live export.

`battle_spans(result, records, battle_id)` takes the battle's result (or None) and its trace records (scrubbed,
in time order: `green_agent.trace.reader.read_trace`) and returns its spans, all in one trace:
- the root, `invoke_agent <Blue>` (`gen_ai.operation.name` `invoke_agent`): the battle, from its start to its end,
  with the task id, the interaction mode, the door (`mcp`: an agent that calls our MCP gateway; `a2a`: the
  in-band bridge talking to a purple), the Blue's name, the outcome and the winner (and `paraphrase` when the
  result has one); its events are the scores: the verdict and each AppWorld test as `gen_ai.evaluation.result`;
- one span per A2A exchange, named by its method (`message/send`): the task sent to an MCP-door Blue until its
  reply, or each message the bridge sent the purple until the purple's answer (text sent, text answered);
- one `execute_tool <tool>` span per tool call and per code execution, timed as the gateway timed it (its
  start, its duration), with the arguments (or the code) and the result (or the output), status, whether it
  was refused and the injected fault. A span sits under the innermost execution or exchange whose time holds its
  start, else under the root (a code-mode `apis` call under its execution).
Ids: the result's `traceparent` when the battle recorded one (made at its start and sent to the agent), else
derived from the battle id (`ids.derived_context`); every other span's id is a hash of the trace id and the
span's key, so two exports of one battle agree. Nothing is added that the trace does not hold.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel

from green_agent.models.result import BattleResult
from kernel.trace_context import TraceContext, derived_context, parse_traceparent, span_id
from green_agent.trace.otel.spans import Span, SpanEvent, attributes
from green_agent.trace.reader import call_numbers
from kernel.trace_record import TraceRecord

EVALUATION_EVENT = "gen_ai.evaluation.result"
SYSTEM = "appworld-green"


def ns(at: datetime) -> int:
    """`at` in Unix nanoseconds."""
    return int(at.timestamp() * 1_000_000) * 1000


def context_of(result: BattleResult | None, battle_id: str) -> TraceContext:
    """The battle's trace context: the one it recorded at its start, else derived from its id."""
    recorded = parse_traceparent(getattr(result, "traceparent", None)) if result is not None else None
    return recorded or derived_context(battle_id)


def _root(result: BattleResult | None, records: list[TraceRecord], battle_id: str, ctx: TraceContext,
          paraphrase: Any) -> Span:
    first = records[0].at if records else None
    start = result.started_at if result else first
    end = (result.finished_at if result else None) or (records[-1].at if records else start)
    if start is None:
        start = end = datetime.now().astimezone()
    verdict = next((r for r in records if r.kind == "verdict"), None)
    door = "a2a" if any(r.source == "bridge" for r in records) or (
        result and result.completion and result.completion.bridge_report) else "mcp"
    blue = (result.blue_agent_name or result.blue) if result else "agent"
    outcome = result.outcome if result else (verdict.outcome if verdict else None)
    failed = bool(result and result.status == "infra_error")
    return Span(
        name=f"invoke_agent {blue}", trace_id=ctx.trace_id, span_id=ctx.root_span_id,
        start_ns=ns(start), end_ns=max(ns(end), ns(start)), status="error" if failed else "ok",
        status_message=result.error.message if failed and result and result.error else None,
        attributes=attributes(
            gen_ai__operation__name="invoke_agent", gen_ai__agent__name=blue, gen_ai__conversation__id=battle_id,
            gen_ai__system=SYSTEM, appworld__battle_id=battle_id, appworld__task_id=result.task_id if result else None,
            appworld__interaction=result.interaction if result else None, appworld__door=door,
            appworld__blue=result.blue if result else None, appworld__status=result.status if result else None,
            appworld__outcome=outcome, appworld__winner=(result.winner if result else None) or "draw",
            appworld__reason=result.reason if result else None,
            appworld__paraphrase=paraphrase_text(paraphrase)),
        events=_evaluations(result, verdict, end))


def paraphrase_text(value: Any) -> str | None:
    """The wording variant the agent saw (result.json's `paraphrase`, when it has one) as an attribute's text."""
    if value is None:
        return None
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)


def _evaluations(result: BattleResult | None, verdict: TraceRecord | None, end: datetime) -> list[SpanEvent]:
    """The verdict, then each AppWorld test, as `gen_ai.evaluation.result` events."""
    at = ns(verdict.at if verdict else end)
    if verdict is None:
        return []
    success = bool(result and result.evaluation and result.evaluation.success) if result else (
        verdict.winner == "blue_agent")
    events = [SpanEvent(name=EVALUATION_EVENT, time_ns=at, attributes=attributes(
        gen_ai__evaluation__name="appworld", gen_ai__evaluation__score__value=1.0 if success else 0.0,
        gen_ai__evaluation__score__label=verdict.outcome or "none", gen_ai__evaluation__explanation=verdict.note))]
    for index, test in enumerate(verdict.tests or [], 1):
        events.append(SpanEvent(name=EVALUATION_EVENT, time_ns=at, attributes=attributes(
            gen_ai__evaluation__name=f"appworld.test.{index}", gen_ai__evaluation__score__value=float(test.passed),
            gen_ai__evaluation__score__label="passed" if test.passed else "failed",
            gen_ai__evaluation__explanation=test.requirement)))
    return events


def _exchanges(records: list[TraceRecord], ctx: TraceContext, battle_id: str, root: Span) -> list[Span]:
    """One `message/send` span per A2A exchange (see the module docstring)."""
    spans: list[Span] = []
    for index, record in enumerate(records):
        if record.kind == "task_message" and not any(r.source == "bridge" for r in records):
            reply = next((r for r in records[index:] if r.kind == "agent_reply"), None)
            spans.append(_exchange(ctx, battle_id, root, "a2a-task", record, reply))
        elif record.kind == "green_message" and record.text:
            reply = next((r for r in records[index + 1:] if r.kind in ("agent_message", "green_message")), None)
            spans.append(_exchange(ctx, battle_id, root, f"a2a-{index}", record, reply
                                   if reply is not None and reply.kind == "agent_message" else None))
    return spans


def _exchange(ctx: TraceContext, battle_id: str, root: Span, key: str, sent: TraceRecord,
              reply: TraceRecord | None) -> Span:
    end = ns(reply.at) if reply is not None else root.end_ns
    failed = reply is not None and bool(reply.error)
    usage = (reply.usage or {}) if reply is not None else {}
    return Span(
        name="message/send", trace_id=ctx.trace_id, span_id=span_id(ctx, key), parent_id=root.span_id, kind="client",
        start_ns=ns(sent.at), end_ns=max(end, ns(sent.at)), status="error" if failed else "unset",
        status_message=reply.error if failed and reply is not None else None,
        attributes=attributes(
            a2a__method="message/send", a2a__context__id=battle_id, gen_ai__conversation__id=battle_id,
            appworld__message__note=sent.note if sent.kind == "green_message" else "the task",
            appworld__message__text=sent.text, appworld__reply__text=reply.text if reply is not None else None,
            appworld__reply__note=reply.note if reply is not None else None,
            appworld__reply__tool=reply.tool if reply is not None else None,
            gen_ai__usage__input_tokens=_tokens(usage, "input_tokens", "prompt_tokens"),
            gen_ai__usage__output_tokens=_tokens(usage, "output_tokens", "completion_tokens")))


def _tokens(usage: dict[str, float], *keys: str) -> int | None:
    return next((int(usage[k]) for k in keys if isinstance(usage.get(k), (int, float))), None)


def _tool(record: TraceRecord, ctx: TraceContext, battle_id: str, key: str, number: int | None) -> Span:
    start = ns(record.at)
    end = ns(record.at + timedelta(milliseconds=record.duration_ms or 0))
    code = record.kind == "execution"
    tool = "execute" if code else (record.tool or "?")
    failed = not record.ok or bool(record.timed_out or record.killed)
    arguments: Any = {"code": record.text or ""} if code else (record.arguments or {})
    return Span(
        name=f"execute_tool {tool}", trace_id=ctx.trace_id, span_id=span_id(ctx, key), start_ns=start,
        end_ns=max(end, start), status="error" if failed else "ok",
        status_message=(record.error or record.killed or ("timed out" if record.timed_out else "failed"))
        if failed else None,
        attributes=attributes(
            gen_ai__operation__name="execute_tool", gen_ai__tool__name=tool, gen_ai__tool__call__id=key,
            gen_ai__tool__type="function", gen_ai__conversation__id=battle_id,
            gen_ai__tool__call__arguments=json.dumps(arguments, ensure_ascii=False, default=str),
            gen_ai__tool__call__result=record.result or "", appworld__call__number=number,
            appworld__call__seq=record.seq,
            http__response__status_code=record.status_code, appworld__in_scope=record.in_scope,
            appworld__refused=None if code else record.in_scope is False, appworld__fault=record.fault,
            appworld__error=record.error, appworld__timed_out=record.timed_out, appworld__killed=record.killed,
            appworld__api_calls=record.api_calls))


def _tools(records: list[TraceRecord], ctx: TraceContext, battle_id: str) -> list[Span]:
    numbers = call_numbers(records)
    spans = []
    for index, record in enumerate(records):
        if record.kind == "tool_call":
            number = numbers.get(id(record))
            spans.append(_tool(record, ctx, battle_id, f"call-{number}", number))
        elif record.kind == "execution":
            spans.append(_tool(record, ctx, battle_id, f"execution-{index}", None))
    return spans


def _parented(span: Span, holders: list[Span], root: Span) -> Span:
    """`span` under the innermost holder whose time holds its start (executions before exchanges), else the root."""
    for holder in holders:
        if holder.span_id != span.span_id and holder.start_ns <= span.start_ns <= holder.end_ns:
            return span.model_copy(update={"parent_id": holder.span_id})
    return span.model_copy(update={"parent_id": root.span_id})


def battle_spans(result: BattleResult | None, records: list[TraceRecord], battle_id: str,
                 paraphrase: Any = None) -> list[Span]:
    """The battle's spans, root first (see the module docstring). `paraphrase`: result.json's `paraphrase` (or the
    result's own field, once it has one)."""
    ctx = context_of(result, battle_id)
    paraphrase = paraphrase if paraphrase is not None else getattr(result, "paraphrase", None)
    root = _root(result, records, battle_id, ctx, paraphrase)
    exchanges = _exchanges(records, ctx, battle_id, root)
    tools = _tools(records, ctx, battle_id)
    executions = [s for s in tools if s.attributes.get("gen_ai.tool.name") == "execute"]
    placed = [_parented(s, exchanges if s in executions else executions + exchanges, root) for s in tools]
    return [root, *exchanges, *placed]
