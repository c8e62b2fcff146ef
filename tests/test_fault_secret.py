"""The fault plan's secret (issue 56): no agent can predict the plan, anyone can reproduce it once the run is over.

The plan draws on the run's secret (`kernel.fault_spec`), which only the gateway receives; the run records its
commitment when it starts, keeps it across `--resume` in a private file, and publishes it once the run is over
(`green_agent.batch.fault_secret`). Here on the batch layer's fakes (tests/batch_fakes.py: no servers); the end to
end door-by-door checks are in tests/test_reliability_e2e.py and tests/test_fault_prediction_e2e.py.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from batch_fakes import FakeBattles, FakeSlots
from green_agent.batch import evaluate
from green_agent.batch.evaluate import EvalRequest, run_eval
from green_agent.batch.fault_secret import SECRET_FILE
from green_agent.engine.config import BattleChoices
from green_agent.models.eval_run import EvalResults, RunConfig
from green_agent.models.result import BattleResult
from kernel.errors import BadInputError
from kernel.fault_spec import fault_spec_from, parse_fault_spec
from kernel.settings import Settings
from mcp_gateway.faults.plan import draw
from mcp_gateway.models import BattleScope

SPEC = "rate=0.3,seed=1"


def test_a_salted_spec_writes_only_its_commitment_and_gives_the_salt_to_the_gateway_alone() -> None:
    spec = parse_fault_spec(SPEC).salted()
    assert spec.salt is not None and len(spec.salt) == 64 and spec.salted() is spec
    assert spec.commitment == hashlib.sha256(spec.salt.encode()).hexdigest()
    for shown in (spec.model_dump_json(), json.dumps(spec.model_dump()), repr(spec), spec.text()):
        assert spec.salt not in shown
    assert spec.commitment in spec.model_dump_json() and spec.wire()["salt"] == spec.salt
    assert parse_fault_spec(SPEC).salted().salt != spec.salt  # a fresh secret each run
    reproduced = parse_fault_spec(f"{SPEC},salt={spec.salt}")
    assert (reproduced.salt, reproduced.commitment) == (spec.salt, spec.commitment)


@pytest.mark.parametrize("value, says", [
    ({"rate": 0.3, "seed": 1, "salt": "xyz"}, "salt must be 32-128 lowercase hex characters"),
    ({"rate": 0.3, "seed": 1, "salt": "ab" * 8}, "salt must be 32-128 lowercase hex characters"),
    ({"rate": 0.3, "seed": 1, "salt": "ab" * 16, "commitment": "0" * 64}, "does not match the run's commitment"),
])
def test_a_bad_salt_is_refused_naming_it(value: dict[str, Any], says: str) -> None:
    with pytest.raises(BadInputError, match=says):
        fault_spec_from(value)


def test_the_plan_draws_on_the_salt_so_the_published_seed_alone_does_not_predict_it() -> None:
    published = parse_fault_spec(SPEC)  # what an agent knows: the seed (the salt comes only after the run)
    one, other = published.with_salt("ab" * 16), published.with_salt("cd" * 16)

    def plan(spec: Any) -> list[Any]:
        return [draw(spec, "t_1", 1, p) for p in range(1, 401)]

    assert plan(one) == plan(published.with_salt("ab" * 16)) and plan(one) != plan(other)
    faulted = {p for p, kind in enumerate(plan(one), 1) if kind}
    predicted = {p for p, kind in enumerate(plan(published), 1) if kind}
    assert 0.22 < len(faulted) / 400 < 0.38
    assert len(faulted & predicted) / len(predicted) < 0.45  # a guess from the seed hits about as often as chance (0.3)


def test_the_gateway_refuses_a_fault_spec_without_its_secret() -> None:
    with pytest.raises(ValidationError, match="without the run's secret"):
        BattleScope(battle_id="B", faults=parse_fault_spec(SPEC))
    assert BattleScope(battle_id="B", faults=parse_fault_spec(SPEC).salted()).faults is not None


@pytest.fixture()
def world_settings(tmp_path: Path, world_copy, mini_tasks: tuple[str, str]) -> Settings:  # noqa: ANN001
    return Settings(appworld_root=world_copy(splits={"mini": mini_tasks}), runs_dir=tmp_path / "runs")


class SpyBattles:
    """`evaluate.battle_fn` replaced: records the fault spec each invocation's battles were given."""

    def __init__(self) -> None:
        self.specs: list[Any] = []

    def __call__(self, config: RunConfig) -> FakeBattles:
        self.specs.append(config.faults)
        return FakeBattles(delay_s=0.2)  # slow enough that an interrupt after the first battle stops the run


