"""The AgentBeats driver of the battle engine: one `BattleSession` per battle id.

What is AgentBeats' own lives here; the battle itself is `engine.sequencer.Battle`, the same
engine `appworld-green battle` and `eval` drive, so a battle's record is the one they write:
- the tools file calls one step per tool (`run_step`); the deterministic mode calls `run_all()`;
  the engine makes the model's retries, skips and reorderings harmless (every step at most once, a
  step runs the ones it depends on first, after an infrastructure error only judge, cleanup and
  report run, and `finish()` completes whatever the model left);
- `BackendProgress` posts a progress event for every step up to the wait (so the UI shows the plan
  even if the model forgets), the Blue's calls under its name during the wait (`blue_feed`; in code
  mode its executions with their calls, `code_feed`), and reports a bad input as an unjudged battle;
  the steps after the wait post nothing when they succeed (`result_post.FOLDED_STEPS`: the result
  entry summarizes them), so the page has one group per actor;
- the world slot named in scenario.toml is locked in the machine-wide lock directory from setup
  to cleanup, the same lock every CLI and `eval` battle takes (never two battles on one slot).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from typing import Any

from green_agent.agentbeats.blue_feed import BlueFeed
from green_agent.agentbeats.code_feed import CodeFeed, trace_feed
from kernel.call_log_reader import CallLogTail
from green_agent.agentbeats.reporter import BackendReporter
from green_agent.agentbeats.result_post import FOLDED_STEPS
from green_agent.agentbeats.scenario_config import ResolvedConfig
from green_agent.engine.config import build_battle
from green_agent.engine.sequencer import STEPS, Battle, StepOutput
from green_agent.runtime.slot import SLOT_LOCK_DIR, SlotLock, slot_key
from kernel.errors import GreenError
from kernel.settings import Settings
from kernel.trace_log import trace_log_path, tracing_on
from kernel.untrusted import one_line

log = logging.getLogger(__name__)

STEP_TITLES = {
    "task_id": "task id", "setup": "AppWorld world initialized", "scope": "required APIs predicted",
    "task_message": "task message built", "dispatch": "task sent to Blue", "wait": "wait for Blue ended",
    "archive": "world state saved", "metrics": "evaluation and trajectory", "judge": "judged",
    "cleanup": "world closed", "report": "result reported",
}
TITLES = {name: f"Step {number}: {STEP_TITLES[name]}" for number, name in enumerate(STEPS, start=1)}
"""Progress titles, numbered like the result's steps table (`result_post.STEP_NUMBER`); no "of N": the folded
steps post no entry, so a count would promise entries the page never shows."""
SCOPE_APIS_SHOWN = 5
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


def run_dir_name(battle_id: str) -> str:
    """A directory name for a battle id (the backend uses UUIDs; anything else is made safe)."""
    return _SAFE_ID.sub("_", battle_id).lstrip(".")[:120] or "battle"


class BackendProgress:
    """The engine's observer on the AgentBeats path: one progress event per step, bad input reported unjudged."""

    def __init__(self, reporter: BackendReporter, blue_feed: BlueFeed | CodeFeed | None = None) -> None:
        self.reporter = reporter
        self.blue_feed = blue_feed

    def step_started(self, name: str, battle: Battle) -> None:
        if name == "wait":
            deadline_s = battle.config.choices.deadline_s
            self.reporter.progress(f"Waiting up to {deadline_s:.0f} s for Blue to call supervisor__complete_task",
                                   {"deadline_s": deadline_s})
            if self.blue_feed:
                self.blue_feed.start()

    def step_finished(self, name: str, output: StepOutput, battle: Battle) -> None:
        if name == "wait" and self.blue_feed:
            self.blue_feed.stop()  # the Blue's last calls are posted before the Green's next entry
        if output.get("ok") and name in FOLDED_STEPS:
            return  # the result entry summarizes the steps after the Blue's actions
        if output.get("ok"):
            self.reporter.progress(TITLES[name], progress_detail(name, output))
        else:
            error = one_line(output.get("error", ""), 200)
            self.reporter.progress(f"{TITLES[name]} FAILED: {error}", {"error": error})

    def bad_input(self, message: str, battle: Battle) -> None:
        try:
            self.reporter.report_unjudged(f"Battle not run: {message}", {
                "battle_id": battle.config.battle_id, "status": "bad_input",
                "task_config": battle.config.task_config[:200], "error": message})
        except GreenError as exc:
            log.warning("could not report the bad input to the backend: %s", exc)


