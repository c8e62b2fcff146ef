"""The batch layer on fakes (tests/batch_fakes.py): slot reuse, retries, interrupts, resume, outputs."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from batch_fakes import FakeBattles, FakeSlots
from green_agent.engine.config import BattleChoices
from green_agent.batch.checkpoint import BattleKey, battle_keys, fingerprint, load_results, read_events
from green_agent.batch.evaluate import EvalRequest, run_eval
from green_agent.batch.runner import BatchRunner
from kernel.errors import BadInputError
from green_agent.models.eval_run import AgentBeatsResults, EvalResults, RunConfig
from kernel.settings import Settings
from kernel.world_data import WorldData



def runner(tmp_path: Path, keys: list[BattleKey], slots: FakeSlots, battles: FakeBattles, workers: int = 2,
           retries: int = 2, **kw: object) -> BatchRunner:
    return BatchRunner(out=tmp_path, keys=keys, trials=1, run_id="run", blue="fake", workers=workers,
                       slot_factory=slots, battle_fn=battles, max_infra_retries=retries, **kw)  # type: ignore[arg-type]


def test_each_slot_starts_once_and_is_reused_never_shared(tmp_path: Path) -> None:
    keys = battle_keys([f"t{i}_1" for i in range(8)], 1)
    slots, battles = FakeSlots(), FakeBattles(delay_s=0.02)
    outcome = runner(tmp_path, keys, slots, battles).run()
    assert set(outcome.results) == set(keys) and not outcome.interrupted
    assert dict(slots.starts) == {0: 1, 1: 1} and dict(slots.stops) == {0: 1, 1: 1}
    assert slots.overlaps == 0
    assert len({index for _, _, index in battles.calls}) == 2  # both slots did work
    assert all((tmp_path / "tasks" / k.task_id / "result.json").is_file() for k in keys)


def test_infra_errors_are_retried_with_the_slot_restarted_and_bounded(tmp_path: Path) -> None:
    keys = battle_keys(["ok_1", "flaky_1", "broken_1"], 1)
    slots, battles = FakeSlots(), FakeBattles(infra_first={"flaky_1": 1, "broken_1": 99})
    outcome = runner(tmp_path, keys, slots, battles, workers=1, retries=2).run()
    assert outcome.results[BattleKey("flaky_1", 1)].outcome == "passed"
    assert outcome.results[BattleKey("broken_1", 1)].outcome == "infra_error"
    attempts = [bid for key, bid, _ in battles.calls if key.task_id == "broken_1"]
    assert attempts == ["run-broken_1-t1-a1", "run-broken_1-t1-a2", "run-broken_1-t1-a3"]  # 1 + 2 retries
    # one start, then one restart per infra error (1 flaky + 3 broken -> the last one also stops the slot)
    assert slots.starts[0] == 1 + 1 + 2 and slots.stops[0] == slots.starts[0]
    finishes = [e for e in read_events(tmp_path) if e["event"] == "finish" and e["task_id"] == "flaky_1"]
    assert [e["outcome"] for e in finishes] == ["infra_error", "passed"]


def test_a_slot_that_cannot_start_gives_an_infra_result_then_recovers(tmp_path: Path) -> None:
    slots, battles = FakeSlots(fail_starts=1), FakeBattles()
    outcome = runner(tmp_path, battle_keys(["a_1"], 1), slots, battles, workers=1).run()
    assert outcome.results[BattleKey("a_1", 1)].outcome == "passed"
    starts = [e for e in read_events(tmp_path) if e["event"] == "finish"]
    assert [e["outcome"] for e in starts] == ["infra_error", "passed"]


def test_interrupt_stops_every_slot_and_keeps_finished_results(tmp_path: Path) -> None:
    keys = battle_keys([f"t{i}_1" for i in range(6)], 1)
    slots, battles = FakeSlots(), FakeBattles(delay_s=0.05)

    fired = []

    def interrupt(key: BattleKey, result: object) -> None:  # Ctrl-C arrives once, after the first result
        if not fired:
            fired.append(key)
            raise KeyboardInterrupt

    outcome = runner(tmp_path, keys, slots, battles, on_result=interrupt).run()
    assert outcome.interrupted
    assert 1 <= len(outcome.results) < len(keys)
    assert slots.starts == slots.stops  # every started slot was stopped
    assert len(battles.calls) < len(keys)  # no new battle after the interrupt


@pytest.fixture()
def world_settings(tmp_path: Path, world_copy, mini_tasks: tuple[str, str]) -> Settings:
    """A copy of the built world's tasks with a two-task `mini` split (two scenarios)."""
    root = world_copy(splits={"mini": mini_tasks})
    return Settings(appworld_root=root, runs_dir=tmp_path / "runs")


