"""Two runs -> their paired comparison (`appworld-green compare`): checks, per-task pairing, statistics.

Contract: `compare_runs(a, b, ...)` takes two `EvalResults` (read from disk, checked, by the run-folder
reader's `read_eval_results`) and returns a `Comparison`, refusing with `BadInputError` that names
the difference when the runs are not comparable:
- the worlds differ: a shared task whose folder digest (`RunManifest.task_digests`) differs between
  the runs is always refused; for runs written before digests existed, different world roots are
  refused unless `intersect`;
- the splits or the task sets differ: refused unless `intersect`, which compares the shared tasks
  only (and lists the others); no shared task is refused in any case.
A shared task enters the comparison as the headline TGC counts it: every trial of the run's task set,
a trial not judged (or without a result) counting as not passed (`aggregate.passed`); the shared
tasks with such a trial in A or in B are listed (`incomplete_tasks`). The statistics are
`green_agent.stats.compare.paired_difference`, over all tasks and per difficulty. When A ran without faults and B
with them, the comparison carries B's reliability against A (`green_agent.reliability.r_fault`).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from green_agent.batch.aggregate import is_judged, passed
from green_agent.reliability.r_fault import reliability_of
from green_agent.batch.report_html import TRACE_PAGE
from green_agent.models.comparison import Comparison, RunSide, TaskComparison
from green_agent.models.eval_run import EvalResults, EvalRow
from green_agent.batch.scenarios import scenario_of
from green_agent.batch.standard import standard_sentence
from green_agent.stats.compare import paired_difference
from green_agent.stats.intervals import IntervalOptions
from green_agent.stats.power import DEFAULT_POWER
from kernel.errors import BadInputError


def _names(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def check_worlds(a: EvalResults, b: EvalResults, shared: list[str], intersect: bool) -> None:
    """Refuse runs over different worlds (see the module docstring)."""
    da, db = a.manifest.task_digests, b.manifest.task_digests
    if da and db:
        differ = [t for t in shared if t in da and t in db and da[t] != db[t]]
        if differ:
            raise BadInputError(f"the runs saw different worlds: task(s) {_names(differ)} differ between them "
                                f"(A's world {a.manifest.appworld_root}, B's {b.manifest.appworld_root}); "
                                "rerun both on one world")
    elif a.manifest.appworld_root != b.manifest.appworld_root and not intersect:
        raise BadInputError(f"the runs used different worlds (A {a.manifest.appworld_root}, B "
                            f"{b.manifest.appworld_root}) and carry no task digests to tell whether they agree; "
                            "pass --intersect to compare them anyway")


def shared_tasks(a: EvalResults, b: EvalResults, intersect: bool) -> tuple[list[str], list[str], list[str]]:
    """(shared task ids in A's order, only in A, only in B); refuses different splits or task sets."""
    ids_a, ids_b = a.manifest.task_ids, b.manifest.task_ids
    in_b, in_a = set(ids_b), set(ids_a)
    shared = [t for t in ids_a if t in in_b]
    only_a, only_b = [t for t in ids_a if t not in in_b], [t for t in ids_b if t not in in_a]
    split_a, split_b = a.manifest.config.split, b.manifest.config.split
    if not intersect and split_a != split_b:
        raise BadInputError(f"the runs evaluated different splits (A {split_a or 'a task list'}, "
                            f"B {split_b or 'a task list'}); pass --intersect to compare their shared tasks")
    if not intersect and (only_a or only_b):
        raise BadInputError(f"the runs cover different task sets: {len(only_a)} task(s) only in A "
                            f"({_names(only_a) or 'none'}), {len(only_b)} only in B ({_names(only_b) or 'none'}); "
                            f"pass --intersect to compare the {len(shared)} shared task(s)")
    if not shared:
        raise BadInputError("the runs share no task: nothing to compare")
    return shared, only_a, only_b


def _by_task(rows: list[EvalRow]) -> dict[str, list[EvalRow]]:
    grouped: dict[str, list[EvalRow]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: r.trial):
        grouped[row.task_id].append(row)
    return grouped


def pair_tasks(a: EvalResults, b: EvalResults, shared: list[str]) -> tuple[list[TaskComparison], list[str]]:
    """One `TaskComparison` per shared task over each run's trials; the shared tasks with an unjudged trial."""
    rows_a, rows_b = _by_task(a.rows), _by_task(b.rows)
    trials_a, trials_b = a.manifest.config.trials, b.manifest.config.trials
    pairs, incomplete = [], []
    for task in shared:
        ra, rb = rows_a.get(task, []), rows_b.get(task, [])
        if len([r for r in ra if is_judged(r)]) < trials_a or len([r for r in rb if is_judged(r)]) < trials_b:
            incomplete.append(task)
        ca, cb = sum(passed(r) for r in ra), sum(passed(r) for r in rb)
        known = next((r for r in ra + rb if r.difficulty is not None), None)
        pairs.append(TaskComparison(
            task_id=task, scenario_id=scenario_of(task), difficulty=known.difficulty if known else None,
            trials_a=trials_a, passed_a=ca, outcomes_a=[r.outcome for r in ra], reasons_a=[r.reason() for r in ra],
            trials_b=trials_b, passed_b=cb, outcomes_b=[r.outcome for r in rb], reasons_b=[r.reason() for r in rb],
            change="better" if cb / trials_b > ca / trials_a else "worse" if cb / trials_b < ca / trials_a else "same"))
    return pairs, incomplete


def trace_pages(results: EvalResults, run_dir: Path, pairs: list[TaskComparison], side: str) -> None:
    """Fill each pair's `pages_<side>`: the trace page beside each trial's result.json, if it is there (and
    inside the run directory: a result path is the run's text, never followed out of it)."""
    rows = _by_task(results.rows)
    root = Path(run_dir).resolve()
    for pair in pairs:
        pages: list[str | None] = []
        for row in rows.get(pair.task_id, []):
            page = (root / row.result_path).parent.joinpath(TRACE_PAGE).resolve()
            pages.append(str(page) if page.is_relative_to(root) and page.is_file() else None)
        setattr(pair, f"pages_{side}", pages)


def _side(results: EvalResults, path: str) -> RunSide:
    m = results.manifest
    return RunSide(path=path, run_id=m.run_id, blue=m.config.blue, split=m.config.split, trials=m.config.trials,
                   tasks=len(m.task_ids), status=results.status, cost=results.aggregates.cost,
                   standard=results.standard, custom=results.custom)


def standard_note(a: RunSide, b: RunSide) -> str | None:
    """None when both runs are standard; else which is custom and how, said before the verdict."""
    if a.standard and b.standard:
        return None
    sides = [f"{name} is {standard_sentence(side.standard, side.custom)}" for name, side in (("A", a), ("B", b))]
    mixed = " (a standard run compared with a custom one)" if {a.standard, b.standard} == {True, False} else ""
    return (f"Not two standard runs{mixed}: " + "; ".join(sides)
            + ". A difference may come from these settings, not from the agents.")


def _counts(pairs: list[TaskComparison]) -> dict[str, int]:
    counts = {c: sum(p.change == c for p in pairs) for c in ("better", "worse", "same")}
    if all(p.trials_a == 1 and p.trials_b == 1 for p in pairs):
        for name, (in_a, in_b) in {"both": (1, 1), "a_only": (1, 0), "b_only": (0, 1), "neither": (0, 0)}.items():
            counts[name] = sum(p.passed_a == in_a and p.passed_b == in_b for p in pairs)
    return counts


def compare_runs(a: EvalResults, b: EvalResults, path_a: str, path_b: str, intersect: bool = False,
                 options: IntervalOptions = IntervalOptions(), power: float = DEFAULT_POWER,
                 run_dirs: tuple[Path, Path] | None = None) -> Comparison:
    """The paired comparison of run B against run A (see the module docstring); `run_dirs`: where the runs'
    battle folders are, to link each trial's trace page."""
    shared, only_a, only_b = shared_tasks(a, b, intersect)
    check_worlds(a, b, shared, intersect)
    pairs, incomplete = pair_tasks(a, b, shared)
    if run_dirs is not None:
        trace_pages(a, run_dirs[0], pairs, "a")
        trace_pages(b, run_dirs[1], pairs, "b")
    groups: dict[str, list[TaskComparison]] = defaultdict(list)
    for pair in pairs:
        groups[str(pair.difficulty) if pair.difficulty is not None else "unknown"].append(pair)
    side_a, side_b = _side(a, path_a), _side(b, path_b)
    return Comparison(confidence_level=options.level, power=power, a=side_a, b=side_b,
                      standard_note=standard_note(side_a, side_b),
                      intersect=intersect, only_in_a=only_a, only_in_b=only_b, incomplete_tasks=incomplete,
                      counts=_counts(pairs), overall=paired_difference(pairs, options, power),
                      by_difficulty={k: paired_difference(v, options, power) for k, v in sorted(groups.items())},
                      tasks=pairs, reliability=reliability_of(a, b, pairs, path_a, path_b, options))
