"""Scenarios of a run: AppWorld's SGC unit, judged against the task set the run was meant to cover.

Contract (pure functions over rows and the expected (task, trial) keys):
- A scenario is the task id before the last '_'. A scenario-trial is *complete* when every task of
  the scenario that the run lists (its manifest) has a judged row in that trial; a task with no
  result at all (deleted, not run yet), an infra error or a scope error makes it *incomplete*.
- SGC counts complete scenario-trials only; an incomplete one is never passed.
- A scenario's status over all trials: `incomplete` if any of its scenario-trials is incomplete,
  else `passed` if every task passed in every trial, else `failed`.
- Without expected keys (hand-made rows), the rows themselves are taken as the task set.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Literal, NamedTuple

from green_agent.models.eval_run import EvalRow

ScenarioStatus = Literal["passed", "failed", "incomplete"]


class SgcCounts(NamedTuple):
    """Scenario-trials counted (complete), of which passed, and left out as incomplete."""

    counted: int
    passed: int
    incomplete: int


def scenario_of(task_id: str) -> str:
    """AppWorld's scenario id: the task id before the last '_' (`82e2fac_1` -> `82e2fac`)."""
    return task_id.rsplit("_", 1)[0]


def _trial_groups(rows: Iterable[EvalRow], expected: Iterable[tuple[str, int]] | None
                  ) -> dict[tuple[str, int], list[EvalRow | None]]:
    """(scenario, trial) -> one entry per expected task: its row, or None when it has none."""
    by_key = {(r.task_id, r.trial): r for r in rows}
    keys = list(expected) if expected is not None else list(by_key)
    groups: dict[tuple[str, int], list[EvalRow | None]] = defaultdict(list)
    for task_id, trial in keys:
        groups[(scenario_of(task_id), trial)].append(by_key.get((task_id, trial)))
    return groups


UNJUDGED = ("infra_error", "scope_error")
"""Outcomes that are not the agent's (a broken service, an enforced scope that refused it a gold API)."""


def _complete(members: list[EvalRow | None]) -> bool:
    return all(m is not None and m.outcome not in UNJUDGED for m in members)


def sgc_counts(rows: Iterable[EvalRow], expected: Iterable[tuple[str, int]] | None = None) -> SgcCounts:
    """Complete scenario-trials, of which passed, and incomplete ones (see the module docstring)."""
    counted = passed = incomplete = 0
    for members in _trial_groups(rows, expected).values():
        if not _complete(members):
            incomplete += 1
            continue
        counted += 1
        passed += all(m.passed for m in members if m is not None)
    return SgcCounts(counted, passed, incomplete)


def sgc_units(rows: Iterable[EvalRow], expected: Iterable[tuple[str, int]] | None = None
              ) -> tuple[list[float], list[str]]:
    """The units SGC is the mean of: (passed 1.0 / not 0.0, scenario) per scenario-trial; an incomplete one is not passed."""
    values, clusters = [], []
    for (scenario, _), members in _trial_groups(rows, expected).items():
        values.append(float(_complete(members) and all(m.passed for m in members if m is not None)))
        clusters.append(scenario)
    return values, clusters


def scenario_statuses(rows: Iterable[EvalRow], expected: Iterable[tuple[str, int]] | None = None
                      ) -> dict[str, ScenarioStatus]:
    """scenario id -> passed | failed | incomplete, over every trial (sorted by scenario id)."""
    verdicts: dict[str, list[ScenarioStatus]] = defaultdict(list)
    for (scenario, _), members in _trial_groups(rows, expected).items():
        if not _complete(members):
            verdicts[scenario].append("incomplete")
        else:
            verdicts[scenario].append("passed" if all(m.passed for m in members if m is not None) else "failed")
    return {s: ("incomplete" if "incomplete" in v else "failed" if "failed" in v else "passed")
            for s, v in sorted(verdicts.items())}
