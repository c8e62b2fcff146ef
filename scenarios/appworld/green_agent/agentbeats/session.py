"""Per-battle state for the AgentBeats path: one `BattleSession` per battle id, one method per step.

The tools file calls these methods (thin adapters); the deterministic mode calls `run_all()`.
Both run the core's step functions over the same `BattleConfig`/`BattleDeps`, so a battle's record
is the one `appworld-green battle` writes. One difference of order: the world is closed (step 10)
before the result is posted (step 11). Posting the result ends the battle on the backend, which may
then reset (kill) the Green for the next battle at once; nothing may be left to do by then. The
posted record therefore also tells whether cleanup succeeded.

Robust against a model that retries, skips or reorders tools:
- every step runs at most once; a repeated call returns the stored output (`repeated: true`), so
  the task is never sent to Blue twice, the world never evaluated twice, the result never posted twice;
- a step first runs the steps it depends on (calling `report_battle_result` first runs the plan);
- after an infrastructure error, steps 3-8 are skipped; judge, report and cleanup still run
  (status `infra_error`, winner `draw` on the backend: Blue is not charged);
- `finish()` (run by the executor hook after the model stops) completes whatever is left, so a
  battle always ends with a result posted and the world closed.
Every step up to the wait posts a progress event itself, so the UI shows the plan even if the model
forgets; during the wait the Blue's calls are posted under its name (`blue_feed`); the steps after
it are summarized in the result entry (`result_post.FOLDED_STEPS`), so the page has one group per actor.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from green_agent import plan
from green_agent.agentbeats.blue_feed import BlueFeed, CallLogTail
from green_agent.agentbeats.reporter import BackendReporter
from green_agent.agentbeats.result_post import FOLDED_STEPS
from green_agent.agentbeats.scenario_config import ResolvedConfig
from green_agent.archive import archive
from green_agent.battle import world_data
from green_agent.completion import wait_for_completion
from green_agent.dispatch import dispatch
from green_agent.errors import BadInputError, GreenError
from green_agent.slot_clients import slot_env_client, slot_gateway
from green_agent.http_sessions import session_for
from green_agent.judge import judge
from green_agent.metrics import collect_metrics
from green_agent.models.result import BattleResult, ErrorRecord
from green_agent.settings import Settings
from green_agent.slot import SlotLock, slot_key
from green_agent.steps.cleanup import cleanup
from green_agent.steps.report import report, write_result
from green_agent.steps.scope import account_calls, apply_scope, choose_scope
from green_agent.steps.setup import experiment_name_for, setup_task
from green_agent.task_ids import resolve_task
from green_agent.task_message import build_task_message

log = logging.getLogger(__name__)

TITLES = {
    "task_id": "Step 1/11: task id", "setup": "Step 2/11: AppWorld world initialized",
    "scope": "Step 3/11: required APIs predicted", "task_message": "Step 4/11: task message built",
    "dispatch": "Step 5/11: task sent to Blue", "wait": "Step 6/11: wait for Blue ended",
    "archive": "Step 7/11: world state saved", "metrics": "Step 8/11: evaluation and trajectory",
    "judge": "Step 9/11: judged", "cleanup": "Step 10/11: world closed", "report": "Step 11/11: result reported",
}
ORDER = ("task_id", "setup", "scope", "task_message", "dispatch", "wait", "archive", "metrics", "judge", "cleanup",
         "report")
DEPENDS = {"setup": "task_id", "scope": "setup", "task_message": "scope", "dispatch": "task_message",
           "wait": "dispatch", "archive": "wait", "metrics": "archive", "judge": "metrics", "cleanup": "judge",
           "report": "cleanup"}
AFTER_ERROR = ("judge", "report", "cleanup")
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


def run_dir_name(battle_id: str) -> str:
    """A directory name for a battle id (the backend uses UUIDs; anything else is made safe)."""
    return _SAFE_ID.sub("_", battle_id).lstrip(".")[:120] or "battle"


class BattleSession:
    """One battle's live objects and step outputs."""

    def __init__(self, battle_id: str, resolved: ResolvedConfig, blue_url: str, blue_label: str,
                 reporter: BackendReporter, settings: Settings) -> None:
        self.battle_id = battle_id
        self.resolved = resolved
        self.reporter = reporter
        extra = {"reply_grace_s": resolved.reply_grace_s} if resolved.reply_grace_s else {}
        self.config = plan.BattleConfig(
            battle_id=battle_id, task_config=resolved.task, blue=blue_label, blue_url=blue_url,
            predictor=resolved.predictor, scope_policy=resolved.scope_policy, deadline_s=resolved.deadline_s,
            run_dir=resolved.runs_dir / run_dir_name(battle_id), split=resolved.split,
            launch_url_allowed=True,  # AgentBeats SDK Blues take their MCP URL from scenario.toml at launch
            **extra)
        self.deps = plan.BattleDeps(
            client=slot_env_client(resolved.env_url, resolved.apis_url), apis_url=resolved.apis_url,
            settings=settings, world=world_data(settings), appworld_root=settings.appworld_root,
            gateway=slot_gateway(resolved.gateway_url, resolved.apis_url),
            call_log_path=resolved.call_log_path, blue_session=session_for(blue_url), reporters=[reporter])
        self.state = plan.BattleState()
        self.started = datetime.now(timezone.utc)
        self.outputs: dict[str, dict[str, Any]] = {}
        self.bad_input: str | None = None
        self.result: BattleResult | None = None
        self.slot_lock = SlotLock(settings.runs_dir / ".slot-locks", slot_key(resolved.env_url))
        self._lock = threading.RLock()
        # The Blue's calls, posted under its name while the Green waits (the log is followed from here on).
        self.blue_feed = BlueFeed(CallLogTail(resolved.call_log_path, battle_id),
                                  lambda message, detail, markdown: reporter.progress(message, detail, markdown,
                                                                                      reported_by=blue_label))

    # -- the steps ---------------------------------------------------------------------------
    def task_id(self) -> dict[str, Any]:
        return self._run("task_id", self._task_id)

    def setup(self) -> dict[str, Any]:
        return self._run("setup", self._setup)

    def scope(self) -> dict[str, Any]:
        return self._run("scope", self._scope)

    def task_message(self) -> dict[str, Any]:
        return self._run("task_message", self._task_message)

    def dispatch(self) -> dict[str, Any]:
        return self._run("dispatch", self._dispatch)

    def wait(self) -> dict[str, Any]:
        return self._run("wait", self._wait)

    def archive(self) -> dict[str, Any]:
        return self._run("archive", self._archive)

    def metrics(self) -> dict[str, Any]:
        return self._run("metrics", self._metrics)

    def judge(self) -> dict[str, Any]:
        return self._run("judge", self._judge)

    def report(self) -> dict[str, Any]:
        return self._run("report", self._report)

    def cleanup(self) -> dict[str, Any]:
        return self._run("cleanup", self._cleanup)

    def run_all(self) -> dict[str, Any]:
        """The whole plan (deterministic mode); cleanup runs even on Ctrl-C."""
        try:
            for name in ORDER:
                getattr(self, name)()
        finally:
            with self._lock:  # straight to cleanup: on Ctrl-C the remaining steps must not run
                if "cleanup" not in self.outputs:
                    self.outputs["cleanup"] = self._execute("cleanup", self._cleanup)
        return self.summary()

    finish = run_all
    """Complete whatever is left (idempotent: finished steps are not rerun)."""

    def task_completed(self) -> dict[str, Any]:
        """A cheap look at `/task_completed` (never blocks on the session lock)."""
        ref = self.state.ref
        if ref is None or self.state.setup is None:
            return {"ok": False, "error": "the world is not initialized yet: call setup_appworld_environment first"}
        try:
            return {"ok": True, "task_id": ref.task_id, "completed": self.deps.client.task_completed(ref.task_id)}
        except GreenError as exc:
            return {"ok": False, "error": str(exc)}

    def summary(self) -> dict[str, Any]:
        """Verdict so far: what the tools return at the end."""
        result = self.result or self.build_result()
        return {"battle_id": self.battle_id, "task_id": result.task_id, "status": result.status,
                "winner": result.winner or "draw", "outcome": result.outcome, "reason": result.reason,
                "run_dir": result.run_dir, "bad_input": self.bad_input}

    def build_result(self, finished: bool = False) -> BattleResult:
        return plan.build_result(self.config, self.deps, self.state, self.started, finished=finished)

    # -- step bodies -------------------------------------------------------------------------
    def _task_id(self) -> dict[str, Any]:
        self.state.ref = resolve_task(self.config.task_config, self.deps.world, self.config.split,
                                      lookup=self.deps.client)
        return self.state.ref.model_dump() | {"task_source": self.resolved.task_source}

    def _setup(self) -> dict[str, Any]:
        task_id = self.state.ref.task_id
        self.slot_lock.acquire()  # never two battles on one world slot (SlotBusyError: infra, Blue not charged)
        self.state.initialize_attempted = True
        self.state.setup = setup_task(self.deps.client, task_id, experiment_name_for(self.battle_id, task_id),
                                      self.deps.apis_url, self.config.max_interactions)
        return {"task": self.state.setup.task.model_dump(), "experiment_name": self.state.setup.experiment_name}

    def _scope(self) -> dict[str, Any]:
        task = self.state.setup.task
        self.state.scope = choose_scope(task.task_id, task.instruction, self.config.predictor, self.deps.settings,
                                        self.deps.world, self.config.scope_policy)
        self.state.mcp_base_url = apply_scope(self.deps.gateway, self.battle_id, task.task_id, self.state.scope,
                                              self.config.launch_url_allowed)
        self.state.gateway_set = self.state.mcp_base_url is not None
        scope = self.state.scope
        return {"predictor": scope.predictor, "policy": scope.policy, "apis": scope.apis, "recall": scope.recall,
                "missed_gold": scope.missed_gold,
                "fallback_reason": scope.fallback_reason, "gateway_scoped": self.state.gateway_set}

    def _task_message(self) -> dict[str, Any]:
        self.state.message = build_task_message(self.state.setup.task, self.state.scope.apis, self.state.mcp_base_url,
                                                self.state.scope.policy)
        return {"text": self.state.message.text, "tools": len(self.state.message.tool_names),
                "mcp_url": self.state.message.mcp_url}

    def _dispatch(self) -> dict[str, Any]:
        self.state.handle = dispatch(self.config.blue_url, self.state.message.text, session=self.deps.blue_session,
                                     context_id=self.battle_id)
        return self.state.handle.result.model_dump()

    def _wait(self) -> dict[str, Any]:
        self.reporter.progress(f"Waiting up to {self.config.deadline_s:.0f} s for Blue to call "
                               "supervisor__complete_task", {"deadline_s": self.config.deadline_s})
        self.blue_feed.start()
        try:
            self.state.completion = wait_for_completion(
                self.deps.client, self.state.ref.task_id, self.battle_id, self.config.deadline_s, self.deps.gateway,
                self.state.handle, authority_every_s=self.config.authority_every_s,
                fallback_poll_s=self.config.fallback_poll_s, reply_grace_s=self.config.reply_grace_s)
        finally:
            self.blue_feed.stop()  # the last calls are posted before the Green's next entry
        return self.state.completion.model_dump()

    def _archive(self) -> dict[str, Any]:
        self.state.archive = archive(self.deps.client, self.state.ref.task_id, self.state.setup.experiment_name,
                                     self.deps.appworld_root, self.config.run_dir,
                                     self.deps.call_log_path if self.deps.gateway else None, self.battle_id)
        if self.state.archive.call_log_problem:
            self.state.report_problems.append(self.state.archive.call_log_problem)
        return self.state.archive.model_dump(mode="json")

    def _metrics(self) -> dict[str, Any]:
        call_log = Path(self.state.archive.call_log) if self.state.archive.call_log else None
        self.state.metrics = collect_metrics(self.deps.client, self.state.ref.task_id, self.battle_id, call_log,
                                             self.state.scope.gold_apis, self.state.scope.apis, plan.paginated_apis(self.deps.world),
                                             self.state.archive.call_log_problem)
        self.state.scope = account_calls(self.state.scope, self.state.metrics.trajectory)
        evaluation = self.state.metrics.evaluation
        return {"success": evaluation.success, "tests_passed": len(evaluation.passes),
                "tests_failed": len(evaluation.failures), "total_tests": evaluation.num_tests,
                "difficulty": evaluation.difficulty, "trajectory": _trajectory_summary(self.state.metrics.trajectory),
                "trajectory_error": self.state.metrics.trajectory_error}

    def _judge(self) -> dict[str, Any]:
        metrics = self.state.metrics
        self.state.judgement = judge(metrics.evaluation if metrics else None,
                                     bool(self.state.completion and self.state.completion.completed),
                                     self.state.error is not None, metrics.upstream_fault if metrics else None,
                                     self.state.scope.refused_gold if self.state.scope else None)
        return self.state.judgement.model_dump()

    def _cleanup(self) -> dict[str, Any]:
        ref = self.state.ref
        try:
            self.state.cleanup = cleanup(self.deps.client, ref.task_id if ref else None, self.state.setup is not None,
                                         self.state.initialize_attempted, self.deps.gateway, self.state.gateway_set)
        finally:
            self.slot_lock.release()
        return self.state.cleanup.model_dump()

    def _report(self) -> dict[str, Any]:
        """Post the finished record, then write result.json (with any reporting problem in it)."""
        self.state.report_problems += report(self.build_result(finished=True), self.deps.reporters)
        self.result = self.build_result(finished=True)
        path = write_result(self.result, self.config.run_dir)
        return {"posted": self.reporter.result_posted, "problems": self.state.report_problems,
                "winner": self.state.judgement.winner or "draw", "result_file": str(path)}

    # -- machinery ---------------------------------------------------------------------------
    def _run(self, name: str, body: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        with self._lock:
            if name in self.outputs:
                return {**self.outputs[name], "repeated": True}
            if self.bad_input is not None:
                return {"ok": False, "step": name, "skipped": True, "error": self.bad_input}
            if name in DEPENDS and DEPENDS[name] not in self.outputs:
                getattr(self, DEPENDS[name])()
                if self.bad_input is not None:
                    return {"ok": False, "step": name, "skipped": True, "error": self.bad_input}
            if self.state.error is not None and name not in AFTER_ERROR:
                output = {"ok": False, "step": name, "skipped": True,
                          "error": f"skipped after an infrastructure error in step {self.state.error.step}"}
                self.outputs[name] = output
                return output
            output = self._execute(name, body)
            self.outputs[name] = output
            return output

    def _execute(self, name: str, body: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            with plan.timed_step(self.state, name):
                output = {"ok": True, "step": name, **body()}
        except BadInputError as exc:
            self.bad_input = str(exc)
            self._report_bad_input()
            return {"ok": False, "step": name, "error": self.bad_input}
        except Exception as exc:  # infrastructure: recorded, Blue never charged
            log.error("battle %s: step %s failed: %s", self.battle_id, name, exc, exc_info=not isinstance(exc, GreenError))
            if self.state.error is None:
                self.state.error = ErrorRecord(type=type(exc).__name__, message=str(exc)[:2000], step=name)
            output = {"ok": False, "step": name, "error": f"{type(exc).__name__}: {str(exc)[:500]}"}
            self.reporter.progress(f"{TITLES[name]} FAILED: {type(exc).__name__}", {"error": output["error"]})
            return output
        if name not in FOLDED_STEPS:  # the result entry summarizes the steps after the Blue's actions
            self.reporter.progress(TITLES[name], _progress_detail(name, output))
        return output

    def _report_bad_input(self) -> None:
        try:
            self.reporter.report_unjudged(f"Battle not run: {self.bad_input}",
                                          {"battle_id": self.battle_id, "status": "bad_input",
                                           "task_config": self.config.task_config[:200], "error": self.bad_input})
        except GreenError as exc:
            log.warning("could not report the bad input to the backend: %s", exc)


def _trajectory_summary(trajectory: dict[str, Any] | None) -> dict[str, Any] | None:
    if not trajectory:
        return None
    keys = ("total_calls", "successful_calls", "failed_calls", "error_rate", "avg_duration_ms", "unique_tools",
            "retry_count", "out_of_scope_calls", "pagination_sequences", "api_recall", "api_precision", "api_f1",
            "calls_per_tool")
    return {k: trajectory[k] for k in keys if k in trajectory}


def _progress_detail(name: str, output: dict[str, Any]) -> dict[str, Any]:
    """What the UI shows under a step (the task message text is long: only its size)."""
    if name == "task_message":
        return {k: v for k, v in output.items() if k != "text"} | {"chars": len(output.get("text", ""))}
    if name == "scope" and isinstance(output.get("apis"), list):
        return output | {"apis": output["apis"][:40]}
    return output


def to_json(value: Any) -> str:
    """Tool return value: compact JSON text."""
    return json.dumps(value, default=str, ensure_ascii=False)