def test_run_eval_resume_skips_judged_battles_and_reruns_the_rest(tmp_path: Path, world_settings: Settings,
                                                                    mini_tasks: tuple[str, str]) -> None:
    retried, judged = mini_tasks
    out = tmp_path / "run"
    request = EvalRequest(split="mini", choices=BattleChoices(blue="fake", predictor="ground_truth"), trials=2, out=out,
                          workers=1)
    first = FakeBattles(outcomes={judged: "failed"}, infra_first={retried: 5})
    outcome = run_eval(request.model_copy(update={"max_infra_retries": 0}), world_settings,
                       progress_stream=io.StringIO(), factory=FakeSlots(), battle=first)
    assert outcome.results.status == "incomplete" and outcome.results.aggregates.infra_errors == 2
    assert outcome.results.aggregates.tgc == 0.0  # 2 judged (failed), the infra errors are not failures
    with pytest.raises(BadInputError, match="--resume"):
        run_eval(request, world_settings, factory=FakeSlots(), battle=FakeBattles())
    second = FakeBattles(outcomes={judged: "failed"})
    resumed = run_eval(request.model_copy(update={"resume": True}), world_settings, progress_stream=io.StringIO(),
                       factory=FakeSlots(), battle=second)
    assert {k.task_id for k, _, _ in second.calls} == {retried} and len(second.calls) == 2
    agg = resumed.results.aggregates
    assert (resumed.skipped, resumed.ran, resumed.results.status) == (2, 2, "completed")
    assert (agg.judged, agg.passed, agg.tgc, agg.sgc) == (4, 2, 50.0, 50.0)
    assert agg.pass_hat_k == {"1": 0.5, "2": 0.5}
    assert (out / "tasks" / retried / "trial-2" / "result.json").is_file()
    on_disk = EvalResults.model_validate_json((out / "results.json").read_text())
    assert on_disk.aggregates == agg
    assert [r.attempts for r in on_disk.rows if r.task_id == retried] == [2, 2]
    board = AgentBeatsResults.model_validate_json((out / "agentbeats_results.json").read_text())
    assert board.status == "completed" and board.results[0]["tgc"] == 50.0 and len(board.results) == 5
    assert "instruction" not in (out / "results.json").read_text()  # task content stays out of results.json


def test_resume_refuses_another_config(tmp_path: Path, world_settings: Settings) -> None:
    out = tmp_path / "run"
    request = EvalRequest(split="mini", choices=BattleChoices(blue="fake", predictor="ground_truth"), out=out)
    run_eval(request, world_settings, progress_stream=io.StringIO(), factory=FakeSlots(), battle=FakeBattles())
    with pytest.raises(BadInputError, match="another config"):
        run_eval(request.model_copy(update={"resume": True, "choices": BattleChoices(blue="other", predictor="ground_truth")}), world_settings,
                 factory=FakeSlots(), battle=FakeBattles())
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["fingerprint"] == fingerprint(RunConfig.model_validate(manifest["config"]), manifest["task_ids"])


def test_task_set_is_validated_before_anything_runs(tmp_path: Path, world_settings: Settings,
                                                    mini_tasks: tuple[str, str]) -> None:
    retried = mini_tasks[0]
    bad = EvalRequest(task_ids=[retried, "../etc_1"], choices=BattleChoices(blue="fake"), out=tmp_path / "x")
    with pytest.raises(BadInputError, match="invalid task id"):
        run_eval(bad, world_settings, factory=FakeSlots(), battle=FakeBattles())
    unknown = bad.model_copy(update={"task_ids": [retried, "fffffff_9"]})
    with pytest.raises(BadInputError, match="fffffff_9"):
        run_eval(unknown, world_settings, factory=FakeSlots(), battle=FakeBattles())
    assert not (tmp_path / "x" / "tasks").exists()


