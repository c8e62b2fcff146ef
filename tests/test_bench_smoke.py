"""Smoke tests of bench/: the statistics and figure helpers, run_all's failure rules, and each script's quick mode.

The fast part runs the helpers in-process and bench_trajectory (20,000 lines) through run_all in a
subprocess. The e2e part runs each real-server script with `--quick` (one world slot on free ports,
stopped by the script) and checks the figure lines it prints.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import bench_completion  # noqa: E402
import bench_overhead  # noqa: E402
import common  # noqa: E402
import run_all  # noqa: E402

FIGURE_KEYS = {"name", "value", "unit", "baseline", "ratio", "runs"}


def figures_of(stdout: str) -> dict[str, dict]:
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    assert all(FIGURE_KEYS <= set(line) for line in lines), lines
    return {line["name"]: line for line in lines}


# -- helpers --------------------------------------------------------------------------------------

def test_spread_and_percentile() -> None:
    assert common.spread([3.0, 1.0, 2.0]) == {"median": 2.0, "spread": 2.0, "values": [3.0, 1.0, 2.0]}
    assert common.spread([1.0, 2.0, 3.0, 10.0])["median"] == 2.5
    assert common.percentile([1, 2, 3, 4, 5], 50) == 3
    assert common.percentile([1, 2, 3, 4, 5], 95) == pytest.approx(4.8)
    assert common.percentile([7.0], 95) == 7.0
    with pytest.raises(ValueError):
        common.percentile([], 50)


def test_figure_ratio_directions() -> None:
    speedup = common.figure("f", "s", 0.5, 2.0, [0.5], [2.0], "n")
    assert speedup["ratio"] == 4.0 and speedup["ratio_is"] == "baseline/value"
    share = common.figure("g", "s", 0.5, 2.0, [0.4, 0.5, 0.6], [2.0], "n", ratio="value/baseline", target="< 25%",
                          meets_target=False)
    assert share["ratio"] == 0.25 and share["runs"]["ours"] == {"median": 0.5, "spread": 0.2, "values": [0.4, 0.5, 0.6]}
    assert share["target"] == "< 25%" and share["meets_target"] is False
    assert common.figure("h", "s", 0.0, 1.0, [0.0], [1.0], "n")["ratio"] is None  # speed-up over a zero value
    assert common.figure("h", "s", 1.0, 0.0, [1.0], [0.0], "n", ratio="value/baseline")["ratio"] is None
    assert "target" not in speedup
    with pytest.raises(ValueError):
        common.figure("x", "s", 1.0, 1.0, [1.0], [1.0], "n", ratio="bogus")


def test_overhead_figures_from_rows() -> None:
    def row(wall: float, blue: float, core: float, archive: float) -> dict:
        return {"task_id": "t", "outcome": "passed", "wall_s": wall, "blue_s": blue, "appworld_core_s": core,
                "appworld_archive_s": archive, "green_s": wall - blue - core,
                "green_excl_archive_calls_s": wall - blue - core - archive, "detection_latency_s": 0.03,
                "calls": {"/initialize": 0.3}, "timings": {"setup": 0.3, "wait": 1.0}}

    rows = [row(2.0, 1.0, 0.8, 0.05), row(2.1, 1.0, 0.8, 0.05), row(2.3, 1.0, 0.8, 0.05)]
    overhead, strict = bench_overhead.figures(rows, "ground_truth")
    assert (overhead["name"], strict["name"]) == ("orchestration_overhead", "orchestration_overhead_strict")
    # the definition: AppWorld's archive round trips (0.05) are AppWorld's time, not the Green's
    assert overhead["value"] == pytest.approx(0.25) and overhead["baseline"] == pytest.approx(0.8)
    assert overhead["ratio"] == pytest.approx(0.3125, abs=1e-3) and overhead["meets_target"] is False
    assert strict["value"] == pytest.approx(0.3) and strict["baseline"] == pytest.approx(0.8)
    assert strict["ratio"] == pytest.approx(0.375) and strict["meets_target"] is False
    assert "breakdown" in overhead and "breakdown" not in strict
    fast = bench_overhead.figures([row(1.914, 1.0, 0.8, 0.05)] * 3, "ground_truth")[0]  # 0.064 / 0.8: within 0.10
    assert fast["meets_target"] is True
    assert bench_overhead.figures([row(1.97, 1.0, 0.8, 0.05)] * 3, "ground_truth")[0]["meets_target"] is False  # 0.15


def test_overhead_green_time_by_step_sums_to_the_green_time() -> None:
    """The Green's time by step: AppWorld's round trips of each step out, dispatch + wait the Blue's but detection."""
    env = bench_overhead.TimedSession()
    env.calls = [("setup", "/initialize", 0.2), ("wait", "/task_completed", 0.01), ("archive", "/execute", 0.02),
                 ("archive", "/save_logs", 0.01), ("metrics", "/evaluate", 0.1), ("cleanup", "/close", 0.03)]
    timings = {"task_id": 0.001, "setup": 0.21, "scope": 0.005, "dispatch": 0.01, "wait": 0.5, "archive": 0.04,
               "metrics": 0.11, "judge": 0.0, "cleanup": 0.035, "report": 0.02}
    wall, latency, after = 0.95, 0.02, 0.004
    steps = bench_overhead.green_by_step(timings, wall, latency, env, after)
    assert steps["setup"] == pytest.approx(0.01) and steps["archive"] == pytest.approx(0.01)
    assert steps["detection"] == latency and steps["after_detection"] == after
    assert "wait" not in steps and "dispatch" not in steps
    blue = timings["dispatch"] + timings["wait"] - latency - after
    assert sum(steps.values()) == pytest.approx(wall - blue - env.seconds(bench_overhead.CORE_PATHS)
                                                - env.seconds(bench_overhead.ARCHIVE_PATHS))
    rows = [{"green_by_step": steps}, {"green_by_step": {**steps, "report": 0.04}}]
    assert bench_overhead._median_ms(rows, "green_by_step")["report"] == pytest.approx(30.0)


