"""Code mode's prerequisite: a sandbox, or a refusal that says what to install, before anything starts.

`shutil.which` is patched to stand in for a machine without bubblewrap (its contract: the path of an
executable on PATH, or None), and `confine.landlock_abi` for a kernel without Landlock (its contract: the
kernel's Landlock ABI, 0 when it has none); the CLI test really runs `appworld-green` with a PATH that has
no `bwrap`. Where bubblewrap is missing but the landlock fallback can run, auto picks the fallback
(`test_code_fallback.py`): these tests ask for bubblewrap by name, or take Landlock away too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernel.settings import load_settings
from mcp_gateway.code import confine, sandbox
from mcp_gateway.code.sandbox import SandboxUnavailable, default_python, require_isolation

CLI = str(Path(sys.executable).parent / "appworld-green")


@pytest.fixture()
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    sandbox.detect_isolation.cache_clear()
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    yield
    sandbox.detect_isolation.cache_clear()


def test_without_bubblewrap_code_mode_refuses_with_what_to_install(no_bwrap: None) -> None:
    with pytest.raises(SandboxUnavailable) as caught:
        require_isolation(default_python(), choice="bubblewrap")
    message = str(caught.value)
    assert "bubblewrap (`bwrap`) is not installed" in message and "apt-get install bubblewrap" in message
    assert "--unsafe-code-in-process" in message and "landlock fallback" in message


def test_without_bubblewrap_nor_landlock_the_refusal_names_both(no_bwrap: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confine, "landlock_abi", lambda: 0)
    with pytest.raises(SandboxUnavailable) as caught:
        require_isolation(default_python())
    assert str(caught.value).startswith("bubblewrap (`bwrap`) is not installed; and the landlock fallback cannot run: "
                                        "this kernel has no Landlock")


def test_the_unsafe_choice_is_named_as_such(no_bwrap: None) -> None:
    isolation = require_isolation(default_python(), unsafe_in_process=True, choice="bubblewrap")
    assert isolation.mechanism == "unsafe_in_process" and isolation.summary().startswith("NO sandbox")


def test_the_cli_refuses_before_starting_anything(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(Path(sys.executable).parent), "RUNS_DIR": str(tmp_path / "runs"), "CODE_SANDBOX": "bubblewrap",
           "APPWORLD_ROOT": str(load_settings().appworld_root)}
    proc = subprocess.run([CLI, "battle", "--task-id", "1", "--blue", "noop", "--interaction", "code",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "apt-get install bubblewrap" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out" / "result.json").exists()
