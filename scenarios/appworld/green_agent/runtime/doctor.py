"""What this machine can run (`appworld-green doctor`): each prerequisite, present or not, and its fix.

`diagnose(settings)` checks, without starting anything: the Green's virtualenv (`.venv`, `make venvs`), the
AppWorld virtualenv (its python imports `appworld`), the built world (`appworld-green world build`), the
isolation code mode would use (the sandbox module's own `detect_isolation`: the same probe a code-mode
battle makes, so the two never disagree; bubblewrap, else the landlock fallback, or the one `code_sandbox`
forces), `bwrap` (needed unless the fallback is in force), `chromium` and `jq` on PATH, and which world slots'
ports are free. Each `Check` says what it is `needed_for`: `tools` (battle/eval in tools mode), `code`
(code mode, on top of tools) or `extra` (tests and optional tools). `ready(report, interaction)` is True
when everything the mode needs is there.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from green_agent.runtime.slot import SlotSpec
from kernel.ports import port_is_free
from kernel.settings import (DEFAULT_APIS_PORT, DEFAULT_ENV_PORT, DEFAULT_GATEWAY_PORT, MAX_SLOTS, REPO_ROOT,
                             SLOT_PORT_STRIDE, Interaction, Settings)
from mcp_gateway.code.sandbox import INSTALL_HINT, Mechanism, detect_isolation

APPWORLD_IMPORT_TIMEOUT_S = 60.0
NeededFor = Literal["tools", "code", "extra"]


class Check(BaseModel):
    """One prerequisite."""

    name: str = Field(description="What was checked, e.g. `world`.")
    ok: bool = Field(description="Present and usable.")
    needed_for: NeededFor = Field(description="tools: battle/eval | code: code mode too | extra: tests, optional.")
    detail: str = Field(description="What was found (a path, a version, the reason it is missing).")
    fix: str | None = Field(default=None, description="The command that fixes it, when it is missing.")


class DoctorReport(BaseModel):
    """Everything `doctor` found."""

    checks: list[Check] = Field(description="Every prerequisite, in the order printed.")
    isolation: str = Field(description="The isolation code mode would run agent code under (its summary).")
    isolation_mechanism: Mechanism = Field(description="bubblewrap | landlock | unsafe_in_process | unavailable.")
    code_refusal: str | None = Field(default=None, description="The sentence code mode refuses with, if it would.")
    free_slots: list[int] = Field(description="World slots whose three ports are all free.")
    tools_ready: bool = Field(description="battle/eval in tools mode can run here.")
    code_ready: bool = Field(description="battle/eval --interaction code can run here.")


def _venv_check() -> Check:
    venv = REPO_ROOT / ".venv"
    ok = (venv / ".installed").is_file() and (venv / "bin" / "appworld-green").exists()
    return Check(name="Green virtualenv", ok=ok, needed_for="tools",
                 detail=f"{venv} ({'installed' if ok else 'missing or not installed'})", fix=None if ok else "make venvs")


def _appworld_venv_check(python: Path) -> Check:
    detail = f"{python} (imports appworld)"
    try:
        probe = subprocess.run([str(python), "-c", "import appworld"], capture_output=True, text=True,
                               timeout=APPWORLD_IMPORT_TIMEOUT_S)
        if probe.returncode != 0:
            detail = f"{python} cannot import appworld: {(probe.stderr.strip().splitlines() or ['?'])[-1][:200]}"
    except (OSError, subprocess.SubprocessError) as exc:
        detail = f"{python} does not run: {type(exc).__name__}"
    ok = detail.endswith("(imports appworld)")
    return Check(name="AppWorld virtualenv", ok=ok, needed_for="tools", detail=detail,
                 fix=None if ok else "make venvs")


def _world_check(root: Path) -> Check:
    data = root / "data"
    ok = (data / "tasks").is_dir() and (data / ".built").is_file()
    return Check(name="world", ok=ok, needed_for="tools", detail=f"{data} ({'built' if ok else 'not built'})",
                 fix=None if ok else "appworld-green world build (or make world)")


def _program_check(program: str, needed_for: NeededFor, why: str, fix: str) -> Check:
    path = shutil.which(program)
    return Check(name=program, ok=path is not None, needed_for=needed_for,
                 detail=path or f"not on PATH ({why})", fix=None if path else fix)


def _free_slots() -> list[int]:
    free = []
    for index in range(MAX_SLOTS):
        spec = SlotSpec.for_index(index)
        if all(port_is_free(p) for p in (spec.env_port, spec.apis_port, spec.gateway_port)):
            free.append(index)
    return free


def diagnose(settings: Settings) -> DoctorReport:
    """Check every prerequisite (see the module docstring); starts nothing, changes nothing."""
    isolation = detect_isolation(str(settings.appworld_python), settings.unsafe_code_in_process, settings.code_sandbox)
    refusal = f"{isolation.problem}. {INSTALL_HINT}" if isolation.mechanism == "unavailable" else None
    free = _free_slots()
    checks = [
        _venv_check(), _appworld_venv_check(settings.appworld_python), _world_check(settings.appworld_root),
        Check(name="code isolation", ok=refusal is None, needed_for="code", detail=isolation.summary(),
              fix=None if refusal is None else "make sandbox, or allow user namespaces, or what the landlock fallback "
                                               "needs (docs/security.md)"),
        _program_check("bwrap", "extra" if isolation.mechanism == "landlock" else "code",
                       "the sandbox of code mode; the landlock fallback does without it", "make sandbox"),
        _program_check("chromium", "extra", "the HTML report's test opens it", "make browser"),
        _program_check("jq", "extra", "the leaderboard merge's test runs it", "make browser"),
        Check(name="world-slot ports", ok=bool(free), needed_for="extra",
              detail=f"{len(free)} of {MAX_SLOTS} slots free ({', '.join(map(str, free)) or 'none'}; slot k uses "
                     f"ports {DEFAULT_ENV_PORT}/{DEFAULT_APIS_PORT}/{DEFAULT_GATEWAY_PORT} + {SLOT_PORT_STRIDE}k); a busy slot may be a world that is up: battle attaches to it",
              fix=None if free else "appworld-green world down"),
    ]
    tools_ready = all(c.ok for c in checks if c.needed_for == "tools")
    return DoctorReport(checks=checks, isolation=isolation.summary(), isolation_mechanism=isolation.mechanism,
                        code_refusal=refusal, free_slots=free, tools_ready=tools_ready,
                        code_ready=tools_ready and refusal is None)


def ready(report: DoctorReport, interaction: Interaction) -> bool:
    """True if `battle`/`eval` in `interaction` mode can run on this machine."""
    return report.code_ready if interaction == "code" else report.tools_ready
