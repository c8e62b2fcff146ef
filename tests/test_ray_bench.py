"""bench/bench_ray.py's figures from measured runs (no cluster: the measuring part runs in `make bench`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_ray  # noqa: E402


def run(per_battle_s: float, phase_s: float, wall_s: float) -> dict:
    return {"per_battle_s": per_battle_s, "battle_phase_s": phase_s, "wall_s": wall_s, "battles": 6, "nodes": 2}


def test_figures_are_ray_against_local_and_one_slot_against_two(capsys: pytest.CaptureFixture[str]) -> None:
    measured = {("local", 2): [run(10.0, 31.0, 40.0)], ("ray", 2): [run(10.3, 32.0, 60.0)],
                ("ray", 1): [run(5.2, 60.8, 90.0)]}
    bench_ray.emit_figures(measured, {"split": "dev"})
    figures = {f["name"]: f for f in map(json.loads, capsys.readouterr().out.splitlines())}
    overhead, speedup = figures["ray_overhead_per_battle"], figures["ray_speedup_2_slots"]
    assert overhead["ratio"] == pytest.approx(1.03) and overhead["meets_target"] is True
    assert speedup["ratio"] == pytest.approx(1.9) and speedup["meets_target"] is True
    assert figures["ray_eval_wall_s"]["ratio"] == pytest.approx(1.5)
    measured[("ray", 2)] = [run(11.0, 40.0, 60.0)]
    bench_ray.emit_figures(measured, {})
    slower = {f["name"]: f for f in map(json.loads, capsys.readouterr().out.splitlines())}
    assert slower["ray_overhead_per_battle"]["meets_target"] is False
    assert slower["ray_speedup_2_slots"]["meets_target"] is False


def test_rotation_runs_every_setup_once_per_round(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    order: list[tuple[str, int]] = []

    def fake_eval(root, which, executor, workers, *rest):  # noqa: ANN001, ANN202 - stands for one CLI eval
        order.append((executor, workers))
        return run(1.0, 1.0, 1.0)

    monkeypatch.setattr(bench_ray, "run_eval", fake_eval)
    measured = bench_ray.measure(tmp_path, [], tmp_path, 2, 0.0, 1, "addr")
    assert all(len(v) == 2 for v in measured.values())
    assert order[:3] == list(bench_ray.SETUPS) and order[3:] != order[:3]
