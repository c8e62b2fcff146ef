"""The bridge as an A2A server: the engine dispatches a battle's task message to it like to any Blue.

`python -m green_agent.a2a.bridge.server --port P --purple URL [--max-steps N] [--turn-timeout S]
[--deadline S] [--trace-log FILE]` serves one assessment (the purple's HTTP Basic credentials, if its
participant URL had any, come in the environment variable `APPWORLD_PURPLE_AUTH`, never on the command line): each `message/send` (one battle; several at once with
`workers` > 1) runs `conversation.converse` with the purple and ends its A2A task with two parts, a
one-line TextPart and a DataPart `{"bridge_report": BridgeReport}`; the task ends `failed` when the
fault is ours (`fault_owner: green`), `completed` otherwise. With `--trace-log`, each conversation's messages
are appended there under the battle's id, the context id the engine sends the task in (`bridge.trace`),
scrubbed of the secret values the engine's message carried for the battle (`SECRETS_KEY`, `kernel.scrubber`).

Why a process of its own, started by the assessment (not a thread of the assessment server): it is
the Green's code that reads a hostile purple's replies, and a purple that makes it misbehave (memory,
a stuck loop) takes down this process, which the slot's cleanup stops, not the assessment server.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentSkill, DataPart, Message, Part, TextPart
from a2a.utils import new_agent_text_message, new_task

from green_agent import __version__
from green_agent.a2a.purple_http import AUTH_ENV, auth_from_env
from green_agent.a2a.bridge.conversation import DEFAULT_MAX_STEPS, DEFAULT_TURN_TIMEOUT_S, Limits, converse
from green_agent.a2a.bridge.trace import BridgeTrace
from green_agent.models.bridge import REPORT_KEY, SECRETS_KEY
from kernel.a2a_tools import PROTOCOL
from kernel.trace_context import TRACEPARENT_HEADER, parse_traceparent
from kernel.process_exit import exit_without_teardown
from kernel.scrubber import register_battle_secrets, register_secrets

log = logging.getLogger(__name__)
NAME = "AppWorld in-band bridge"


class BridgeExecutor(AgentExecutor):
    """One conversation per incoming message; the report is the task's artifact."""

    def __init__(self, purple_url: str, limits: Limits, auth: tuple[str, str] | None = None,
                 trace_log: Path | None = None) -> None:
        self.purple_url, self.limits, self.auth, self.trace_log = purple_url, limits, auth, trace_log

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        register_battle_secrets(task.context_id, given_secrets(context.message))
        trace = BridgeTrace(self.trace_log, task.context_id)
        report = await converse(context.get_user_input(), self.purple_url, self.limits, self.auth, trace,
                                given_traceparent(context.message))
        trace.ended(report)
        log.info("conversation %s ended by %s (fault: %s) after %d step(s)", report.context_id, report.ended_by,
                 report.fault_owner, report.steps)
        await updater.add_artifact([Part(root=TextPart(text=report.message)),
                                    Part(root=DataPart(data={REPORT_KEY: report.model_dump(mode="json")}))],
                                   name="bridge_report")
        if report.fault_owner == "green":
            await updater.failed(new_agent_text_message(report.message, task.context_id, task.id))
        else:
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("the bridge does not cancel conversations")


def given_secrets(message: Message | None) -> list[str]:
    """The battle's secret values the engine's message carried (a DataPart under `SECRETS_KEY`)."""
    for part in message.parts if message is not None else []:
        data = part.root.data if isinstance(part.root, DataPart) else None
        values = data.get(SECRETS_KEY) if isinstance(data, dict) else None
        if isinstance(values, list):
            return [v for v in values if isinstance(v, str)]
    return []


def given_traceparent(message: Message | None) -> str | None:
    """The battle's W3C trace context the engine's message carried in its metadata (a valid `traceparent`, or None)."""
    metadata = message.metadata if message is not None else None
    value = metadata.get(TRACEPARENT_HEADER) if isinstance(metadata, dict) else None
    context = parse_traceparent(value)
    return context.traceparent if context is not None else None


def bridge_card(url: str) -> AgentCard:
    return AgentCard(
        name=NAME, description=f"The Green's built-in Blue: plays a battle with a purple over {PROTOCOL}.",
        url=url, version=__version__, capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["text"], default_output_modes=["text", "data"],
        skills=[AgentSkill(id="bridge", name=NAME, description="in-band tool bridge", tags=["appworld"])])


def build_app(url: str, purple_url: str, limits: Limits, auth: tuple[str, str] | None = None,  # noqa: ANN201
              trace_log: Path | None = None):
    """The bridge's a2a-sdk Starlette app."""
    handler = DefaultRequestHandler(agent_executor=BridgeExecutor(purple_url, limits, auth, trace_log),
                                    task_store=InMemoryTaskStore())
    return A2AStarletteApplication(agent_card=bridge_card(url), http_handler=handler).build()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m green_agent.a2a.bridge.server", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--purple", required=True, help="the purple's A2A URL")
    parser.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS)
    parser.add_argument("--turn-timeout", type=float, default=DEFAULT_TURN_TIMEOUT_S)
    parser.add_argument("--deadline", type=float, default=20 * 60.0)
    parser.add_argument("--trace-log", type=Path, default=None, help="append each conversation's messages here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("a2a").setLevel(logging.WARNING)  # a2a-sdk logs what it receives (a whole card) at INFO
    logging.getLogger("httpx").setLevel(logging.WARNING)
    auth = auth_from_env(os.environ.pop(AUTH_ENV, None))
    register_secrets(auth or ())
    limits = Limits(max_steps=args.max_steps, turn_timeout_s=args.turn_timeout, deadline_s=args.deadline)
    app = build_app(f"http://{args.host}:{args.port}/", args.purple, limits, auth, args.trace_log)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    exit_without_teardown(0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
