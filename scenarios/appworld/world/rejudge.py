"""Re-judge saved end states with AppWorld's own evaluator, and replay call logs (runs in `.venv-appworld` only).

Usage: python rejudge.py --root WORK_ROOT

`WORK_ROOT` is an AppWorld root the Green prepared (`green_agent.rejudge.state`): `data` (the world's data
folder, usually a symlink) and `experiments/outputs/<experiment>/tasks/<task_id>/dbs` (a battle's saved end
state, checked and with the world's own redacted values restored). Once AppWorld and every app's API module
are imported, this process writes `{"ready": true}` on stdout, so the time a job takes is the job's alone.
For every JSON line on stdin:
- `{"id": ID, "task_id": TASK, "experiment": NAME}` (an evaluation): it calls `appworld.evaluator.evaluate_task`
  exactly as AppWorld's environment server's `/evaluate` does (suppress_errors, no report written), and
  answers `{"id": ID, "evaluation": <TestTracker.to_dict(stats_only=False)>, "seconds": S}`;
- `{"id": ID, "kind": "replay", ...}`: it replays a battle's calls into a fresh world (`replay.py`) and answers
  `{"id": ID, "replay": <its answer>, "seconds": S}`;
or `{"id": ID, "error": TEXT}`. AppWorld's own prints go to stderr, so stdout holds only these lines. The
in-memory DB cache is reset between jobs, as `appworld.evaluator.evaluate_tasks` does. Exits when stdin
closes. A job that never ends (a saved state whose SQL runs forever) is the Green's to stop: it kills this
process at its time limit.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Re-judge saved end states with AppWorld's evaluator.")
    parser.add_argument("--root", required=True, help="the work root the Green prepared")
    args = parser.parse_args(argv)
    os.environ["APPWORLD_ROOT"] = os.path.abspath(args.root)
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout = sys.stderr  # AppWorld's prints never mix with our answers
    from appworld.apps import get_all_apps
    from appworld.apps.model_lib import CachedDBHandler
    from appworld.common.utils import import_apis_module
    from appworld.evaluator import evaluate_task
    from replay import replay

    for app in get_all_apps():  # what the first world or evaluation would import, before the clock starts
        import_apis_module(app)
    CachedDBHandler.reset()
    answers.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        try:
            job = json.loads(line)
            job_id, task_id, experiment = str(job["id"]), str(job["task_id"]), str(job["experiment"])
            kind = job.get("kind", "evaluate")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            answers.write(json.dumps({"id": None, "error": f"bad job line: {exc}"}) + "\n")
            continue
        started = os.times().elapsed  # not time.monotonic: AppWorld's frozen clock patches it
        try:
            if kind == "replay":
                answer = {"id": job_id, "replay": replay(job)}
            else:
                tracker = evaluate_task(task_id=task_id, experiment_name=experiment, suppress_errors=True,
                                        save_report=False)
                answer = {"id": job_id, "evaluation": tracker.to_dict(stats_only=False)}
            answer["seconds"] = round(os.times().elapsed - started, 3)
        except Exception as exc:  # noqa: BLE001 - the saved state could not be evaluated: say why
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            answer = {"id": job_id, "error": last[:2000]}
        finally:
            CachedDBHandler.reset()
        answers.write(json.dumps(answer, default=str) + "\n")
    return 0


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)  # a world's client threads outlive it (AppWorld's TestClient portal): do not wait for them
