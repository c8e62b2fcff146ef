"""Shared helpers of the bench scripts: statistics, the figure JSON line, machine info, process memory.

Every bench script prints one JSON object per figure on stdout, the shape `bench_trajectory.py`
set up: `{name, value, unit, baseline, ratio, runs, note}` (plus `target`/`meets_target` when the
issue names a target), where `runs` holds `{median, spread, values}` of each side. Machine info
goes to stderr, so stdout stays figures only.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
from collections.abc import Iterable, Sequence
from typing import Any

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))


def spread(values: Sequence[float]) -> dict[str, Any]:
    """Median, spread (max - min) and every value, rounded for printing."""
    if not values:
        return {"median": None, "spread": None, "values": []}
    return {"median": round(statistics.median(values), 4), "spread": round(max(values) - min(values), 4),
            "values": [round(v, 4) for v in values]}


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation between closest ranks (numpy's default)."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be in [0, 100], got {q}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def ratio_of(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator rounded to 3 places; None when undefined (missing or zero denominator)."""
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, 3)


def figure(name: str, unit: str, value: float, baseline: float | None, ours: Sequence[float],
           baseline_runs: Sequence[float] | None, note: str, *, ratio: str = "baseline/value",
           target: str | None = None, meets_target: bool | None = None, extra: dict[str, Any] | None = None
           ) -> dict[str, Any]:
    """One figure line.

    Args:
        name: figure name (snake_case).
        unit: unit of `value` and `baseline`.
        value: our statistic (usually the median of `ours`).
        baseline: the comparison statistic measured in the same run.
        ours: every measured value of ours.
        baseline_runs: every measured value of the baseline.
        note: what it means, in one sentence.
        ratio: "baseline/value" (a speed-up or saving, bigger is better) or "value/baseline" (a share or
            growth, smaller is better).
        target: the issue's target in words, if any.
        meets_target: whether the figure meets it.
        extra: more keys (breakdowns) added to the line.
    """
    if ratio not in ("baseline/value", "value/baseline"):
        raise ValueError(f"ratio must be baseline/value or value/baseline, got {ratio!r}")
    computed = ratio_of(baseline, value) if ratio == "baseline/value" else ratio_of(value, baseline)
    line: dict[str, Any] = {
        "name": name, "value": round(value, 4), "unit": unit,
        "baseline": None if baseline is None else round(baseline, 4), "ratio": computed, "ratio_is": ratio,
        "runs": {"ours": spread(list(ours)), "baseline": spread(list(baseline_runs or []))}, "note": note}
    if target is not None:
        line["target"] = target
        line["meets_target"] = meets_target
    if extra:
        line.update(extra)
    return line


def emit(line: dict[str, Any]) -> None:
    """Print one JSON line on stdout, flushed (run_all.py streams it)."""
    print(json.dumps(line), flush=True)


def machine_info() -> dict[str, Any]:
    """CPU count, load, memory, OS and Python of this machine (the context every figure needs)."""
    info: dict[str, Any] = {"cpus": os.cpu_count(), "python": sys.version.split()[0], "platform": platform.platform()}
    try:
        info["loadavg_1m"] = round(os.getloadavg()[0], 2)
    except OSError:
        pass
    try:
        import psutil

        info["memory_gib"] = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:
        pass
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), None)
        if model:
            info["cpu_model"] = model
    except OSError:
        pass
    return info


def print_machine(script: str) -> None:
    """Machine info as one JSON line on stderr."""
    print(json.dumps({"machine": machine_info(), "script": script}), file=sys.stderr, flush=True)


def pss_mib(pids: Iterable[int]) -> dict[int, float]:
    """PSS (MiB) of each pid alone: private pages plus its share of pages shared with other processes.

    The honest per-process cost when processes share memory (forked servers share AppWorld's
    imported code); RSS would count every shared page in full in each process."""
    import psutil

    result: dict[int, float] = {}
    for pid in pids:
        try:
            result[pid] = round(psutil.Process(pid).memory_full_info().pss / 2**20, 1)
        except psutil.NoSuchProcess:
            result[pid] = 0.0
    return result