def _files_holding(out: Path, text: str) -> set[str]:
    return {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and text in p.read_text("latin-1")}


def test_an_eval_commits_to_its_secret_keeps_it_across_resume_and_publishes_it_only_once_over(
        tmp_path: Path, world_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = SpyBattles()
    monkeypatch.setattr(evaluate, "battle_fn", spy)
    out = tmp_path / "run"
    request = EvalRequest(split="mini", choices=BattleChoices(blue="fake", predictor="ground_truth",
                                                              faults=parse_fault_spec(SPEC)), out=out, workers=1,
                          trials=3)
    seen: list[tuple[int, set[str]]] = []

    def interrupt_once(result: BattleResult) -> None:  # Ctrl-C after the first battle: the run is not over
        seen.append(((out / SECRET_FILE).stat().st_mode & 0o777, _files_holding(out, spy.specs[0].salt)))
        raise KeyboardInterrupt

    first = run_eval(request, world_settings, progress_stream=io.StringIO(), factory=FakeSlots(),
                     on_result=interrupt_once)
    salt = spy.specs[0].salt
    assert first.interrupted and first.results.fault_salt is None and salt is not None
    assert seen == [(0o600, {SECRET_FILE})]  # while it ran, only the private file held the secret
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["config"]["faults"]["commitment"] == hashlib.sha256(salt.encode()).hexdigest()
    assert manifest["fault_salt"] is None and _files_holding(out, salt) == {SECRET_FILE}  # interrupted: not over

    resumed = run_eval(request.model_copy(update={"resume": True}), world_settings, progress_stream=io.StringIO(),
                       factory=FakeSlots())
    assert spy.specs[1].salt == salt  # --resume keeps the plan
    assert resumed.results.fault_salt == salt and resumed.results.faults.commitment == manifest["config"]["faults"][
        "commitment"]
    assert not (out / SECRET_FILE).exists()
    assert {name for name in _files_holding(out, salt)} <= {"run.json", "results.json"}  # no battle's file
    on_disk = EvalResults.model_validate_json((out / "results.json").read_text())
    reproduced = parse_fault_spec(f"{on_disk.faults.text()},salt={on_disk.fault_salt}")
    assert reproduced.commitment == on_disk.faults.commitment


def test_a_resume_without_the_runs_secret_or_with_another_is_refused(
        tmp_path: Path, world_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evaluate, "battle_fn", SpyBattles())
    out = tmp_path / "run"
    request = EvalRequest(split="mini", choices=BattleChoices(blue="fake", predictor="ground_truth",
                                                              faults=parse_fault_spec(SPEC)), out=out, workers=1)

    def interrupt(result: BattleResult) -> None:
        raise KeyboardInterrupt

    run_eval(request, world_settings, progress_stream=io.StringIO(), factory=FakeSlots(), on_result=interrupt)
    other = request.model_copy(update={"resume": True, "choices": request.choices.model_copy(
        update={"faults": parse_fault_spec(f"{SPEC},salt={'ef' * 32}")})})
    with pytest.raises(BadInputError, match="does not match the run's own secret"):
        run_eval(other, world_settings, factory=FakeSlots())
    (out / SECRET_FILE).unlink()
    with pytest.raises(BadInputError, match=f"no {SECRET_FILE}"):
        run_eval(request.model_copy(update={"resume": True}), world_settings, factory=FakeSlots())
