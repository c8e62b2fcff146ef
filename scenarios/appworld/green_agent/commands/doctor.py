"""`appworld-green doctor [--interaction code] [--json]`: what this machine can run, in a few plain lines.

One line per prerequisite (`green_agent.runtime.doctor`): `ok`, `MISSING` (needed by the mode asked for,
with the command that fixes it) or `warn` (not needed by that mode), then the verdict. Exit 0 when
battle/eval can run in the mode asked for (tools by default; code mode missing is then a warning), 3 when
not (with `--interaction code` and no sandbox: the sentence saying what to install or allow). `--json`
prints the report as one JSON object instead (same exit code).
"""

from __future__ import annotations

import argparse

from green_agent.commands.code_options import UNSAFE_HELP
from green_agent.runtime.doctor import Check, DoctorReport, diagnose, ready
from kernel.settings import Settings

NOT_READY_EXIT = 3


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("doctor", help="say what this machine can run (virtualenvs, world, code sandbox, ports)")
    parser.add_argument("--interaction", choices=("tools", "code"), default="tools",
                        help="the mode that must be ready for exit 0 (default tools; code also needs the sandbox)")
    parser.add_argument("--unsafe-code-in-process", action="store_true", help=UNSAFE_HELP + " (as battle/eval would)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.unsafe_code_in_process:
        settings = settings.model_copy(update={"unsafe_code_in_process": True})
    report = diagnose(settings)
    if args.json:
        print(report.model_dump_json())
    else:
        print("\n".join(render(report, args.interaction)))
    return 0 if ready(report, args.interaction) else NOT_READY_EXIT


def _needed(check: Check, interaction: str) -> bool:
    return check.needed_for == "tools" or (check.needed_for == "code" and interaction == "code")


def render(report: DoctorReport, interaction: str) -> list[str]:
    """The plain lines `doctor` prints."""
    lines = []
    for check in report.checks:
        mark = "ok" if check.ok else ("MISSING" if _needed(check, interaction) else "warn")
        fix = f"  -> {check.fix}" if check.fix else ""
        lines.append(f"{mark:<8}{check.name:<20}{check.detail}{fix}")
    tools = "ready" if report.tools_ready else "NOT ready"
    code = "ready" if report.code_ready else "NOT ready"
    lines.append(f"tools mode (battle/eval): {tools}; code mode (--interaction code): {code}. "
                 f"Agent code would run under: {report.isolation}.")
    if report.code_refusal and interaction == "code":
        lines.append(f"code mode refuses here: {report.code_refusal}")
    elif report.code_refusal:
        lines.append("warning: code mode would refuse here (run `appworld-green doctor --interaction code` for why).")
    return lines
