"""Re-judge a saved run: AppWorld's own evaluator, in a fresh process, on each battle's saved end state, and
each battle's call log replayed into a fresh world beside it.

`rejudge_run(path, settings, battle=None, timeout_s=DEFAULT_TIMEOUT_S, run_timeout_s=None)` is the Python API
`appworld-green rejudge` calls:
1. finds the run folder's battles and their recorded verdicts (`discover`);
2. refuses a world that is not the run's (a task folder digest in run.json that differs here: the verdicts
   would be judged against other ground truth);
3. for each battle with a verdict on the agent: checks and stages its saved end state (`state`), replays its
   call log and compares the replayed state with the saved one, has AppWorld's evaluator judge the saved state
   and compares the verdict (`judging`: one AppWorld process, started only when needed, each battle under
   `timeout_s`, past which it is `could_not_rejudge` and the next battle gets a new process; the whole run under
   `run_timeout_s` from the call, start-ups included, default `default_run_timeout`: past it the battle it falls
   in is stopped with the process and the remaining battles are `could_not_rejudge`, listed with the run's limit
   as the reason); infra_error and scope_error battles are listed as not re-judgeable, with why;
4. returns a `RejudgeReport`. A saved state that cannot be judged (missing, edited into something AppWorld's
   change logs never hold, or refused by AppWorld's evaluator) is a difference: the recorded verdict cannot be
   reproduced from what the run saved.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from green_agent.batch.world_digest import task_digests
from green_agent.models.eval_run import RunManifest
from green_agent.models.rejudge import RejudgedBattle, RejudgeReport
from green_agent.rejudge.discover import SavedBattle, SavedRun, discover
from green_agent.rejudge.faults import run_faults
from green_agent.rejudge.judging import (DEFAULT_RUN_TIMEOUT_S, DEFAULT_TIMEOUT_S, RUN_TIMEOUT_PER_BATTLE_S,
                                         BattleJudge, default_run_timeout)
from green_agent.rejudge.state import work_root
from green_agent.rejudge.verdict import not_rejudgeable, tests_text
from green_agent.runfolder.reader import RunFolder
from green_agent.steps.judge import OUTCOME_RULE_VERSION
from kernel.errors import BadInputError
from kernel.settings import Settings
from kernel.world_data import WorldData

__all__ = ["DEFAULT_RUN_TIMEOUT_S", "DEFAULT_TIMEOUT_S", "RUN_TIMEOUT_PER_BATTLE_S", "default_run_timeout",
           "rejudge_run"]


def rejudge_run(path: Path, settings: Settings, battle: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                run_timeout_s: float | None = None) -> RejudgeReport:
    """Re-judge the run folder at `path` (see the module docstring); `battle`: only this battle id or task id;
    `timeout_s`: each battle's limit once AppWorld is ready; `run_timeout_s`: the whole run's (None: the default
    for its number of battles, `default_run_timeout`)."""
    started = time.monotonic()
    run = discover(path)
    world = WorldData(settings.appworld_root).require()
    battles = _selected(run, battle)
    manifest = RunFolder(run.root).manifest() if run.kind == "eval" else None  # read once: the world, faults, notes
    _check_world(manifest, settings, [b.task_id for b in battles if b.task_id])
    if run_timeout_s is None:
        run_timeout_s = default_run_timeout(sum(_without_evaluator(b) is None for b in battles), timeout_s)
    judged: list[RejudgedBattle] = []
    with tempfile.TemporaryDirectory(prefix="rejudge-") as tmp:
        faults = run_faults(manifest, run.results, run.battles[0].result if run.kind == "battle" else None)
        with BattleJudge(settings, work_root(Path(tmp), world.root), world, timeout_s, run_timeout_s,
                         run_started=started, faults=faults) as judge:
            for index, saved in enumerate(battles):
                judged.append(_without_evaluator(saved) or judge.judge(saved, f"rejudge-{index}"))
    rejudged = [b for b in judged if b.status != "not_rejudgeable"]
    return RejudgeReport(run=str(run.root), kind=run.kind, battles=judged, rejudged=len(rejudged),
                         equal=sum(b.status == "equal" for b in rejudged),
                         could_not_rejudge=sum(b.status == "could_not_rejudge" for b in rejudged),
                         not_rejudgeable=len(judged) - len(rejudged), startup_s=round(judge.startup_s, 2),
                         elapsed_s=round(time.monotonic() - started, 2), run_timeout_s=run_timeout_s,
                         notes=_notes(run, manifest))


def _notes(run: SavedRun, manifest: RunManifest | None) -> list[str]:
    """Run-level remarks: an outcome rule other than this Green's, an eval run without a readable results.json."""
    notes = []
    recorded = manifest.provenance.grader.outcome_rule if manifest and manifest.provenance else None
    if recorded is not None and recorded != OUTCOME_RULE_VERSION:
        notes.append(f"the run was graded under outcome rule v{recorded}; this Green applies v{OUTCOME_RULE_VERSION}, "
                     "so an outcome may differ by the rule, not by the state")
    if run.kind == "eval" and run.results is None:
        notes.append("results.json is missing or unreadable: its rows were not checked (`appworld-green report` "
                     "regenerates it from the result.json files)")
    return notes


def _selected(run: SavedRun, battle: str | None) -> list[SavedBattle]:
    if battle is None:
        return run.battles
    chosen = [b for b in run.battles if battle in (b.task_id, b.result.battle_id if b.result else None)]
    if not chosen:
        raise BadInputError(f"--battle {battle}: no battle of {run.root} has that battle id or task id")
    return chosen


def _check_world(manifest: RunManifest | None, settings: Settings, tasks: list[str]) -> None:
    recorded = manifest.task_digests if manifest else {}
    shared = sorted({t for t in tasks if t in recorded})
    here = task_digests(settings.appworld_root, shared)
    differ = [t for t in shared if here[t] != recorded[t]]
    if differ:
        raise BadInputError(f"the world at {settings.appworld_root} is not the one the run used: task(s) "
                            f"{', '.join(differ[:5])} differ from run.json's digests; point APPWORLD_ROOT at the run's "
                            f"world ({manifest.appworld_root if manifest else 'see run.json'})")


def _without_evaluator(saved: SavedBattle) -> RejudgedBattle | None:
    """The entry of a battle that needs no evaluation (unreadable, or not re-judgeable), else None."""
    result = saved.result
    if result is None:
        return RejudgedBattle(battle_id=saved.folder.name, task_id=saved.task_id, trial=saved.trial,
                              result_path=saved.result_path, status="differs", recorded_outcome="unknown",
                              differences=[f"the recorded verdict cannot be checked: {saved.problem}"])
    why = not_rejudgeable(result)
    if why is None:
        return None
    return RejudgedBattle(battle_id=result.battle_id, task_id=saved.task_id, trial=saved.trial,
                          result_path=saved.result_path, status="not_rejudgeable", recorded_outcome=result.outcome,
                          recorded_tests=tests_text(result.evaluation), reason=why)
