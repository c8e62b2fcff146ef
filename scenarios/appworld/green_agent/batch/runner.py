"""The batch layer: a pool of N world slots, one battle per slot at a time, bounded infra retries.

Contract:
- Each worker thread owns one slot (a world slot plus its Blue), started once, on first use, and
  reused for every task the worker takes from the shared queue; two battles never share a slot.
- A battle whose result is `infra_error` is retried up to `max_infra_retries` times, the slot being
  restarted first (a fresh world, gateway and Blue). A slot that fails to start yields an
  `infra_error` result for the battle at hand (step `slot`), retried the same way.
- Every attempt has its own battle id, numbered over the run directory's history (a resume continues
  the count; see `green_agent.batch.attempts`), writes its own `result.json` (the battle engine does,
  atomically) and start/finish lines in `events.jsonl`; the previous attempt's files are set aside
  in `attempts/<battle id>/`. The runner hands finished results to `on_result` from the calling thread.
- Ctrl-C / SIGTERM (KeyboardInterrupt in the calling thread): no new battle starts, every slot is
  stopped (which ends in-flight battles quickly), worker threads are joined, and `run` returns with
  `interrupted=True`. Results already written stay; an interrupted battle's result (if any) is an
  infra error of type `Interrupted` (with the step it reached) and is rerun by a resume.

The slot factory and the battle function are injected: the real ones are in `green_agent.batch.live`,
tests pass fakes.
"""

from __future__ import annotations

import logging
import queue
import signal
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from green_agent.batch.attempts import battle_id_for, mark_interrupted, prior_attempts, set_aside
from green_agent.batch.checkpoint import BattleKey, append_event, battle_dir
from kernel.errors import BadInputError
from green_agent.models.result import BattleResult, ErrorRecord
from green_agent.models.result_assembly import collect_versions, write_result

log = logging.getLogger(__name__)

JOIN_TIMEOUT_S = 60.0
POLL_S = 0.2

SlotFactory = Callable[[int], AbstractContextManager[Any]]
"""worker index -> a context manager that starts a slot (and its Blue) and yields what battles need."""
BattleFn = Callable[[BattleKey, Any, Path, str], BattleResult]
"""(key, live slot, battle dir, battle id) -> the judged or infra_error result (written to the dir)."""


class SlotClosedError(Exception):
    """The slot was shut down (the run is stopping)."""


class LiveSlot:
    """A slot started lazily, restartable, and shut down from any thread."""

    def __init__(self, factory: SlotFactory, index: int) -> None:
        self.factory = factory
        self.index = index
        self._stack: ExitStack | None = None
        self._value: Any = None
        self._lock = threading.Lock()
        self._closed = False

    def ensure(self) -> Any:
        """The running slot, started if needed. Raises SlotClosedError after `shutdown`."""
        with self._lock:
            if self._closed:
                raise SlotClosedError()
            if self._stack is None:
                stack = ExitStack()
                try:
                    self._value = stack.enter_context(self.factory(self.index))
                except BaseException:
                    stack.close()
                    raise
                if self._closed:  # shut down while we were starting: undo the start
                    stack.close()
                    raise SlotClosedError()
                self._stack = stack
            return self._value

    def stop(self) -> None:
        """Stop the slot's processes (a later `ensure` starts them again)."""
        with self._lock:
            self._stop_locked()

    def _stop_locked(self) -> None:
        stack, self._stack, self._value = self._stack, None, None
        if stack is not None:
            try:
                stack.close()
            except Exception as exc:
                log.warning("slot %d: stop failed: %s", self.index, exc)

    def shutdown(self, wait_s: float = 1.0) -> None:
        """Refuse further starts and stop now; if a start is under way, its worker stops it when done."""
        self._closed = True
        if self._lock.acquire(timeout=wait_s):
            try:
                self._stop_locked()
            finally:
                self._lock.release()


@dataclass
class BatchOutcome:
    """What `BatchRunner.run` returns."""

    results: dict[BattleKey, BattleResult] = field(default_factory=dict)
    interrupted: bool = False


