"""Re-judge one battle under a time limit: its saved state judged by AppWorld, its call log replayed beside it.

`BattleJudge(settings, work, world, timeout_s)` is used as a block around a run's battles; `judge(saved,
experiment)` re-judges one battle that holds a verdict to check:
1. stages its saved end state (`state`; a state AppWorld's change logs never hold is a difference, and nothing
   of it runs);
2. replays the battle's call log (`calls`) into a fresh world of its task and compares the replayed end state
   with the saved one (`replay`): a saved state its own calls do not produce, a call whose recorded answer the
   replay does not get, a log that cannot be replayed, or a record marked as an injected fault that the run's
   plan does not put there (`faults`: the replay skips such records) is a difference;
3. has AppWorld's evaluator judge the saved state and compares the verdict (`verdict`).
Steps 2 and 3 run in an AppWorld process (`evaluator`) under one deadline per battle, `timeout_s` from the
moment the process is ready: past it the process is stopped (a saved state whose SQL runs forever is stopped
here), the battle is `could_not_rejudge` ("could not re-judge: timed out"), with any difference found before, and the
next battle gets a new process; so does a battle during which the process ended ("could not re-judge: AppWorld's
process ended", likely the battle's own input: a start-up that fails is ours, exit 3). The process is started
when a battle first needs it.
The whole run has a deadline too (`run_timeout_s` from `run_started`, start-ups included): a battle it falls in
(its start-up, replay or evaluation) is stopped with the process, and every later battle is `could_not_rejudge`
without starting anything, each with the reason "could not re-judge: the run's time limit (... s,
--run-timeout-s) was reached".
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from types import TracebackType

from green_agent.models.rejudge import RejudgedBattle
from green_agent.rejudge.calls import NotReplayable, ReplayPlan, replay_plan
from green_agent.rejudge.discover import SavedBattle
from green_agent.rejudge.faults import RunFaults, fault_differences
from green_agent.rejudge.evaluator import FreshEvaluator, JobTimedOut, ProcessEnded
from green_agent.rejudge.replay import REPLAYED_STATE, replay_differences, replay_summary
from green_agent.rejudge.state import StateError, outputs_dbs, stage_state
from green_agent.rejudge.verdict import compare, tests_text
from green_agent.steps.archive import CALLS_FILE
from kernel.settings import Settings
from kernel.world_data import WorldData
from mcp_gateway.tools import build_tool_specs

DEFAULT_TIMEOUT_S = 60.0
"""Seconds one battle's re-judging may take once AppWorld is ready (its replay and evaluation take 0.3-0.4 s on
the offline world; the margin is for a loaded machine and the real dataset's larger worlds)."""


DEFAULT_RUN_TIMEOUT_S = 600.0
RUN_TIMEOUT_PER_BATTLE_S = 10.0
"""The whole run's default limit: `DEFAULT_RUN_TIMEOUT_S`, or this per battle to re-judge, or one battle's limit,
whichever is more (an honest battle takes under 1 s here; a folder of states that never end is bounded)."""


def default_run_timeout(battles: int, timeout_s: float) -> float:
    """The run's time limit when none is given: see `RUN_TIMEOUT_PER_BATTLE_S`."""
    return max(DEFAULT_RUN_TIMEOUT_S, RUN_TIMEOUT_PER_BATTLE_S * battles, timeout_s)


