"""An example purple instrumented with OpenTelemetry: the reference purple, each of its turns a span of the battle.

What an agent builder does to see their agent's own spans in the battle's trace (docs/trace.md, "In Phoenix"):
read the W3C Trace Context the referee sends with every A2A message (the request's `traceparent` header, or the
message's metadata, `traceparent`) with OpenTelemetry's own propagator, and start the agent's spans under it. Its
spans go to `OTEL_EXPORTER_OTLP_ENDPOINT` (the SDK's batch processor and OTLP/HTTP exporter), so in Phoenix they
sit in the battle's trace under the referee's root span. It imports nothing of the referee (it is an agent under
test): the propagator and the GenAI attribute names are OpenTelemetry's. Serve it with
`appworld-green purple --kind reference-traced --port P`. Each A2A turn is an `invoke_agent` span (`SERVER`).
"""

from __future__ import annotations

from typing import Any

from a2a.server.agent_execution import RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCard

from blue_agent.purple.server import PlayerFactory, PurpleExecutor

NAME = "AppWorld traced reference purple"
DESCRIPTION = ("Replays the task's reference solution through the in-band AppWorld tools and sends its own "
               "OpenTelemetry spans, under the battle's trace context, to OTEL_EXPORTER_OTLP_ENDPOINT.")
SERVICE = "appworld-traced-purple"
SCHEDULE_DELAY_MS = 500


def tracer() -> Any:
    """An SDK tracer exporting to `OTEL_EXPORTER_OTLP_ENDPOINT` in batches (its own provider, not the global one)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(), schedule_delay_millis=SCHEDULE_DELAY_MS))
    return provider.get_tracer("appworld-traced-purple")


def carrier(context: RequestContext) -> dict[str, str]:
    """Where the referee put its trace context: the request's `traceparent` header, else the message's metadata."""
    state = context.call_context.state if context.call_context is not None else {}
    headers = {k.lower(): v for k, v in (state.get("headers") or {}).items() if isinstance(v, str)}
    metadata = context.message.metadata if context.message is not None else None
    found = headers.get("traceparent") or (metadata or {}).get("traceparent")
    return {"traceparent": found} if isinstance(found, str) else {}


class TracedExecutor(PurpleExecutor):
    """The shared purple executor, each turn inside a span continued from the referee's trace context."""

    def __init__(self, make_player: PlayerFactory, tracer: Any) -> None:
        super().__init__(make_player)
        self.tracer = tracer

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        from opentelemetry.trace import SpanKind
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        parent = TraceContextTextMapPropagator().extract(carrier(context))
        with self.tracer.start_as_current_span(f"invoke_agent {NAME}", context=parent, kind=SpanKind.SERVER,
                                               attributes={"gen_ai.operation.name": "invoke_agent",
                                                           "gen_ai.agent.name": NAME,
                                                           "gen_ai.conversation.id": context.context_id or ""}):
            await super().execute(context, event_queue)


def build_app(card: AgentCard, make_player: PlayerFactory):  # noqa: ANN201 - a Starlette app
    handler = DefaultRequestHandler(agent_executor=TracedExecutor(make_player, tracer()),
                                    task_store=InMemoryTaskStore())
    return A2AStarletteApplication(agent_card=card, http_handler=handler).build()


def serve(card: AgentCard, make_player: PlayerFactory, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(build_app(card, make_player), host=host, port=port, log_level="warning")
