"""The assessment server: today's AgentBeats platform talks to the Green here (a2a-sdk 0.3, streaming).

`build_app(card_url, settings)` is the a2a-sdk app that `card_first.serve` hands over to once built (the
card is answered before, from the same data: `green_agent.a2a.card`); the heavy part (the batch layer's
imports, the world check, the versions) warms up in a thread meanwhile, and a request waits for it.

One request = one A2A task (`AssessmentExecutor.execute`), thin over `green_agent.a2a.assessment`:
- bad input (not JSON, no participant, unknown key, unknown task id, shard out of range, a participant
  URL naming one of our own services, the purple's card not fetchable or over its size limit) -> `rejected` with one sentence naming the field, before any world starts;
- otherwise `working` updates: the start (task count, shard), one per finished battle (task id,
  outcome, running TGC), and a heartbeat every `heartbeat_s` while battles run;
- the end: `completed` with one artifact (a plain-text summary and one DataPart of `AssessmentData`),
  or `failed` with the reason when our side cannot run the assessment at all.
Assessments run one at a time (they share the machine's world slots); a second one waits its turn.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from typing import Any

import httpx
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCard, DataPart, Part, TaskState, TextPart
from a2a.utils import new_agent_text_message, new_task

from green_agent.a2a.card import card_data
from green_agent.a2a.own_services import refuse_own_services
from green_agent.a2a.purple_http import PurpleBytesRefused, bounded_client, fetch_card
from green_agent.a2a.request import Assessment, RequestError, parse_request
from kernel.errors import GreenError
from kernel.settings import Settings

log = logging.getLogger(__name__)

DEFAULT_PORT = 9009
HEARTBEAT_S = 30.0
CARD_TIMEOUT_S = 10.0


def green_card(url: str) -> AgentCard:
    """The Green's agent card: `card_data(url)` as a2a-sdk's model (absolute `url`, streaming, one skill)."""
    return AgentCard.model_validate(card_data(url))


class WarmUp:
    """The heavy set-up, run once in a thread (started with the a2a-sdk app, after the card is up); `wait()` returns its error or None."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.done = threading.Event()
        self.error: str | None = None
        threading.Thread(target=self._run, name="green-warm-up", daemon=True).start()

    def _run(self) -> None:
        try:
            from green_agent.a2a import assessment  # noqa: F401 - the batch layer's imports, paid once here
            from kernel.world_data import WorldData

            WorldData(self.settings.appworld_root).require()
            assessment.versions(self.settings)
        except GreenError as exc:
            self.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - reported to each request as `failed`
            log.exception("warm-up failed")
            self.error = f"the Green could not start: {type(exc).__name__}: {exc}"
        finally:
            self.done.set()

    async def wait(self) -> str | None:
        await asyncio.to_thread(self.done.wait)
        return self.error