class BattleJudge:
    """Re-judges battles one at a time, each under the time limit and all under the run's (module docstring)."""

    def __init__(self, settings: Settings, work: Path, world: WorldData, timeout_s: float = DEFAULT_TIMEOUT_S,
                 run_timeout_s: float = math.inf, run_started: float | None = None,
                 faults: RunFaults = RunFaults(None, None)) -> None:
        self.settings, self.work, self.world, self.timeout_s = settings, work, world, timeout_s
        self.faults = faults
        self.run_timeout_s = run_timeout_s
        self.run_deadline = (time.monotonic() if run_started is None else run_started) + run_timeout_s
        self.specs = build_tool_specs(world, list(world.api_docs))
        self.evaluator: FreshEvaluator | None = None
        self.startup_s = 0.0

    def __enter__(self) -> "BattleJudge":
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.evaluator is not None:
            self.evaluator.__exit__(kind, exc, tb)
            self.evaluator = None

    def judge(self, saved: SavedBattle, experiment: str) -> RejudgedBattle:
        """`saved` re-judged (module docstring); `experiment` names its folders in the work root."""
        result = saved.result
        assert result is not None and saved.task_id is not None
        failed = RejudgedBattle(battle_id=result.battle_id, task_id=saved.task_id, trial=saved.trial,
                                result_path=saved.result_path, status="differs", recorded_outcome=result.outcome,
                                recorded_tests=tests_text(result.evaluation))
        if time.monotonic() >= self.run_deadline:
            return self._past_run_limit(failed)
        try:
            stage_state(saved.dbs, self.world.task_dir(saved.task_id) / "dbs",
                        outputs_dbs(self.work, experiment, saved.task_id))
        except StateError as exc:
            return failed.model_copy(update={"differences": [f"the saved end state cannot be re-judged: {exc}"]})
        try:
            evaluator = self._evaluator()
        except JobTimedOut:  # its start-up reached the run's limit
            return self._past_run_limit(failed)
        deadline = min(time.monotonic() + self.timeout_s, self.run_deadline)
        replayed = failed
        try:
            replayed = self._replay(saved, evaluator, f"{experiment}-replay", deadline, failed)
            done = self._evaluate(saved, evaluator, experiment, deadline, failed)
        except (JobTimedOut, ProcessEnded) as exc:
            if isinstance(exc, JobTimedOut) and deadline == self.run_deadline:
                return self._past_run_limit(replayed)
            self._stop()
            why = (f"timed out after {self.timeout_s:g} s (the limit per battle, --timeout-s)"
                   if isinstance(exc, JobTimedOut) else f"AppWorld's process ended while judging it (exit code "
                                                        f"{exc.exit_code})")
            return replayed.model_copy(update={"status": "could_not_rejudge", "reason": f"could not re-judge: {why}"})
        found = done.differences + replayed.differences
        return done.model_copy(update={"differences": found, "status": "differs" if found else "equal",
                                       "replay": replayed.replay, "replay_seconds": replayed.replay_seconds})

    def _replay(self, saved: SavedBattle, evaluator: FreshEvaluator, experiment: str, deadline: float,
                failed: RejudgedBattle) -> RejudgedBattle:
        """`failed` with the replay's account: `replay` and the differences it found (none: the state follows)."""
        result = saved.result
        assert result is not None and saved.task_id is not None
        try:
            plan = replay_plan(saved.folder / CALLS_FILE, result.battle_id, result.interaction, self.specs)
        except NotReplayable as exc:
            why = f"the saved end state cannot be checked against its own calls: {exc}"
            return failed.model_copy(update={"replay": f"not replayable: {exc}", "differences": [why]})
        found = _count_difference(saved, plan) + fault_differences(plan.faulted, result, saved.trial, self.faults,
                                                                   self.specs)
        job = {"task_id": saved.task_id, "experiment": experiment, "state_id": REPLAYED_STATE,
               "calls": [call.model_dump() for call in plan.calls]}
        answer = evaluator.replay(job, deadline)
        if answer.answer is None:
            found.append(f"the call log could not be replayed: {answer.error}")
        else:
            outputs = outputs_dbs(self.work, experiment, saved.task_id).parent
            found += replay_differences(saved.dbs, outputs, answer.answer, plan)
        return failed.model_copy(update={"replay": replay_summary(found, plan), "differences": found,
                                         "replay_seconds": answer.seconds})

    def _evaluate(self, saved: SavedBattle, evaluator: FreshEvaluator, experiment: str, deadline: float,
                  failed: RejudgedBattle) -> RejudgedBattle:
        assert saved.task_id is not None
        again = evaluator.evaluate(saved.task_id, experiment, deadline)
        if again.evaluation is None:
            return failed.model_copy(update={"differences": [f"AppWorld's evaluator refused the saved end state: "
                                                             f"{again.error}"]})
        return compare(saved, again.evaluation).model_copy(update={"seconds": again.seconds})

    def _past_run_limit(self, battle: RejudgedBattle) -> RejudgedBattle:
        """`battle` (with any difference found before) not re-judged: the run's limit is reached; AppWorld stopped."""
        self._stop()
        return battle.model_copy(update={"status": "could_not_rejudge", "reason": f"could not re-judge: the run's "
                                         f"time limit ({self.run_timeout_s:g} s, --run-timeout-s) was reached"})

    def _evaluator(self) -> FreshEvaluator:
        """The AppWorld process, started if none is (JobTimedOut: its start-up reached the run's limit)."""
        if self.evaluator is None:
            self.evaluator = FreshEvaluator(self.settings, self.work, ready_by=self.run_deadline).__enter__()
            self.startup_s = self.startup_s or self.evaluator.startup_s
        return self.evaluator

    def _stop(self) -> None:
        if self.evaluator is not None:
            self.evaluator.stop()
            self.evaluator = None


def _count_difference(saved: SavedBattle, plan: ReplayPlan) -> list[str]:
    """The call log's record count against the one result.json's archive recorded when it copied the log."""
    archive = saved.result.archive if saved.result else None
    if archive is None or archive.call_log is None or archive.call_records == plan.records:
        return []
    return [f"{CALLS_FILE} holds {plan.records} record(s) of the battle; result.json's archive copied "
            f"{archive.call_records}"]
