"""Re-judge saved end states with AppWorld's own evaluator (runs in `.venv-appworld` only).

Usage: python rejudge.py --root WORK_ROOT

`WORK_ROOT` is an AppWorld root the Green prepared (`green_agent.rejudge.state`): `data` (the world's data
folder, usually a symlink) and `experiments/outputs/<experiment>/tasks/<task_id>/dbs` (a battle's saved end
state, checked and with the world's own redacted values restored). For every JSON line on stdin
`{"id": ID, "task_id": TASK, "experiment": NAME}` this process calls `appworld.evaluator.evaluate_task`
exactly as AppWorld's environment server's `/evaluate` does (suppress_errors, no report written), and answers
one JSON line on stdout: `{"id": ID, "evaluation": <TestTracker.to_dict(stats_only=False)>, "seconds": S}` or
`{"id": ID, "error": TEXT}`. AppWorld's own prints go to stderr, so stdout holds only these lines. The
in-memory DB cache is reset between battles, as `appworld.evaluator.evaluate_tasks` does. Exits when stdin
closes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Re-judge saved end states with AppWorld's evaluator.")
    parser.add_argument("--root", required=True, help="the work root the Green prepared")
    args = parser.parse_args(argv)
    os.environ["APPWORLD_ROOT"] = os.path.abspath(args.root)
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout = sys.stderr  # AppWorld's prints never mix with our answers
    from appworld.apps.model_lib import CachedDBHandler
    from appworld.evaluator import evaluate_task

    CachedDBHandler.reset()
    for line in sys.stdin:
        try:
            job = json.loads(line)
            job_id, task_id, experiment = str(job["id"]), str(job["task_id"]), str(job["experiment"])
        except (ValueError, KeyError, TypeError) as exc:
            answers.write(json.dumps({"id": None, "error": f"bad job line: {exc}"}) + "\n")
            continue
        started = time.monotonic()
        try:
            tracker = evaluate_task(task_id=task_id, experiment_name=experiment, suppress_errors=True,
                                    save_report=False)
            answer = {"id": job_id, "evaluation": tracker.to_dict(stats_only=False),
                      "seconds": round(time.monotonic() - started, 3)}
        except Exception as exc:  # noqa: BLE001 - the saved state could not be evaluated: say why
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            answer = {"id": job_id, "error": last[:2000]}
        finally:
            CachedDBHandler.reset()
        answers.write(json.dumps(answer, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
