"""Evals that several test files read, made once per session (per xdist worker) by conftest's fixtures.

Each is the run its readers made on their own before, through the same command line (`run_eval` of
tests/test_scope_policy_e2e.py: `appworld-green eval`, the reference Blue, the lexical scope, one slot on this
worker's ports). Readers never change a shared run; a test that must change one copies it first (as
tests/test_rejudge_e2e.py does). The files that read one are one xdist work unit (`workers.SHARED_UNITS`),
so one worker makes it, once.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from green_agent.models.eval_run import EvalResults

ENFORCED_TASKS = ["f0f4d44_1", "f0f4d44_2"]
"""On f0f4d44_2 the lexical predictor leaves out gold APIs; f0f4d44_1 is passed under any policy."""


class SharedEval(NamedTuple):
    """A finished eval: its run folder and its results.json."""

    out: Path
    results: EvalResults


def enforced_tools_eval(root: Path, tmp: Path) -> SharedEval:
    """Tools mode, `--scope-policy enforce`, the standard deadline (tests/test_scope_policy_e2e.py reads its
    verdicts, tests/test_rejudge_e2e.py re-judges it and checks that it is custom for the policy alone)."""
    from test_scope_policy_e2e import run_eval

    return SharedEval(tmp / "enforce", run_eval(root, tmp, "enforce", ENFORCED_TASKS, "--scope-policy", "enforce",
                                                deadline=None))


def enforced_code_eval(root: Path, tmp: Path) -> SharedEval:
    """Code mode, `--scope-policy enforce`, f0f4d44_2 alone (tests/test_code_mode_e2e.py reads its calls,
    tests/test_trace_e2e.py its trace)."""
    from test_scope_policy_e2e import run_eval

    return SharedEval(tmp / "enforce", run_eval(root, tmp, "enforce", ENFORCED_TASKS[1:], "--interaction", "code",
                                                "--scope-policy", "enforce"))
