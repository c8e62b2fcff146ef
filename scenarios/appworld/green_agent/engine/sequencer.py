"""The battle engine: the one sequencer of the 11 steps, driven by the CLI, `eval` and the AgentBeats session.

`Battle` runs one battle over pre-built objects (`engine.config`). The order is `STEPS`:
task_id, setup, scope, task_message, dispatch, wait, archive, metrics, judge, cleanup, report.
The world is closed (step 10) before the result is reported (step 11): posting the result ends
the battle on the AgentBeats backend, which may then reset the Green at once, and result.json
records the cleanup too.

Rules every driver gets:
- every step runs at most once; a repeated call returns the stored output (`repeated: true`), and a
  step first runs, in order, every step before it that has not run (`run_step` is one loop over
  `STEPS`; a driver may call `run_step("report")` straight away);
- a step's wall time goes into `timings` under its name;
- an infrastructure failure in steps 1-8 becomes `status: infra_error` with the failing step named
  and the dead service's fix-it (`diagnose.explain`); steps 3-8 are then skipped, judge, cleanup
  and report still run (the Blue is never charged for it);
- bad input (`BadInputError`: a malformed or unknown task id) skips every step but cleanup; no
  result is written, the observer is told, and `run_battle` raises it to the caller;
- Ctrl-C / SIGTERM: cleanup runs, result.json records an `Interrupted` error, KeyboardInterrupt is re-raised;
- an observer sees each step start and end (the AgentBeats driver posts progress from it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from green_agent.diagnose import explain
from green_agent.engine.config import BattleConfig, BattleDeps
from green_agent.engine.state import BattleState
from green_agent.models.result import BattleResult, ErrorRecord
from green_agent.engine.result_builder import build_result
from green_agent.models.result_assembly import trajectory_summary, write_result
from green_agent.steps.archive import archive, battle_logs, outputs_path
from green_agent.steps.cleanup import cleanup
from green_agent.steps.dispatch import dispatch
from green_agent.steps.judge import judge
from green_agent.steps.metrics import collect_metrics
from green_agent.steps.report import report
from green_agent.steps.scope import account_calls, apply_scope, choose_scope
from green_agent.steps.setup import experiment_name_for, setup_task
from green_agent.steps.task_id import resolve_step
from green_agent.steps.code_message import build_code_message
from green_agent.trajectory.code_metrics import code_metrics, read_executions, sandbox_fault
from green_agent.steps.task_message import build_task_message
from green_agent.steps.wait import await_bridge_report, wait_for_completion
from green_agent.steps.wording import choose_wording
from green_agent.task_check import task_problem
from green_agent.trace import hooks as trace_hooks
from green_agent.trace.otel import hook as otel_hook
from green_agent.trace.battle_trace import BattleTrace
from kernel.call_log_reader import log_marks
from kernel.errors import BadInputError
from kernel.scrubber import register_battle_secrets
from kernel.trace_context import new_context
from kernel.world_secrets import task_secrets
from kernel.untrusted import one_line
from kernel.task_ids import TaskRef

log = logging.getLogger(__name__)

STEPS = ("task_id", "setup", "scope", "task_message", "dispatch", "wait", "archive", "metrics", "judge", "cleanup",
         "report")
"""The one step order: the README, the Green's card, the tools and the progress titles all follow it."""
ALWAYS_RUN = ("judge", "cleanup", "report")
"""Steps that still run after an infrastructure error (the verdict is then a draw)."""

StepOutput = dict[str, Any]


class StepObserver(Protocol):
    """Told about each step (the AgentBeats driver posts progress events from these)."""

    def step_started(self, name: str, battle: "Battle") -> None: ...

    def step_finished(self, name: str, output: StepOutput, battle: "Battle") -> None: ...

    def bad_input(self, message: str, battle: "Battle") -> None: ...


