"""`appworld-green`: a thin CLI. One module per subcommand group, each calling the package's API.

Each module in `COMMAND_MODULES` exposes `register(subparsers)`, which adds its subcommand(s) and
sets `func(args, settings) -> int` as the parser default. Only this module maps errors to exit
codes: 2 bad input, 3 infrastructure, 130 Ctrl-C. A battle that Blue loses is not a CLI failure.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys

from green_agent import __version__
from kernel.errors import GreenError
from kernel.settings import REPO_ROOT, Settings, load_settings

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
]
"""Subcommand modules, in help order. Add a module here to add a subcommand."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="appworld-green",
        description="Evaluate agents on AppWorld tasks: offline world, battles, scoping, metrics, reports.",
    )
    parser.add_argument("--version", action="version", version=f"appworld-green {__version__}")
    parser.add_argument("--env-file", default=str(REPO_ROOT / ".env"), help="settings file to load (default: .env)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    restore_default_signals()
    _sigterm_as_interrupt()
    try:
        settings: Settings = load_settings(env_file=args.env_file)
        _scrub_known_secrets(settings)
        return int(args.func(args, settings) or 0)
    except GreenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _scrub_known_secrets(settings: Settings) -> None:
    """Keep the values of configured secrets out of everything this process prints or logs."""
    import os

    from kernel.redaction import register_secrets, scrub_process_output, secrets_in_environment

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    register_secrets([key, *secrets_in_environment(dict(os.environ))])
    scrub_process_output()


def restore_default_signals() -> None:
    """Ctrl-C raises KeyboardInterrupt again, whatever we inherited.

    A shell starts background jobs (`cmd &` in a script) with SIGINT ignored, and an ignored
    disposition survives exec; without this a battle started that way could not be interrupted.
    """
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _sigterm_as_interrupt() -> None:
    """SIGTERM and SIGHUP raise KeyboardInterrupt, so every `finally` runs and child processes are stopped."""
    from kernel.signals import stop_signals_interrupt

    stop_signals_interrupt()


if __name__ == "__main__":
    sys.exit(main())