class AssessmentExecutor(AgentExecutor):
    """Maps one request to one A2A task (see the module docstring)."""

    def __init__(self, settings: Settings, warm_up: WarmUp, heartbeat_s: float = HEARTBEAT_S,
                 slot_specs: list[Any] | None = None) -> None:
        self.settings, self.warm_up, self.heartbeat_s, self.slot_specs = settings, warm_up, heartbeat_s, slot_specs
        self.one_at_a_time = asyncio.Lock()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def say(text: str) -> Any:
            return new_agent_text_message(text, task.context_id, task.id)

        try:
            assessment = parse_request(request_text(context))
            problem = await self.warm_up.wait()
            if problem:
                await updater.failed(say(f"the assessment cannot run: {problem}"))
                return
            from green_agent.a2a.assessment import plan_shard

            plan_shard(assessment, self.settings)
            refuse_own_services(assessment.purple_url, assessment.role, self.slot_specs)
            await check_card(assessment)
        except RequestError as exc:
            await updater.reject(say(str(exc)))
            return
        except GreenError as exc:
            await updater.failed(say(f"the assessment cannot run: {exc}"))
            return
        await updater.start_work(say("accepted; waiting for the world slots" if self.one_at_a_time.locked()
                                     else "accepted"))
        async with self.one_at_a_time:
            await self._run(assessment, updater, say)

    async def _run(self, assessment: Assessment, updater: TaskUpdater, say: Any) -> None:
        from green_agent.a2a.artifact import summary_text
        from green_agent.a2a.assessment import run_assessment

        loop = asyncio.get_running_loop()
        updates: asyncio.Queue[str] = asyncio.Queue()
        events = _Events(lambda text: loop.call_soon_threadsafe(updates.put_nowait, text))
        work = asyncio.ensure_future(asyncio.to_thread(run_assessment, assessment, self.settings, events,
                                                       slot_specs=self.slot_specs))
        started = time.monotonic()
        while not work.done():
            getter = asyncio.ensure_future(updates.get())
            await asyncio.wait({work, getter}, timeout=self.heartbeat_s, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                text = getter.result()
            else:
                getter.cancel()
                if work.done():
                    break
                text = f"working: {events.progress()}, {time.monotonic() - started:.0f} s elapsed"
            await updater.update_status(TaskState.working, say(text))
        while not updates.empty():
            await updater.update_status(TaskState.working, say(updates.get_nowait()))
        try:
            data = work.result()
        except GreenError as exc:
            await updater.failed(say(f"the assessment could not run: {exc}"))
            return
        except Exception as exc:  # noqa: BLE001 - our own failure: `failed`, with the reason
            log.exception("assessment failed")
            await updater.failed(say(f"the assessment could not run: {type(exc).__name__}: {exc}"))
            return
        await updater.add_artifact([Part(root=TextPart(text=summary_text(data))),
                                    Part(root=DataPart(data=data.model_dump(mode="json")))], name="appworld_results")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("an assessment cannot be cancelled; stop the server to stop it")


class _Events:
    """Turns the assessment's events into status texts (called from worker threads)."""

    def __init__(self, post: Any) -> None:
        self.post, self.total, self.done, self.passed = post, 0, 0, 0

    def started(self, task_ids: list[str], shard: Any) -> None:
        self.total = len(task_ids)
        self.post(f"assessment started: {len(task_ids)} task(s), shard {shard.index + 1} of {shard.count} "
                  f"({shard.task_set_size} task(s) in the whole set)")

    def finished(self, result: Any, done: int, passed: int) -> None:
        self.done, self.passed = done, passed
        self.post(f"task {result.task_id}: {result.outcome}; {done}/{self.total} done, running TGC "
                  f"{100.0 * passed / done:.1f}")

    def progress(self) -> str:
        return f"{self.done}/{self.total} task(s) done"


def request_text(context: RequestContext) -> str:
    """The request: the message's text, or its first DataPart as JSON."""
    text = context.get_user_input()
    if text.strip():
        return text
    for part in (context.message.parts if context.message else []):
        if isinstance(part.root, DataPart):
            return json.dumps(part.root.data)
    return text


async def check_card(assessment: Assessment) -> None:
    """The purple's agent card answers (read within `MAX_CARD_BYTES`); else RequestError naming the participant."""
    http, _ = bounded_client(httpx.Timeout(CARD_TIMEOUT_S), assessment.purple_auth)
    async with http:
        try:
            await fetch_card(http, assessment.purple_url)
        except PurpleBytesRefused as exc:
            raise RequestError(f"participants.{assessment.role}: {exc}") from None
        except ValueError as exc:
            raise RequestError(f"participants.{assessment.role}: {exc}") from None
        except httpx.HTTPError as exc:
            raise RequestError(f"participants.{assessment.role}: no agent card at {assessment.purple_url} "
                               f"({type(exc).__name__}); is the agent running?") from None


def build_app(card_url: str, settings: Settings, heartbeat_s: float = HEARTBEAT_S,
              slot_specs: list[Any] | None = None):  # noqa: ANN201
    """The a2a-sdk Starlette app (card at CARD_PATHS, JSON-RPC at /); starts the warm-up thread."""
    executor = AssessmentExecutor(settings, WarmUp(settings), heartbeat_s, slot_specs)
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore())
    return A2AStarletteApplication(agent_card=green_card(card_url), http_handler=handler).build()
