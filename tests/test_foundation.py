"""Foundation: settings, CLI help, pins, and the agentbeats compatibility layer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from green_agent.cli import main
from kernel.settings import REPO_ROOT, load_settings

VENV_BIN = Path(sys.executable).parent


def test_settings_defaults_are_the_documented_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("APPWORLD_ROOT", "APPWORLD_ENV_URL", "OPENAI_API_KEY", "AGENTBEATS_MCP_LOG_PATH"):
        monkeypatch.delenv(key, raising=False)
    settings = load_settings()
    assert settings.appworld_root == REPO_ROOT / ".appworld"
    assert settings.appworld_env_url == "http://127.0.0.1:8000"
    assert settings.appworld_apis_url == "http://127.0.0.1:9000"
    assert settings.agentbeats_mcp_log_path == REPO_ROOT / "scenarios/appworld/logs/mcp_tool_calls.jsonl"
    assert settings.openai_api_key is None


def test_settings_read_env_file_and_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("APPWORLD_ENV_URL=http://127.0.0.1:8123\nOPENAI_API_KEY=sk-test-not-real\n")
    monkeypatch.setenv("MAX_PREDICTED_APIS", "12")
    settings = load_settings(env_file=env_file)
    assert settings.appworld_env_url == "http://127.0.0.1:8123"
    assert settings.max_predicted_apis == 12
    assert "sk-test-not-real" not in repr(settings)  # the key is a SecretStr
    assert settings.openai_api_key is not None and settings.openai_api_key.get_secret_value() == "sk-test-not-real"


def test_settings_reject_bad_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_PREDICTED_APIS", "0")
    with pytest.raises(ValueError):
        load_settings()


def test_env_example_documents_every_setting() -> None:
    documented = {
        line.split("=", 1)[0].strip().lower()
        for line in (REPO_ROOT / ".env.example").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    }
    from kernel.settings import Settings

    assert set(Settings.model_fields) <= documented


def test_cli_help_lists_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert "appworld-green" in capsys.readouterr().out


def test_console_scripts_answer_help() -> None:
    for argv in ([str(VENV_BIN / "appworld-green"), "--help"], [str(VENV_BIN / "agentbeats"), "--help"],
                 [str(REPO_ROOT / ".venv-appworld/bin/appworld"), "--help"]):
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (argv, proc.stderr[-2000:])


def test_pins_are_the_known_good_ones() -> None:
    import importlib.metadata as md

    assert md.version("agentbeats") == "1.2.6"
    assert md.version("a2a-sdk") == "0.3.6"
    pins = (REPO_ROOT / "requirements.txt").read_text()
    assert "agentbeats==1.2.6" in pins and "a2a-sdk==0.3.6" in pins
    import agentbeats  # noqa: F401


def test_appworld_is_not_in_the_agents_venv() -> None:
    import importlib.util

    assert importlib.util.find_spec("appworld") is None  # pydantic 1 world lives in .venv-appworld only


def test_server_processes_exit_without_teardown_but_with_their_output_flushed() -> None:
    """The gateway and our Blues leave through `exit_without_teardown` once their server loop returns."""
    script = (
        "import atexit, logging, sys\n"
        "from kernel.process_exit import exit_without_teardown\n"
        "logging.basicConfig(stream=sys.stderr, level=logging.INFO)\n"
        "atexit.register(lambda: print('TEARDOWN RAN'))\n"
        "print('served', end='')\n"
        "logging.getLogger('x').info('last record')\n"
        "exit_without_teardown(3)\n"
        "print('not reached')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3
    assert proc.stdout == "served" and "last record" in proc.stderr