class BattleSession:
    """One battle on the AgentBeats path: the engine's battle, plus the tools' thread safety."""

    def __init__(self, battle_id: str, resolved: ResolvedConfig, blue_url: str,
                 reporter: BackendReporter, settings: Settings) -> None:
        self.battle_id = battle_id
        self.resolved = resolved
        self.reporter = reporter
        self.slot_lock = SlotLock(SLOT_LOCK_DIR, slot_key(resolved.env_url))
        config, deps = build_battle(resolved.task, resolved.choices, settings, battle_id=battle_id, blue_url=blue_url,
                                    run_dir=resolved.runs_dir / run_dir_name(battle_id), env_url=resolved.env_url,
                                    apis_url=resolved.apis_url, gateway_url=resolved.gateway_url,
                                    call_log_path=resolved.call_log_path, reporters=[reporter],
                                    slot_lock=self.slot_lock, publish_salt=True)  # a v1 battle is the whole run
        blue_label = resolved.choices.blue  # its registration alias, as the battle page names it

        def post(message: str, detail: dict[str, Any], markdown: str) -> None:
            reporter.progress(message, detail, markdown, reported_by=blue_label)

        # The Blue's actions, posted under its name while the Green waits (the logs are followed from here on):
        # in code mode its executions (code, output, their calls) from the gateway's trace, else its calls.
        feed: BlueFeed | CodeFeed = BlueFeed(CallLogTail(resolved.call_log_path, battle_id), post)
        if config.choices.interaction == "code" and tracing_on():
            feed = trace_feed(trace_log_path(resolved.call_log_path), battle_id, post, self._supervisor)
        self.battle = Battle(config, deps, observer=BackendProgress(reporter, feed))
        self._lock = threading.RLock()

    def _supervisor(self) -> list[str]:
        """The task supervisor's personal data (never posted: the code feed replaces it in the Blue's texts)."""
        setup = self.battle.state.setup
        if setup is None:
            return []
        person = setup.task.supervisor
        return [v for v in (person.email, person.phone_number, person.first_name, person.last_name) if v]

    def run_step(self, name: str) -> StepOutput:
        """One step for a tool (the steps it depends on first); a repeated call returns the stored output."""
        with self._lock:
            output = self.battle.run_step(name)
        if name == "task_id" and output.get("ok"):
            output = output | {"task_source": self.resolved.task_source}
        if name == "report" and output.get("ok"):
            output = output | {"posted": self.reporter.result_posted}
        return output

    def run_all(self) -> StepOutput:
        """The whole plan (deterministic mode), or whatever the model left (`finish`); cleanup runs even on Ctrl-C."""
        with self._lock:
            self.battle.run_all()
        return self.battle.summary()

    finish = run_all

    def task_completed(self) -> StepOutput:
        """A cheap look at `/task_completed` (never blocks on the session lock)."""
        ref, setup = self.battle.state.ref, self.battle.state.setup
        if ref is None or setup is None:
            return {"ok": False, "error": "the world is not initialized yet: call setup_appworld_environment first"}
        try:
            return {"ok": True, "task_id": ref.task_id, "completed": self.battle.deps.client.task_completed(ref.task_id)}
        except GreenError as exc:
            return {"ok": False, "error": str(exc)}


PRIVATE_KEYS = ("text", "mcp_url", "sse_url")
"""Never posted: the task message (long; it holds the endpoint) and the gateway endpoints (the battle's token)."""
GOLD_PREDICTORS = ("ground_truth",)
"""Predictors whose API list is the test set's answer key (AppWorld's gold required APIs): only its size is posted."""


def progress_detail(name: str, output: StepOutput) -> StepOutput:
    """What the UI shows under a step (the page is public; result.json keeps everything): never the task message's
    text, the gateway or Blue endpoints, the task supervisor's personal data, or a gold API list (only sizes)."""
    if name == "task_message":
        return {k: v for k, v in output.items() if k not in PRIVATE_KEYS} | {"chars": len(output.get("text", ""))}
    output = {k: v for k, v in output.items() if k not in PRIVATE_KEYS}
    if name == "setup" and isinstance(output.get("task"), dict):
        task = output["task"]
        return {"task_id": task.get("task_id"), "instruction": task.get("instruction"),
                "task_datetime": task.get("datetime"), "experiment_name": output.get("experiment_name")}
    if name == "dispatch":
        agent = output.get("agent") if isinstance(output.get("agent"), dict) else {}
        return {"blue": agent.get("name"), "blue_version": agent.get("version"), "message_id": output.get("message_id")}
    if name == "scope" and isinstance(output.get("apis"), list):  # the count and the first few; all in result.json
        apis = output["apis"]
        if output.get("predictor") in GOLD_PREDICTORS:
            return {k: v for k, v in output.items() if k != "apis"} | {
                "api_count": len(apis), "apis": "not shown: the ground_truth scope is the test set's gold APIs"}
        more = [f"... {len(apis) - SCOPE_APIS_SHOWN} more in result.json"] if len(apis) > SCOPE_APIS_SHOWN else []
        return output | {"api_count": len(apis), "apis": apis[:SCOPE_APIS_SHOWN] + more}
    return output


def to_json(value: Any) -> str:
    """Tool return value: compact JSON text."""
    return json.dumps(value, default=str, ensure_ascii=False)