def test_completion_figures_and_seed_loop() -> None:
    rows = {"ours": [{"latency_s": v, "call_s": 0.05, "detected_via": "gateway", "gateway_reported_s": v / 2}
                     for v in (0.1, 0.2, 0.3)],
            "seed": [{"latency_s": v, "call_s": 0.05, "detected_via": "task_completed", "gateway_reported_s": None}
                     for v in (1.0, 3.0, 5.0)]}
    p50, p95 = bench_completion.figures(rows, (0.2, 5.2))
    assert (p50["value"], p50["baseline"], p50["ratio"]) == (0.2, 3.0, 15.0)
    assert p95["value"] == pytest.approx(0.29) and p95["meets_target"] is True and "target" not in p50

    class FakeEnv:
        """Stands for POST /task_completed on the env server: a bool, true from the 3rd call on."""

        def __init__(self) -> None:
            self.calls = 0

        def task_completed(self, task_id: str) -> bool:
            self.calls += 1
            return self.calls >= 3

    env = FakeEnv()
    assert bench_completion.seed_wait(env, "t", deadline_s=5, poll_s=0.01) is True and env.calls == 3


# -- run_all --------------------------------------------------------------------------------------

def _fake_script(directory: Path, name: str, body: str) -> None:
    (directory / f"{name}.py").write_text(textwrap.dedent(body))


def test_run_all_fails_on_exit_code_or_no_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    figure_line = '{"name": "x", "value": 1, "unit": "s", "baseline": 2, "ratio": 2, "runs": {}}'
    _fake_script(tmp_path, "bench_overhead", f"print('{figure_line}')\n")
    _fake_script(tmp_path, "bench_world", "print('not json')\n")
    _fake_script(tmp_path, "bench_completion", f"import sys\nprint('{figure_line}')\nsys.exit(3)\n")
    monkeypatch.setattr(run_all, "BENCH_DIR", str(tmp_path))
    assert run_all.main(["--only", "bench_overhead"]) == 0
    assert run_all.main(["--only", "bench_overhead", "bench_world"]) == 1
    assert run_all.main(["--only", "bench_completion"]) == 1
    assert run_all.main(["--only", "bench_batch"]) == 0  # optional and absent: skipped
    out = capsys.readouterr()
    assert out.out.count('"name": "x"') == 3 and "FAILED (exit 3, 1 figures)" in out.err


