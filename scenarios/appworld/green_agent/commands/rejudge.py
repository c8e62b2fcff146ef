"""`appworld-green rejudge RUN`: re-judge every battle of a saved run with AppWorld's own evaluator.

Prints a table (battle, recorded outcome and tests, re-judged ones, equal or what differs) and one line:
"N of N verdicts re-judged equal", or each difference (or only the `RejudgeReport` JSON with --json).
Exit codes: 0 when every re-judged verdict equals the recorded one, 4 when any differs
(`VerdictsDifferError`), 2 for a folder that is not a run or a world that is not the run's, 3 when
AppWorld's evaluator cannot run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from green_agent.models.rejudge import RejudgeReport
from green_agent.rejudge import rejudge_run
from kernel.errors import VerdictsDifferError
from kernel.settings import Settings
from kernel.untrusted import one_line


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("rejudge", help="re-judge a saved run's end states with AppWorld's evaluator "
                                                   "(exit 4 when a verdict differs)")
    parser.add_argument("run", type=Path, help="a run folder (eval --out, assess/serve's RUNS_DIR/a2a-..., a "
                                               "battle's folder) or an assessment's results file")
    parser.add_argument("--battle", metavar="ID", help="only this battle (its battle id or task id)")
    parser.add_argument("--json", action="store_true", help="print only the report JSON on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    report = rejudge_run(args.run, settings, battle=args.battle)
    print(report.model_dump_json(indent=2) if args.json else table(report))
    if not report.all_equal:
        differing = [b.battle_id for b in report.battles if b.status == "differs"]
        raise VerdictsDifferError(f"{len(differing)} verdict(s) of {report.run} differ when re-judged: "
                                  + ", ".join(differing[:10]))
    return 0


def table(report: RejudgeReport) -> str:
    """The terminal table and the closing line(s)."""
    lines = [f"re-judging {report.run} ({report.kind}) with AppWorld's evaluator in a fresh process",
             f"{'battle':<44} {'recorded':<22} {'re-judged':<22} verdict"]
    for b in report.battles:
        recorded = f"{b.recorded_outcome} {b.recorded_tests or ''}".strip()
        again = f"{b.rejudged_outcome or '-'} {b.rejudged_tests or ''}".strip()
        verdict = {"equal": "equal", "differs": "DIFFERS", "not_rejudgeable": "not re-judgeable"}[b.status]
        lines.append(f"{one_line(b.battle_id, 44):<44} {recorded:<22} {again:<22} {verdict}")
    for b in report.battles:
        if b.status == "not_rejudgeable":
            lines.append(f"  {b.battle_id}: not re-judgeable: {b.reason}")
        for difference in b.differences:
            lines.append(f"  {b.battle_id} differs: {one_line(difference, 300)}")
    lines += [f"  note: {note}" for note in report.notes]
    per = [b.seconds for b in report.battles if b.seconds is not None]
    if per:
        lines.append(f"AppWorld's evaluator: start-up {report.startup_s:.1f} s, {sum(per) / len(per):.2f} s per battle "
                     f"on average; {report.elapsed_s:.1f} s in all")
    lines.append(report.headline())
    return "\n".join(lines)
