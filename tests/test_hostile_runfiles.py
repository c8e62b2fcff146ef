"""No secret in any run file: after real battles, one of them with a fault, no guard secret, control
secret or battle token is in any file under the run directory, and the children's logs are 0600.

Real processes: a world slot (APIs + env server + gateway) whose logs go to the run directory's
`logs/` (where `appworld-green battle` puts them), the built-in reference Blue started as `battle`
starts it (its log beside them). Battle 1 is the reference Blue solving a task (its log names the
battle's endpoint; the gateway's access log the token's path). Before battle 2 the APIs server is
SIGKILLed: the env server's traceback prints the URL it calls, guarded with the slot's secret. When
the slot and the Blue stopped, every file under the run directory is read.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest

from faults_support import files_text, kill, start_slot
from green_agent.engine.config import BattleChoices
from green_agent.local_battle import open_blue, run_on_slot
from green_agent.models.result import BattleResult
from kernel.settings import Settings

pytest_plugins = ["faults_support"]
pytestmark = pytest.mark.e2e
TOKEN_PATH = re.compile(r"/b/(?!\[REDACTED\])([A-Za-z0-9_-]{8,})")
GUARD_PATH = re.compile(r"/_guard/(?!\[REDACTED\])([A-Za-z0-9_-]{8,})")


def _battle(env: Settings, urls, blue_url: str, run: Path, task: str, name: str) -> BattleResult:  # noqa: ANN001
    choices = BattleChoices(blue="reference", predictor="ground_truth", deadline_s=60)
    return run_on_slot(task, choices, env, urls, blue_url, run / name, name)


def test_no_secret_in_any_file_under_the_run_directory(shared_env: Settings, shared_task: str, tmp_path: Path) -> None:
    env = shared_env.model_copy(update={"agentbeats_mcp_log_path": tmp_path / "run" / "logs" / "calls.jsonl"})
    run = tmp_path / "run"
    with start_slot(env, run / "logs") as slot:
        assert slot.credentials is not None
        secrets = set(slot.credentials.values())
        with open_blue("reference", env, slot.urls, run / "logs") as blue_url:
            first = _battle(env, slot.urls, blue_url, run, shared_task, "runfiles-1")
            assert first.outcome == "passed", first.reason
            assert slot.servers is not None
            kill(slot.servers.apis)
            second = _battle(env, slot.urls, blue_url, run, shared_task, "runfiles-2")
            assert second.status == "infra_error"
    texts = files_text(run)
    assert any("environment-" in name for name in texts) and any("blue-reference" in name for name in texts)
    leaked = [f"{name}: a guard secret" for name, text in texts.items() if any(s in text for s in secrets)]
    leaked += [f"{name}: {m.group(0)[:12]}…" for name, text in texts.items()
               for m in (*TOKEN_PATH.finditer(text), *GUARD_PATH.finditer(text))]
    assert leaked == [], leaked
    logs = [p for p in (run / "logs").iterdir() if p.suffix == ".log"]
    assert logs and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in logs), \
        {p.name: oct(p.stat().st_mode) for p in logs}