class StoppedUnderBattle:
    """Stands for a real battle whose slot is shut down under it: it waits in step `wait` until the slot's
    context exits (the runner's shutdown), then reports the infra error a dead gateway gives."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.running = threading.Event()

    def __call__(self, key: BattleKey, live: FakeSlots.Live, directory: Path, battle_id: str):  # noqa: ANN204
        from batch_fakes import make_result
        from green_agent.models.result import ErrorRecord
        from green_agent.models.result_assembly import write_result
        self.ids.append(battle_id)
        self.running.set()
        deadline = time.monotonic() + 10
        while live.owner.stops[live.index] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        result = make_result(key.task_id, battle_id, "infra_error", directory).model_copy(update={
            "error": ErrorRecord(type="GatewayError", message="gateway died or was stopped", step="wait")})
        write_result(result, directory)
        return result


def test_an_interrupted_battle_is_labelled_and_its_rerun_gets_a_new_id_beside_the_old_record(tmp_path: Path) -> None:
    key = BattleKey("a_1", 1)
    stalled = StoppedUnderBattle()

    def interrupt(started: BattleKey) -> None:  # Ctrl-C lands in the main thread while the battle runs
        assert stalled.running.wait(10)
        raise KeyboardInterrupt

    first = runner(tmp_path, [key], FakeSlots(), stalled, workers=1, on_start=interrupt).run()
    assert first.interrupted and stalled.ids == ["run-a_1-t1-a1"]
    on_disk = json.loads((tmp_path / "tasks" / "a_1" / "result.json").read_text())
    assert on_disk["error"]["type"] == "Interrupted" and on_disk["error"]["step"] == "wait"
    assert "interrupted" in on_disk["reason"] and "gateway died" not in on_disk["reason"]

    battles = FakeBattles()
    second = runner(tmp_path, [key], FakeSlots(), battles, workers=1).run()
    assert [bid for _, bid, _ in battles.calls] == ["run-a_1-t1-a2"]  # not a1 again: its own call-log filter
    assert second.results[key].battle_id == "run-a_1-t1-a2"
    kept = tmp_path / "tasks" / "a_1" / "attempts" / "run-a_1-t1-a1" / "result.json"
    assert json.loads(kept.read_text())["error"]["type"] == "Interrupted"
    scored = load_results(tmp_path, [key], 1)
    assert scored[key].battle_id == "run-a_1-t1-a2" and scored[key].outcome == "passed"


def test_report_on_a_run_missing_a_task_result_marks_its_scenario_incomplete(tmp_path: Path, world_copy,
                                                                            appworld_root: Path) -> None:
    dev = WorldData(appworld_root).split("dev")
    scenario = dev[0].rsplit("_", 1)[0]
    trio = [t for t in dev if t.rsplit("_", 1)[0] == scenario]
    other = next(t for t in dev if t.rsplit("_", 1)[0] != scenario)
    assert len(trio) >= 2, "the built world should have scenarios of several tasks"
    settings = Settings(appworld_root=world_copy(splits={"trio": [*trio, other]}), runs_dir=tmp_path / "runs")
    out = tmp_path / "run"
    run_eval(EvalRequest(split="trio", choices=BattleChoices(blue="fake", predictor="ground_truth"), out=out), settings,
             progress_stream=io.StringIO(), factory=FakeSlots(), battle=FakeBattles())
    (out / "tasks" / trio[-1] / "result.json").unlink()
    report = subprocess.run([str(Path(sys.executable).parent / "appworld-green"), "report", str(out)],
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr[-2000:]
    agg = EvalResults.model_validate_json((out / "results.json").read_text()).aggregates
    assert agg.scenario_status[scenario] == "incomplete" and agg.scenarios_incomplete == [scenario]
    assert agg.scenarios_passed == 1 and agg.scenarios == 2  # the other, complete scenario; the incomplete one not passed
    assert agg.incomplete and agg.tgc == 75.0  # 3 of the 4 tasks of the task set
    assert "scenarios incomplete 1" in report.stdout and scenario in report.stdout
    assert 'id="headline-incomplete"' in (out / "report.html").read_text()