def tree_rss_mib(pids: Iterable[int]) -> dict[int, float]:
    """RSS (MiB) of each pid summed over its process tree (the pid and all its descendants).

    RSS counts shared pages (libraries) once per process, so a sum over a tree overstates what the
    tree alone costs; it is the figure `top` users expect and it is stable between samples.
    """
    import psutil

    result: dict[int, float] = {}
    for pid in pids:
        try:
            root = psutil.Process(pid)
            processes = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            result[pid] = 0.0
            continue
        total = 0
        for process in processes:
            try:
                total += process.memory_info().rss
            except psutil.NoSuchProcess:
                continue
        result[pid] = round(total / 2**20, 1)
    return result


def free_ports(count: int) -> list[int]:
    """`count` distinct free loopback ports (kernel.ports.free_port never repeats one)."""
    from kernel.ports import free_port

    return [free_port() for _ in range(count)]


def built_world(appworld_root: str | None = None) -> Any:
    """The world every benchmark uses: the one `make world` built (APPWORLD_ROOT), or `appworld_root`."""
    from pathlib import Path

    from kernel.settings import load_settings

    root = Path(appworld_root).resolve() if appworld_root else load_settings().appworld_root
    if not (root / "data" / ".built").is_file():
        raise SystemExit(f"no built world under {root} (no data/.built stamp): run `make world` or pass --root")
    return root


def bench_settings(workdir: str, appworld_root: str | None = None, **overrides: Any) -> Any:
    """Settings for a bench run: the built world (`built_world`); logs and runs in `workdir`."""
    from pathlib import Path

    from kernel.settings import load_settings

    settings = load_settings(agentbeats_mcp_log_path=Path(workdir) / "mcp_tool_calls.jsonl",
                             runs_dir=Path(workdir) / "runs", **overrides)
    return settings.model_copy(update={"appworld_root": built_world(appworld_root)})


def start_slot(settings: Any, workdir: str, launch: str = "fork", code: bool = False) -> Any:
    """Start one world slot (APIs + env server + MCP gateway) on free ports; returns the started WorldSlot.

    `launch`: "fork" (AppWorld servers forked from the warm fork server, the product's default) or "exec";
    `code`: a code-mode run's slot (its gateway spawns its spare REPLs as it starts)."""
    from pathlib import Path

    from green_agent.runtime.slot import SlotSpec, WorldSlot

    env_port, apis_port, gateway_port = free_ports(3)
    slot = WorldSlot(SlotSpec(env_port=env_port, apis_port=apis_port, gateway_port=gateway_port),
                     appworld_root=settings.appworld_root, appworld_python=settings.appworld_python,
                     log_dir=Path(workdir) / "logs", mcp_log_path=settings.agentbeats_mcp_log_path,
                     lock_dir=Path(workdir) / "locks", launch=launch, code_spares_at_start=code)
    return slot.start()


def slot_pids(slot: Any) -> dict[str, int]:
    """Root pid of each process of an owned slot, by role."""
    assert slot.servers is not None
    pids = {"apis": slot.servers.apis.pid, "environment": slot.servers.environment.pid}
    if slot.gateway is not None:
        pids["gateway"] = slot.gateway.pid
    return {role: pid for role, pid in pids.items() if pid is not None}


def dev_tasks(settings: Any, split: str = "dev") -> list[str]:
    """Task ids of `split` (falling back to every task) of the bench's world."""
    datasets = settings.appworld_data / "datasets"
    for name in (split, "all"):
        path = datasets / f"{name}.txt"
        if path.is_file():
            ids = [line.strip() for line in path.read_text().splitlines() if line.strip()]
            if ids:
                return ids
    return sorted(p.name for p in (settings.appworld_data / "tasks").iterdir() if p.is_dir())


def remove_experiments(appworld_root: Any, names: Iterable[str]) -> None:
    """Delete the AppWorld outputs of the bench's own experiments (`<root>/experiments/outputs/<name>`)."""
    import shutil
    from pathlib import Path

    outputs = Path(appworld_root) / "experiments" / "outputs"
    for name in names:
        if name and "/" not in name and name not in (".", ".."):
            shutil.rmtree(outputs / name, ignore_errors=True)
