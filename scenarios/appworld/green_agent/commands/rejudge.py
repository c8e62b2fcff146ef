"""`appworld-green rejudge RUN`: re-judge every battle of a saved run with AppWorld's own evaluator.

Prints a table (battle, recorded outcome and tests, re-judged ones, equal or what differs) and one line:
"N of N verdicts re-judged equal", or each difference (or only the `RejudgeReport` JSON with --json).
Each battle's re-judging, its call log's replay included, has `--timeout-s` seconds (default
`DEFAULT_TIMEOUT_S`); past it the battle "could not re-judge: timed out" and the next one goes on. The whole run
has `--run-timeout-s` seconds (default `default_run_timeout`: 600 s, 10 s per battle to re-judge or one battle's
limit, whichever is more); past it AppWorld's process is stopped and the battle it fell in and every later one
"could not re-judge: the run's time limit ... was reached".
Exit codes: 0 when every re-judged verdict equals the recorded one, 4 when any differs or could not be re-judged
(`VerdictsDifferError`), 2 for a folder that is not a run, a world that is not the run's or a bad flag, 3 when
AppWorld's evaluator cannot run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from green_agent.models.rejudge import RejudgeReport
from green_agent.rejudge import DEFAULT_RUN_TIMEOUT_S, DEFAULT_TIMEOUT_S, RUN_TIMEOUT_PER_BATTLE_S, rejudge_run
from kernel.errors import BadInputError, VerdictsDifferError
from kernel.settings import Settings
from kernel.untrusted import one_line

MAX_TIMEOUT_S = 86400.0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("rejudge", help="re-judge a saved run's end states with AppWorld's evaluator "
                                                   "(exit 4 when a verdict differs)")
    parser.add_argument("run", type=Path, help="a run folder (eval --out, assess/serve's RUNS_DIR/a2a-..., a "
                                               "battle's folder) or an assessment's results file")
    parser.add_argument("--battle", metavar="ID", help="only this battle (its battle id or task id)")
    parser.add_argument("--json", action="store_true", help="print only the report JSON on stdout")
    parser.add_argument("--timeout-s", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=f"seconds each battle's re-judging may take (default {DEFAULT_TIMEOUT_S:g}); past them "
                             "the battle could not be re-judged (timed out) and the next one goes on")
    parser.add_argument("--run-timeout-s", type=float, default=None, metavar="S",
                        help=f"seconds the whole run's re-judging may take, AppWorld's start-up included (default "
                             f"{DEFAULT_RUN_TIMEOUT_S:g}, {RUN_TIMEOUT_PER_BATTLE_S:g} per battle to re-judge or "
                             "--timeout-s, whichever is more); past them AppWorld is stopped and the remaining "
                             "battles are listed as not re-judged (exit 4)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    for flag, value in (("--timeout-s", args.timeout_s), ("--run-timeout-s", args.run_timeout_s)):
        if value is not None and not 0 < value <= MAX_TIMEOUT_S:
            raise BadInputError(f"{flag} {value:g}: give seconds above 0 and at most {MAX_TIMEOUT_S:g}")
    report = rejudge_run(args.run, settings, battle=args.battle, timeout_s=args.timeout_s,
                         run_timeout_s=args.run_timeout_s)
    print(report.model_dump_json(indent=2) if args.json else table(report))
    if not report.all_equal:
        differing = [b.battle_id for b in report.battles if b.status == "differs"]
        unfinished = [b.battle_id for b in report.battles if b.status == "could_not_rejudge"]
        parts = [f"{len(differing)} verdict(s) of {report.run} differ when re-judged: " + ", ".join(differing[:10])
                 ] if differing else []
        if unfinished:
            parts.append(f"{len(unfinished)} battle(s) of {report.run} could not be re-judged: "
                         + ", ".join(unfinished[:10]))
        raise VerdictsDifferError("; ".join(parts))
    return 0


def table(report: RejudgeReport) -> str:
    """The terminal table and the closing line(s)."""
    lines = [f"re-judging {report.run} ({report.kind}) with AppWorld's evaluator in a fresh process, each battle's "
             "call log replayed into a fresh world",
             f"{'battle':<44} {'recorded':<22} {'re-judged':<22} verdict"]
    for b in report.battles:
        recorded = f"{b.recorded_outcome} {b.recorded_tests or ''}".strip()
        again = f"{b.rejudged_outcome or '-'} {b.rejudged_tests or ''}".strip()
        verdict = {"equal": "equal", "differs": "DIFFERS", "could_not_rejudge": "NOT RE-JUDGED",
                   "not_rejudgeable": "not re-judgeable"}[b.status]
        lines.append(f"{one_line(b.battle_id, 44):<44} {recorded:<22} {again:<22} {verdict}")
    for b in report.battles:
        if b.status == "not_rejudgeable":
            lines.append(f"  {b.battle_id}: not re-judgeable: {b.reason}")
        if b.status == "could_not_rejudge":
            lines.append(f"  {b.battle_id}: {b.reason}")
        for difference in b.differences:
            lines.append(f"  {b.battle_id} differs: {one_line(difference, 300)}")
    replayed = [b for b in report.battles if b.replay is not None]
    if replayed:
        same = sum(b.replay.startswith("equal") for b in replayed)  # type: ignore[union-attr]
        lines.append(f"call logs replayed: {same} of {len(replayed)} give the saved end state")
    lines += [f"  note: {note}" for note in report.notes]
    per = [b.seconds for b in report.battles if b.seconds is not None]
    replays = [b.replay_seconds for b in report.battles if b.replay_seconds is not None]
    if per:
        replayed = f", its replay {sum(replays) / len(replays):.2f} s" if replays else ""
        lines.append(f"AppWorld: start-up {report.startup_s:.1f} s; per battle {sum(per) / len(per):.2f} s to judge"
                     f"{replayed} on average; {report.elapsed_s:.1f} s in all")
    lines.append(report.headline())
    return "\n".join(lines)