def test_run_all_quick_trajectory_subprocess(tmp_path: Path) -> None:
    out = tmp_path / "figures.jsonl"
    proc = subprocess.run([sys.executable, str(BENCH / "run_all.py"), "--quick", "--only", "bench_trajectory",
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = figures_of(proc.stdout)
    assert "trajectory_analyze_time" in figures and figures["trajectory_analyze_time"]["value"] > 0
    assert len(out.read_text().splitlines()) == len(figures)


# -- quick modes of the real-server scripts -------------------------------------------------------

def _run_quick(script: str, appworld_root: Path) -> dict[str, dict]:
    proc = subprocess.run([sys.executable, str(BENCH / script), "--quick", "--root", str(appworld_root)],
                          capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return figures_of(proc.stdout)


@pytest.mark.e2e
def test_overhead_quick(appworld_root: Path) -> None:
    figures = _run_quick("bench_overhead.py", appworld_root)
    overhead, strict = figures["orchestration_overhead"], figures["orchestration_overhead_strict"]
    assert overhead["value"] > 0 and overhead["baseline"] > 0 and overhead["breakdown"]["outcomes"] == ["passed"]
    assert overhead["baseline"] == strict["baseline"] and overhead["value"] < strict["value"]


@pytest.mark.e2e
def test_completion_quick(appworld_root: Path) -> None:
    figures = _run_quick("bench_completion.py", appworld_root)
    p95 = figures["completion_detection_p95"]
    assert 0 < p95["value"] < p95["baseline"] and p95["detected_via"] == {"gateway": 2}


@pytest.mark.e2e
def test_code_quick(appworld_root: Path) -> None:
    figures = _run_quick("bench_code.py", appworld_root)
    trip, start = figures["code_execute_round_trip"], figures["code_sandbox_start"]
    assert trip["value"] > 0 and trip["baseline"] > 0 and len(trip["runs"]["ours"]["values"]) == 3
    assert 0 < start["value"] < start["ready_s"] and start["isolation"].startswith("bubblewrap")
    battle = figures["code_battle_vs_tools"]  # a whole code battle beside the same battle in tools mode
    assert battle["value"] > 0 and battle["baseline"] > 0 and battle["ratio"] == pytest.approx(battle["value"] / battle["baseline"], abs=2e-3)
    assert {mode: len(times) for mode, times in battle["warmup_s"].items()} == {"tools": 2, "code": 2}


@pytest.mark.e2e
def test_world_quick(appworld_root: Path) -> None:
    figures = _run_quick("bench_world.py", appworld_root)
    memory = figures["slot_memory_after_battle"]
    assert memory["baseline"] > 0 and set(memory["idle_mib"]) == {"apis", "environment", "gateway"}
    assert figures["gateway_memory_share"]["value"] > 0
    share = figures["gateway_import_share"]  # the gateway's imports alone, a fresh interpreter's, vs it running
    assert 0 < share["value"] < share["baseline"]
    assert share["ratio"] == pytest.approx(share["value"] / share["baseline"], abs=2e-3)


def test_stats_coverage_quick_subprocess() -> None:
    """The coverage bench's smoke run: every figure line at 2 and 7 scenarios, shipped intervals beside Wilson's."""
    proc = subprocess.run([sys.executable, str(BENCH / "bench_stats_coverage.py"), "--quick"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = figures_of(proc.stdout)
    assert {"stats_coverage_tgc_k1_g2", "stats_coverage_sgc_k3_g7", "stats_coverage_pass_hat_k_k3_g2",
            "stats_coverage_diff_better_k1_g7"} <= set(figures)
    tgc = figures["stats_coverage_tgc_k1_g2"]
    assert 0.0 <= tgc["value"] <= 1.0 and tgc["baseline"] is not None and tgc["reps"] == 30
    assert set(tgc["by_shape"]) == {"beta(1.5,1.5)", "beta(0.5,0.5)", "beta(2,5)", "near 0", "near 1"}
    assert figures["stats_coverage_diff_equal_k1_g2"]["baseline"] is None  # no Wilson for a paired difference