class Battle:
    """One battle: its config, live objects, step outputs and state."""

    def __init__(self, config: BattleConfig, deps: BattleDeps, observer: StepObserver | None = None) -> None:
        self.config, self.deps, self.observer = config, deps, observer
        self.state = BattleState(traceparent=new_context().traceparent)
        self.started = datetime.now(timezone.utc)
        self.outputs: dict[str, StepOutput] = {}
        self.bad_input: str | None = None
        self.bad_input_error: BadInputError | None = None
        self.result: BattleResult | None = None
        self._bodies: dict[str, Callable[[], StepOutput]] = {name: getattr(self, f"_{name}") for name in STEPS}
        self.trace = BattleTrace(config.run_dir, config.battle_id)
        self.world_start: dict[str, int] | None = None

    # -- driving ---------------------------------------------------------------------------------
    def run_step(self, name: str) -> StepOutput:
        """Run step `name` at most once, after every step before it that has not run yet; its output."""
        if name in self.outputs:
            return {**self.outputs[name], "repeated": True}
        for step in STEPS[:STEPS.index(name) + 1]:
            if step in self.outputs or (self.bad_input is not None and step != "cleanup"):
                continue  # done already, or not run after bad input (only cleanup is)
            self.outputs[step] = self._skipped(step) if self._skips(step) else self._execute(step)
        return self.outputs.get(name) or {"ok": False, "step": name, "skipped": True, "error": self.bad_input}

    def run_all(self) -> BattleResult | None:
        """Every step in order; cleanup (and an `Interrupted` result.json) on Ctrl-C. None after bad input."""
        try:
            self.run_step(STEPS[-1])
        except KeyboardInterrupt:
            self._interrupted()
            raise
        return self.result

    finish = run_all
    """Complete whatever is left (finished steps are not rerun)."""

    def build_result(self, finished: bool = False) -> BattleResult:
        """The record so far (see `green_agent.engine.result_builder.build_result`)."""
        config = self.config
        return build_result(self.state, battle_id=config.battle_id, blue=config.choices.blue,
                            interaction=config.choices.interaction or "tools", faults=config.choices.faults,
                            paraphrase=self.state.wording.choice if self.state.wording else None,
                            publish_salt=config.publish_salt,
                            deadline_s=config.choices.deadline_s,
                            run_dir=config.run_dir, appworld_python=self.deps.settings.appworld_python,
                            started=self.started, finished=finished)

    def summary(self) -> StepOutput:
        """The verdict so far (what the AgentBeats tools answer at the end)."""
        result = self.result or self.build_result()
        return {"battle_id": self.config.battle_id, "task_id": result.task_id, "status": result.status,
                "winner": result.winner or "draw", "outcome": result.outcome, "reason": result.reason,
                "run_dir": result.run_dir, "bad_input": self.bad_input}

    # -- the steps -------------------------------------------------------------------------------
    def _task_id(self) -> StepOutput:
        task = self.config.task  # a TaskRef the driver resolved is only recorded; text is resolved here
        self.state.ref = task if isinstance(task, TaskRef) else resolve_step(
            task, self.deps.world, self.config.choices.split, self.deps.client)
        if self.deps.paraphrases is not None:  # a paraphrase arm: chosen before the world is touched (bad input here)
            self.state.wording = choose_wording(self.deps.paraphrases, self.state.ref.task_id, self.config.trial)
            return {**self.state.ref.model_dump(), "paraphrase": self.state.wording.choice.model_dump()}
        return self.state.ref.model_dump()

    def _setup(self) -> StepOutput:
        task_id = self.state.ref.task_id
        # the supervisor's passwords, from the task's data: scrubbed from everything written about this battle
        register_battle_secrets(self.config.battle_id, task_secrets(Path(self.deps.appworld_root) / "data", task_id))
        if self.deps.slot_lock is not None:
            self.deps.slot_lock.acquire()  # never two battles on one world slot (SlotBusyError: infra, not Blue's)
        self.state.initialize_attempted = True
        self.state.setup = setup_task(self.deps.client, task_id, experiment_name_for(self.config.battle_id, task_id),
                                      self.deps.apis_url, self.config.max_interactions)
        self.world_start = trace_hooks.world_start(
            self.trace, outputs_path(self.deps.appworld_root, self.state.setup.experiment_name, task_id))
        task = self.state.setup.task
        if self.state.wording is not None:  # this output is posted on the AgentBeats battle page, which a Blue told
            task = task.model_copy(update={"instruction": self.state.wording.text})  # the backend's URL can read
        return {"task": task.model_dump(), "experiment_name": self.state.setup.experiment_name}

    def _scope(self) -> StepOutput:
        task = self.state.setup.task
        self.state.log_marks = log_marks(self._shared_logs())  # before the gateway is given the battle
        # the ORIGINAL instruction, in every arm: the scope is the referee's, so a paraphrase arm differs from its
        # baseline only in what the agent reads (the task message, show_active_task), never in the APIs it is given
        self.state.scope = choose_scope(task.task_id, task.instruction, self.config.choices.predictor, self.deps.settings,
                                        self.deps.world, self.config.choices.scope_policy)
        self.state.mcp_base_url = apply_scope(self.deps.gateway, self.config.battle_id, task.task_id, self.state.scope,
                                              self.config.choices.launch_url_allowed,
                                              self.config.choices.interaction or "tools", task.datetime,
                                              self.config.choices.faults, self.config.trial,
                                              self.state.wording.text if self.state.wording else None)
        self.state.gateway_set = self.state.mcp_base_url is not None
        self.state.isolation = getattr(self.deps.gateway, "isolation", None)
        scope = self.state.scope
        return {"predictor": scope.predictor, "policy": scope.policy, "apis": scope.apis, "recall": scope.recall,
                "missed_gold": scope.missed_gold, "fallback_reason": scope.fallback_reason,
                "gateway_scoped": self.state.gateway_set}

    def _task_message(self) -> StepOutput:
        task = self.state.setup.task
        if self.state.wording is not None:  # the agent reads only the battle's wording, never the original
            task = task.model_copy(update={"instruction": self.state.wording.text})
        if self.config.choices.interaction == "code":
            self.state.message = build_code_message(task, self.state.scope.apis,
                                                    self.state.mcp_base_url, self.state.scope.policy,
                                                    self.deps.world.api_docs if self.deps.world else None)
        else:
            self.state.message = build_task_message(task, self.state.scope.apis,
                                                    self.state.mcp_base_url, self.state.scope.policy)
        self.trace.task_message(self.state.message.text, self.state.message.tool_names,
                                self.state.wording.choice if self.state.wording else None)
        return {"text": self.state.message.text, "tools": len(self.state.message.tool_names),
                "mcp_url": self.state.message.mcp_url}

    def _dispatch(self) -> StepOutput:
        self.state.handle = dispatch(self.config.blue_url, self.state.message.text, session=self.deps.blue_session,
                                     context_id=self.config.battle_id, bridge=self.config.choices.bridge,
                                     traceparent=self.state.traceparent)
        return self.state.handle.result.model_dump()

    def _wait(self) -> StepOutput:
        config = self.config
        self.state.completion = wait_for_completion(
            self.deps.client, self.state.ref.task_id, config.battle_id, config.choices.deadline_s, self.deps.gateway,
            self.state.handle, authority_every_s=config.authority_every_s, fallback_poll_s=config.fallback_poll_s,
            reply_grace_s=config.choices.reply_grace_s)
        if config.choices.bridge:
            self.state.completion = await_bridge_report(self.state.handle, self.state.completion,
                                                        config.choices.reply_grace_s)
        trace_hooks.blue_reply(self.trace, self.state.handle)
        if self.state.gateway_set:  # the episode ends here: later calls are refused before the state is persisted
            # (in code mode, once completed, after the execution that completed the task ended: AppWorld's step)
            self.state.episode = self.deps.gateway.end_episode(config.battle_id, self.state.completion.completed)
            if not self.state.episode.drained:
                self.state.report_problems.append(
                    f"{self.state.episode.in_flight} call(s) of the Blue were still in flight when the gateway "
                    "stopped waiting for them after its episode ended; the archived trajectory may miss them")
        return self.state.completion.model_dump()

    def _archive(self) -> StepOutput:
        state = self.state
        state.archive = archive(self.deps.client, state.ref.task_id, state.setup.experiment_name,
                                self.deps.appworld_root, self.config.run_dir,
                                self.deps.call_log_path if self.deps.gateway else None, self.config.battle_id,
                                state.log_marks)
        if state.archive.call_log_problem:
            state.report_problems.append(state.archive.call_log_problem)
        trace_hooks.gather_battle(self.trace, self.deps.call_log_path if self.deps.gateway else None, state.archive,
                                  state.log_marks)
        return state.archive.model_dump(mode="json")

    def _metrics(self) -> StepOutput:
        state = self.state
        call_log = Path(state.archive.call_log) if state.archive.call_log else None
        state.metrics = collect_metrics(self.deps.client, state.ref.task_id, self.config.battle_id, call_log,
                                        state.scope.gold_apis, state.scope.apis, paginated_apis(self.deps.world),
                                        state.archive.call_log_problem)
        if state.metrics.trajectory is not None and state.archive.executions_log:
            records = read_executions(Path(state.archive.executions_log), self.config.battle_id)
            state.metrics.trajectory.code = code_metrics(records)
            # our sandbox failed (not ready, or died with no sign of a limit): infra_error, never the agent's loss
            state.metrics.upstream_fault = (state.metrics.upstream_fault
                                            or sandbox_fault(state.metrics.trajectory.code))
        state.scope = account_calls(state.scope, state.metrics.trajectory)
        evaluation = state.metrics.evaluation
        trajectory = state.metrics.trajectory
        return {"success": evaluation.success, "tests_passed": len(evaluation.passes),
                "tests_failed": len(evaluation.failures), "total_tests": evaluation.num_tests,
                "difficulty": evaluation.difficulty,
                "trajectory": trajectory_summary(trajectory),
                "trajectory_error": state.metrics.trajectory_error}

    def _judge(self) -> StepOutput:
        state = self.state
        metrics = state.metrics
        state.judgement = judge(metrics.evaluation if metrics else None,
                                bool(state.completion and state.completion.completed), state.error is not None,
                                metrics.upstream_fault if metrics else None,
                                state.scope.refused_gold if state.scope else None,
                                state.completion.blue_fault if state.completion else None)
        return state.judgement.model_dump()

    def _cleanup(self) -> StepOutput:
        state, deps = self.state, self.deps
        try:
            state.cleanup = cleanup(deps.client, state.ref.task_id if state.ref else None, state.setup is not None,
                                    state.initialize_attempted, deps.gateway, state.gateway_set)
        finally:
            if deps.slot_lock is not None:
                deps.slot_lock.release()
        if state.cleanup.errors:
            state.cleanup.errors = [explain(e, self._services()) for e in state.cleanup.errors]
        return state.cleanup.model_dump()

    def _report(self) -> StepOutput:
        """Hand the finished record to the reporters, then write result.json (with any reporting problem in it)."""
        started = time.perf_counter()
        if self.deps.reporters:  # the record is built for them; result.json's is built below, with this step's time
            self.state.report_problems += report(self.build_result(finished=True), self.deps.reporters)
        self.state.timings["report"] = round(time.perf_counter() - started, 4)  # result.json is written inside the step
        self.result = self.build_result(finished=True)
        trace_hooks.blue_reply(self.trace, self.state.handle)  # a reply that came after the wait
        problem = trace_hooks.finish(self.trace, self.result, self.world_start,
                                     self.deps.call_log_path if self.deps.gateway else None, self.state.log_marks)
        if problem:
            self.result.report_problems.append(problem)
        path = write_result(self.result, self.config.run_dir)
        otel_hook.battle_ended(self.config.run_dir)  # OTEL_EXPORTER_OTLP_ENDPOINT set: its spans, queued; else nothing
        return {"problems": list(self.state.report_problems), "winner": self.result.winner or "draw",
                "result_file": str(path)}

    # -- machinery -------------------------------------------------------------------------------
    def _skips(self, name: str) -> bool:
        """After an infrastructure error only judge, cleanup and report run."""
        return self.state.error is not None and name not in ALWAYS_RUN

    def _skipped(self, name: str) -> StepOutput:
        return {"ok": False, "step": name, "skipped": True,
                "error": f"skipped after an infrastructure error in step {self.state.error.step}"}

    def _execute(self, name: str) -> StepOutput:
        if self.observer:
            self.observer.step_started(name, self)
        try:
            with timed_step(self.state, name):
                output = {"ok": True, "step": name, **self._bodies[name]()}
        except BadInputError as exc:
            self.bad_input, self.bad_input_error = str(exc), exc
            if self.observer:
                self.observer.bad_input(self.bad_input, self)
            return {"ok": False, "step": name, "error": self.bad_input}
        except Exception as exc:  # infrastructure: recorded, the Blue is never charged
            output = {"ok": False, "step": name, "error": self._record_failure(name, exc)}
        if self.observer:
            self.observer.step_finished(name, output, self)
        return output

    def _record_failure(self, name: str, exc: Exception) -> str:
        message = explain(str(exc), self._services())  # the symptom's service may not be the dead one
        broken = task_problem(self.deps.world, self.state.ref.task_id) if self.deps.world and self.state.ref else None
        if broken:  # AppWorld's answer to a damaged task folder hides the cause; name it first
            message = f"{broken} ({message})"
        log.error("battle %s: step %s failed: %s", self.config.battle_id, name, one_line(message, 2000),
                  exc_info=not hasattr(exc, "exit_code"))  # one line: the message may quote what a Blue sent
        if self.state.error is None:
            self.state.error = ErrorRecord(type=type(exc).__name__, message=message[:2000], step=name)
        return f"{type(exc).__name__}: {message[:500]}"

    def _interrupted(self) -> None:
        """Ctrl-C / SIGTERM: close the world, record why the battle has no verdict, write result.json."""
        state = self.state
        state.judgement = None
        state.error = ErrorRecord(type="Interrupted", step=state.step, message=(
            f"the run was interrupted (Ctrl-C or SIGTERM) during step {state.step}; the battle is not scored"))
        if "cleanup" not in self.outputs:
            self.outputs["cleanup"] = self._execute("cleanup")
        self.result = self.build_result(finished=True)
        write_result(self.result, self.config.run_dir)

    def _shared_logs(self) -> list[Path]:
        """The logs the gateway (and a bridge) share between battles, which the archive and the trace read."""
        call_log = self.deps.call_log_path if self.deps.gateway else None
        return battle_logs(Path(call_log)) + trace_hooks.trace_sources(Path(call_log)) if call_log else []

    def _services(self) -> dict[str, str | None]:
        deps = self.deps
        return {"AppWorld env server": deps.client.base_url, "AppWorld APIs server": deps.apis_url,
                "MCP gateway": deps.gateway.base_url if deps.gateway else None}


def run_battle(config: BattleConfig, deps: BattleDeps, observer: StepObserver | None = None) -> BattleResult:
    """Run one battle end to end and write `<run_dir>/result.json`. Raises BadInputError only (after cleanup)."""
    battle = Battle(config, deps, observer)
    result = battle.run_all()
    if battle.bad_input_error is not None:
        raise battle.bad_input_error
    return result


@contextmanager
def timed_step(state: BattleState, name: str) -> Iterator[None]:
    state.step = name
    started = time.perf_counter()
    try:
        yield
    finally:
        state.timings[name] = round(time.perf_counter() - started, 4)


def paginated_apis(world: Any) -> list[str] | None:
    if world is None:
        return None
    try:
        return world.paginated_apis()
    except Exception:
        return None
