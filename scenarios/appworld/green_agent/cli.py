"""`appworld-green`: a thin CLI. One module per subcommand group, each calling the package's API.

Each module in `COMMAND_MODULES` exposes `register(subparsers)`, which adds its subcommand(s) and
sets `func(args, settings) -> int` as the parser default. Only this module maps errors to exit
codes: 2 bad input, 3 infrastructure, 4 verdicts that differ when re-judged (`rejudge`), 130 Ctrl-C or
SIGTERM (`kernel.entry` installs both handlers, once, before any subcommand runs). A battle that Blue loses is not a CLI failure.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from green_agent import __version__
from kernel.entry import configure_logging, run_entry_point
from kernel.settings import REPO_ROOT

COMMAND_MODULES: list[str] = [
    "green_agent.commands.compat",
    "green_agent.commands.world",
    "green_agent.commands.battle",
    "green_agent.commands.demo",
    "green_agent.commands.scope_eval",
    "green_agent.commands.analyze",
    "green_agent.commands.mcp",
    "green_agent.commands.agentbeats",
    "green_agent.commands.eval",
    "green_agent.commands.report",
    "green_agent.commands.compare",
    "green_agent.commands.reliability",
    "green_agent.commands.trace",
    "green_agent.commands.rejudge",
    "green_agent.commands.paraphrase",
    "green_agent.commands.a2a",
    "green_agent.commands.doctor",
]
"""Subcommand modules, in help order. Add a module here to add a subcommand."""

QUICK_START: dict[str, str] = {"serve": "green_agent.commands.a2a", "purple": "green_agent.commands.a2a"}
"""Subcommands whose start-up time matters (a platform waits for their agent card), with the module that
registers them: for these, `main` imports that module alone instead of every module in COMMAND_MODULES."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser: every subcommand, or only those of module `only` (a COMMAND_MODULES entry)."""
    parser = argparse.ArgumentParser(
        prog="appworld-green",
        description="Evaluate agents on AppWorld tasks: offline world, battles, scoping, metrics, reports.",
    )
    parser.add_argument("--version", action="version", version=f"appworld-green {__version__}")
    parser.add_argument("--env-file", default=str(REPO_ROOT / ".env"), help="settings file to load (default: .env)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES if only is None else [only]:
        importlib.import_module(module_name).register(subparsers)
    return parser


def command_of(argv: list[str]) -> str | None:
    """The subcommand named in `argv` (the first word that is not a global option or its value), or None."""
    words = iter(argv)
    for word in words:
        if word == "--env-file":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(QUICK_START.get(command_of(argv) or ""))
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return run_entry_point(args, args.func)


if __name__ == "__main__":
    sys.exit(main())
