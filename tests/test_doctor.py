"""`appworld-green doctor`: what this machine can run, its lines, its JSON and its exit codes.

The unit tests swap the sandbox probe (`detect_isolation`, whose contract is: an `Isolation` saying the
mechanism, or `unavailable` with the problem) for a fixed answer, and point the settings at an unbuilt
world and a missing AppWorld python; the subprocess test runs the real command on this machine (world
built, bubblewrap installed), then with a PATH that has no `bwrap`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from green_agent.commands.doctor import NOT_READY_EXIT, render
from green_agent.runtime import doctor
from kernel.settings import Settings
from mcp_gateway.code.sandbox import INSTALL_HINT, Isolation

CLI = str(Path(sys.executable).parent / "appworld-green")


def test_a_machine_without_world_or_sandbox_is_told_what_to_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "detect_isolation", lambda python, unsafe=False, choice="auto": Isolation(
        mechanism="unavailable", problem="bubblewrap (`bwrap`) is not installed"))
    settings = Settings(_env_file=None, appworld_root=tmp_path / "aw", appworld_python=tmp_path / "nopython")
    report = doctor.diagnose(settings)
    checks = {c.name: c for c in report.checks}
    assert not checks["world"].ok and checks["world"].fix == "appworld-green world build (or make world)"
    assert not checks["AppWorld virtualenv"].ok and checks["AppWorld virtualenv"].fix == "make venvs"
    assert not checks["code isolation"].ok and checks["code isolation"].needed_for == "code"
    assert not report.tools_ready and not report.code_ready
    assert report.code_refusal == f"bubblewrap (`bwrap`) is not installed. {INSTALL_HINT}"
    lines = render(report, "tools")
    assert any(line.startswith("MISSING world") and "-> appworld-green world build" in line for line in lines)
    assert any(line.startswith("warn    code isolation") for line in lines)  # not needed for tools mode
    assert "NOT ready" in lines[-2] and lines[-1].startswith("warning: code mode would refuse here")
    code_lines = render(report, "code")
    assert any(line.startswith("MISSING code isolation") for line in code_lines)
    assert code_lines[-1] == f"code mode refuses here: {report.code_refusal}"


def test_code_mode_missing_is_only_a_warning_for_tools_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    report = doctor.DoctorReport(checks=[], isolation="no sandbox available: x", isolation_mechanism="unavailable",
                                 code_refusal="x. install it", free_slots=[0], tools_ready=True, code_ready=False)
    assert doctor.ready(report, "tools") and not doctor.ready(report, "code")


def _doctor(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    # without bwrap, bubblewrap is asked for by name: the landlock fallback is tested in test_code_fallback.py
    env = {**os.environ, **({"PATH": path, "CODE_SANDBOX": "bubblewrap"} if path is not None else {})}
    return subprocess.run([CLI, "--env-file", "/dev/null", "doctor", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_the_real_command_on_this_machine(tmp_path: Path) -> None:
    done = _doctor("--interaction", "code", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["tools_ready"] and report["code_ready"] and report["isolation_mechanism"] == "bubblewrap"
    assert report["isolation"].startswith("bubblewrap sandbox (") and report["code_refusal"] is None
    no_bwrap = str(tmp_path)  # an empty PATH: no bwrap (nor chromium, jq), everything else is named by path
    plain = _doctor(path=no_bwrap)
    assert plain.returncode == 0, plain.stdout + plain.stderr  # tools mode does not need the sandbox
    assert "warning: code mode would refuse here" in plain.stdout and "warn    bwrap" in plain.stdout
    refused = _doctor("--interaction", "code", path=no_bwrap)
    assert refused.returncode == NOT_READY_EXIT
    assert "code mode refuses here: bubblewrap (`bwrap`) is not installed." in refused.stdout
    assert "apt-get install bubblewrap" in refused.stdout
