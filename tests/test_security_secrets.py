"""Secrets never reach an output: the world's account passwords and a fake OpenAI key, seeded, then searched for.

Seeded: every account password of the world (admin/supervisor `account_passwords` tables of the
base DBs and the task DBs' inserts, read from disk), a fake `OPENAI_API_KEY` in the environment
(and the settings), and one password in an extra environment variable. The LLM scope predictor
is on (`--predictor auto` with the key), pointed at a dead loopback OpenAI endpoint with a test-only
model name, so the key is used and its failure is reported (and nothing is cached).
Then, on one healthy slot with the reference Blue (which reads the passwords through
`supervisor__show_account_passwords` and logs in with them through the gateway):
- `appworld-green battle` as a subprocess: stdout, stderr and every file of its run directory;
- a battle reporting to a recording AgentBeats backend: the event bodies the backend received
  (what it would store as the battle record);
- a split evaluation (`green_agent.batch.evaluate.run_eval`, the API behind `appworld-green eval`):
  results.json, agentbeats_results.json, report.html and every other file of the run;
- the gateway's shared call log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pydantic import SecretStr

from faults_support import FAKE_OPENAI_KEY, RecordingServer, files_text, leaks, world_passwords
from green_agent.engine.config import BattleChoices
from green_agent.agentbeats.reporter import BackendReporter
from green_agent.batch.evaluate import EvalRequest, run_eval
from green_agent.batch.live import SlotEnv
from green_agent.local_battle import open_blue, run_on_slot
from kernel.ports import free_port
from kernel.settings import Settings
from green_agent.runtime.slot import WorldSlot

pytest_plugins = ["faults_support"]
pytestmark = pytest.mark.e2e
TEST_MODEL = "secret-scan-test-model"


@pytest.fixture(scope="module")
def secrets(shared_env: Settings) -> set[str]:
    found = world_passwords(shared_env.appworld_root)
    assert len(found) >= 3, "expected the world to hold account passwords"
    return found | {FAKE_OPENAI_KEY}


@pytest.fixture(scope="module")
def keyed(shared_env: Settings) -> Settings:
    """The shared settings with the fake key and a dead OpenAI endpoint."""
    return shared_env.model_copy(update={"openai_api_key": SecretStr(FAKE_OPENAI_KEY), "scope_model": TEST_MODEL,
                                         "openai_base_url": f"http://127.0.0.1:{free_port()}/v1"})


def _cli_env(settings: Settings, password: str) -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": FAKE_OPENAI_KEY, "OPENAI_BASE_URL": settings.openai_base_url or "",
            "SCOPE_MODEL": TEST_MODEL, "APPWORLD_ROOT": str(settings.appworld_root), "RUNS_DIR": str(settings.runs_dir),
            "DEFAULT_SPLIT": settings.default_split, "AGENTBEATS_MCP_LOG_PATH": str(settings.agentbeats_mcp_log_path),
            "SEEDED_ACCOUNT_PASSWORD": password}


def test_cli_battle_outputs_hold_no_secret(keyed: Settings, shared_slot: WorldSlot, shared_task: str,
                                           secrets: set[str], tmp_path: Path) -> None:
    run_dir = tmp_path / "cli-run"
    urls = shared_slot.urls
    argv = [str(Path(sys.executable).parent / "appworld-green"), "--env-file", "/dev/null", "-v", "battle",
            "--task-id", shared_task, "--blue", "reference", "--predictor", "auto", "--env-url", urls.env_url,
            "--apis-url", urls.apis_url, "--gateway-url", urls.gateway_url or "", "--out", str(run_dir),
            "--deadline", "120", "--json"]
    done = subprocess.run(argv, env=_cli_env(keyed, sorted(secrets)[0]), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["status"] == "completed" and result["scope"]["fallback_reason"], result["reason"]  # the key was used
    assert result["trajectory"]["calls_per_tool"].get("supervisor__show_account_passwords")  # passwords flowed
    texts = {"stdout": done.stdout, "stderr": done.stderr, **files_text(run_dir)}
    assert (run_dir / "logs").is_dir() and len(texts) > 5
    assert leaks(texts, secrets) == []


def test_backend_record_holds_no_secret(keyed: Settings, shared_slot: WorldSlot, shared_task: str,
                                        secrets: set[str]) -> None:
    with RecordingServer(status=204) as backend, \
            open_blue("reference", keyed, shared_slot.urls, keyed.runs_dir / "secret-blue") as blue_url:
        reporter = BackendReporter("secret-battle", backend.url)
        choices = BattleChoices(blue="reference", predictor="auto", deadline_s=120)
        result = run_on_slot(shared_task, choices, keyed, shared_slot.urls, blue_url, keyed.runs_dir / "secret-battle",
                             "secret-battle", [reporter])
        reporter.progress("extra progress event", {"note": "detail"})
    assert result.status == "completed" and reporter.result_posted, result.reason
    bodies = {f"backend {i}": r["body"] for i, r in enumerate(backend.requests)}
    assert any('"is_result": true' in body or '"is_result":true' in body for body in bodies.values())
    assert leaks(bodies, secrets) == []
    assert leaks(files_text(Path(result.run_dir or "")), secrets) == []


@contextmanager
def _attached_slot(settings: Settings, slot: WorldSlot, index: int) -> Iterator[SlotEnv]:
    """run_eval's slot factory, attached to the running shared slot (the real one starts a new slot)."""
    with open_blue("reference", settings, slot.urls, settings.runs_dir / f"eval-blue-{index}") as blue_url:
        yield SlotEnv(urls=slot.urls, blue_url=blue_url, settings=settings)


def test_eval_outputs_hold_no_secret(keyed: Settings, shared_slot: WorldSlot, shared_task: str,
                                     secrets: set[str], tmp_path: Path) -> None:
    out = tmp_path / "eval"
    request = EvalRequest(task_ids=[shared_task], choices=BattleChoices(blue="reference", predictor="auto", deadline_s=120),
                          out=out, max_infra_retries=0)
    outcome = run_eval(request, keyed, factory=lambda index: _attached_slot(keyed, shared_slot, index))
    assert outcome.ran == 1 and not outcome.interrupted
    texts = files_text(out)
    assert {"results.json", "report.html"} <= {Path(p).name for p in texts}
    assert "completed" in texts[str(out / "results.json")]
    assert leaks(texts, secrets) == []


def test_shared_call_log_holds_no_secret(shared_env: Settings, secrets: set[str]) -> None:
    """Runs after the battles above: their logins went through the gateway with real passwords."""
    log = shared_env.agentbeats_mcp_log_path.read_text()
    assert "login" in log and "[REDACTED]" in log
    assert leaks({"call log": log}, secrets) == []
