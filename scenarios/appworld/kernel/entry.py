"""What every entry point does at start-up, written once: logging, signals, known secrets.

Called by `green_agent.cli.main` (`appworld-green`) and `mcp_gateway.cli.main` (`python -m
mcp_gateway`), never by library code: handlers and logging belong to the process, not to a module.

- `configure_logging`: one format, on stderr (stdout is for `--json` output).
- `install_interrupt_signals`: Ctrl-C raises KeyboardInterrupt again whatever we inherited, and
  SIGTERM and SIGHUP (`TERMINATING`: a closed terminal, a lost SSH session) raise it too, so every
  `finally` (cleanup, result.json, child processes) runs and the exit is 130.
- `scrub_configured_secrets`: the values of configured secrets never reach this process's output.
- `run_entry_point`: the three above around one command, our errors printed as `error: ...` with their
  exit code (no traceback), Ctrl-C / SIGTERM / SIGHUP as `interrupted` and 130.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType

from kernel.errors import GreenError
from kernel.settings import Settings, load_settings

TERMINATING = (signal.SIGTERM, signal.SIGHUP)
"""Signals that mean "stop now, cleanly": both raise KeyboardInterrupt like Ctrl-C."""
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(verbose: bool) -> None:
    """Log to stderr, at DEBUG with `verbose`, else INFO."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format=LOG_FORMAT, stream=sys.stderr)


def install_interrupt_signals() -> None:
    """SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt in the main thread.

    A shell starts background jobs (`cmd &` in a script) with SIGINT ignored, and an ignored
    disposition survives exec; without restoring it a battle started that way could not be interrupted.
    """
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _sigterm_handler)
    signal.signal(signal.SIGHUP, _sigterm_handler)  # `TERMINATING`: a closed terminal is a SIGTERM


def _sigterm_handler(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def scrub_configured_secrets(settings: Settings) -> None:
    """Keep the values of configured secrets out of everything this process prints or logs."""
    from kernel.scrubber import register_secrets, scrub_process_output, secrets_in_environment

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    register_secrets([key, *secrets_in_environment(dict(os.environ))])
    scrub_process_output()


def run_entry_point(args: argparse.Namespace, command: Callable[[argparse.Namespace, Settings], int | None]) -> int:
    """Signals, settings (`args.env_file`) and secrets, then `command`; its exit code, or our error's."""
    install_interrupt_signals()
    try:
        settings = load_settings(env_file=args.env_file)
        scrub_configured_secrets(settings)
        return int(command(args, settings) or 0)
    except GreenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