class BatchRunner:
    """Run battles for `keys` on `workers` slots; see the module docstring for the contract."""

    def __init__(self, *, out: Path, keys: list[BattleKey], trials: int, run_id: str, blue: str, workers: int,
                 slot_factory: SlotFactory, battle_fn: BattleFn, max_infra_retries: int = 2,
                 on_result: Callable[[BattleKey, BattleResult], None] | None = None,
                 on_start: Callable[[BattleKey], None] | None = None) -> None:
        self.out, self.trials, self.run_id, self.blue = Path(out), trials, run_id, blue
        self.battle_fn, self.max_infra_retries = battle_fn, max_infra_retries
        self.on_result, self.on_start = on_result, on_start
        self.slots = [LiveSlot(slot_factory, i) for i in range(max(1, min(workers, len(keys) or 1)))]
        self.todo: queue.SimpleQueue[BattleKey] = queue.SimpleQueue()
        for key in keys:
            self.todo.put(key)
        self.events: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.stopping = threading.Event()
        self.prior = prior_attempts(self.out)

    def run(self) -> BatchOutcome:
        """Run every battle; returns when all are done or the run was interrupted."""
        outcome = BatchOutcome()
        threads = [threading.Thread(target=self._worker, args=(slot,), name=f"slot-{slot.index}")
                   for slot in self.slots]
        for thread in threads:
            thread.start()
        try:
            self._collect(threads, outcome)
        except KeyboardInterrupt:
            outcome.interrupted = True
            log.warning("interrupted: stopping %d slot(s); finished results are kept", len(self.slots))
        finally:
            with _sigint_ignored():
                self._shutdown(threads)
        self._drain(outcome)
        return outcome

    def _collect(self, threads: list[threading.Thread], outcome: BatchOutcome) -> None:
        while any(t.is_alive() for t in threads) or not self.events.empty():
            try:
                kind, payload = self.events.get(timeout=POLL_S)
            except queue.Empty:
                continue
            self._handle(kind, payload, outcome)

    def _drain(self, outcome: BatchOutcome) -> None:
        """Record results that finished during the shutdown (no callbacks: the run is over)."""
        while not self.events.empty():
            kind, payload = self.events.get()
            if kind == "result":
                key, result = payload
                outcome.results[key] = result

    def _handle(self, kind: str, payload: Any, outcome: BatchOutcome) -> None:
        if kind == "error":
            raise payload
        if kind == "start":
            if self.on_start:
                self.on_start(payload)
            return
        key, result = payload
        outcome.results[key] = result
        if self.on_result:
            self.on_result(key, result)

    def _shutdown(self, threads: list[threading.Thread]) -> None:
        self.stopping.set()
        for slot in self.slots:
            slot.shutdown()
        for thread in threads:
            thread.join(timeout=JOIN_TIMEOUT_S)

    def _worker(self, slot: LiveSlot) -> None:
        try:
            while not self.stopping.is_set():
                try:
                    key = self.todo.get_nowait()
                except queue.Empty:
                    break
                result = self._battle(slot, key)
                if result is not None:
                    self.events.put(("result", (key, result)))
        except SlotClosedError:
            pass
        except BaseException as exc:  # bad input or a bug: stop the run and re-raise in the caller
            self.stopping.set()
            self.events.put(("error", exc))
        finally:
            slot.shutdown(wait_s=JOIN_TIMEOUT_S)

    def _battle(self, slot: LiveSlot, key: BattleKey) -> BattleResult | None:
        """All attempts of one battle; None if the run stopped before it was judged."""
        directory = battle_dir(self.out, key, self.trials)
        result: BattleResult | None = None
        before = self.prior.get(key, 0)
        for attempt in range(before + 1, before + self.max_infra_retries + 2):
            if self.stopping.is_set():
                return None
            battle_id = battle_id_for(self.run_id, key, attempt)
            set_aside(directory)
            self.events.put(("start", key))
            append_event(self.out, "start", key, battle_id=battle_id, attempt=attempt, slot=slot.index)
            result = self._attempt(slot, key, directory, battle_id)
            append_event(self.out, "finish", key, battle_id=battle_id, attempt=attempt, slot=slot.index,
                         status=result.status, outcome=result.outcome)
            if result.status != "infra_error":
                return result
            if self.stopping.is_set():
                mark_interrupted(result, directory)
                return None
            log.warning("battle %s: infra error in step %s (%s); %s", battle_id, result.error.step if result.error
                        else "?", result.reason, "restarting the slot" if attempt <= before + self.max_infra_retries
                        else "giving up")
            slot.stop()
        return result

    def _attempt(self, slot: LiveSlot, key: BattleKey, directory: Path, battle_id: str) -> BattleResult:
        started = datetime.now(timezone.utc)
        try:
            live = slot.ensure()
        except SlotClosedError:
            raise
        except BadInputError:
            raise
        except Exception as exc:
            return self._infra_result(key, directory, battle_id, started, exc, "slot")
        try:
            return self.battle_fn(key, live, directory, battle_id)
        except BadInputError:
            raise
        except Exception as exc:
            log.exception("battle %s crashed", battle_id)
            return self._infra_result(key, directory, battle_id, started, exc, "battle")

    def _infra_result(self, key: BattleKey, directory: Path, battle_id: str, started: datetime, exc: Exception,
                      step: str) -> BattleResult:
        result = BattleResult(
            battle_id=battle_id, task_id=key.task_id, blue=self.blue, status="infra_error", winner=None,
            outcome="infra_error", reason=f"{type(exc).__name__}: {str(exc)[:300]}",
            error=ErrorRecord(type=type(exc).__name__, message=str(exc)[:2000], step=step),
            versions=collect_versions(None), run_dir=str(directory), started_at=started,
            finished_at=datetime.now(timezone.utc))
        write_result(result, directory)
        return result


class _sigint_ignored:
    """Ignore further Ctrl-C while the pool shuts down (main thread only; a no-op elsewhere)."""

    def __enter__(self) -> None:
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, signal.SIG_IGN)

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
