"""Fakes for the batch layer's two seams (no servers).

- `FakeSlots` stands for `green_agent.batch.live.slot_factory`: a context manager per worker index
  that "starts" a slot (a world slot + Blue) on enter and "stops" it on exit; it records starts and
  stops and flags two battles on one slot at once.
- `FakeBattles` stands for `green_agent.batch.live.battle_fn`: it writes `<dir>/result.json` like
  the battle engine (atomically, via `write_result`) and returns the `BattleResult`; outcomes are
  scripted per task, and a task can be made to end in `infra_error` for its first N attempts.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

from green_agent.batch.checkpoint import BattleKey
from green_agent.models.trajectory import TrajectoryMetrics
from green_agent.models.result import (BattleResult, ErrorRecord, EvalTestRecord, EvaluationRecord, ScopeRecord,
                                       VersionsRecord)
from green_agent.models.result_assembly import write_result


def make_result(task_id: str, battle_id: str, outcome: str, run_dir: Path, difficulty: int = 1,
                calls: int = 3, instruction_hint: str = "") -> BattleResult:
    """A `BattleResult` as the battle engine would write it (evaluation, scope and trajectory filled)."""
    now = datetime.now(timezone.utc)
    infra = outcome == "infra_error"
    passed = outcome == "passed"
    failures = [] if passed else [EvalTestRecord(requirement="assert the note exists", label="no_op_fail",
                                                 trace="AssertionError: <missing> == 'note'")]
    evaluation = None if infra else EvaluationRecord(
        success=passed, num_tests=2, passes=[EvalTestRecord(requirement="no model changes", label="no_op_pass")]
        + ([EvalTestRecord(requirement="assert the note exists", label="no_op_fail")] if passed else []),
        failures=failures, difficulty=difficulty)
    return BattleResult(
        battle_id=battle_id, task_id=task_id, blue="fake", status="infra_error" if infra else "completed",
        winner=None if infra else ("blue_agent" if passed else "green_agent"), outcome=outcome,
        reason=instruction_hint or outcome, difficulty=None if infra else difficulty, evaluation=evaluation,
        scope=ScopeRecord(predictor="ground_truth", apis=["simple_note.login", "supervisor.complete_task"],
                          gold_apis=["simple_note.login", "simple_note.create_note"], recall=0.5),
        trajectory=None if infra else TrajectoryMetrics(
            log_path="calls.jsonl", log_found=True, battle_id=battle_id, total_calls=calls, successful_calls=calls - 1, failed_calls=1,
            error_rate=round(1 / calls, 4), p50_duration_ms=12.5, p95_duration_ms=40.0, api_f1=0.8),
        error=ErrorRecord(type="AppWorldUnavailableError", message="env server down", step="setup") if infra else None,
        versions=VersionsRecord(appworld_green="test"), run_dir=str(run_dir),
        started_at=now - timedelta(seconds=1.5), finished_at=now)


class FakeSlots:
    """Slot factory fake; see the module docstring."""

    def __init__(self, fail_starts: int = 0) -> None:
        self.starts: Counter[int] = Counter()
        self.stops: Counter[int] = Counter()
        self.fail_starts = fail_starts
        self.busy: dict[int, bool] = defaultdict(bool)
        self.overlaps = 0
        self._lock = threading.Lock()

    @contextmanager
    def __call__(self, index: int) -> Iterator["FakeSlots.Live"]:
        with self._lock:
            if self.fail_starts > 0:
                self.fail_starts -= 1
                raise RuntimeError("port already in use (fake)")
            self.starts[index] += 1
        try:
            yield FakeSlots.Live(self, index)
        finally:
            with self._lock:
                self.stops[index] += 1

    class Live:
        def __init__(self, owner: "FakeSlots", index: int) -> None:
            self.owner, self.index = owner, index


class FakeBattles:
    """Battle function fake; see the module docstring."""

    def __init__(self, outcomes: dict[str, str] | None = None, infra_first: dict[str, int] | None = None,
                 delay_s: float = 0.0) -> None:
        self.outcomes = outcomes or {}
        self.infra_first = dict(infra_first or {})
        self.delay_s = delay_s
        self.calls: list[tuple[BattleKey, str, int]] = []
        self._lock = threading.Lock()

    def __call__(self, key: BattleKey, live: FakeSlots.Live, directory: Path, battle_id: str) -> BattleResult:
        owner = live.owner
        with self._lock:
            if owner.busy[live.index]:
                owner.overlaps += 1
            owner.busy[live.index] = True
            self.calls.append((key, battle_id, live.index))
            infra = self.infra_first.get(key.task_id, 0) > 0
            if infra:
                self.infra_first[key.task_id] -= 1
        try:
            time.sleep(self.delay_s)
            outcome = "infra_error" if infra else self.outcomes.get(key.task_id, "passed")
            result = make_result(key.task_id, battle_id, outcome, directory)
            write_result(result, directory)
            return result
        finally:
            owner.busy[live.index] = False
