"""The code-mode flags `battle` and `eval` share: `--interaction` and `--unsafe-code-in-process`."""

from __future__ import annotations

import argparse
import os

from kernel.settings import Settings

INTERACTION_HELP = ("tools (default: one MCP tool per AppWorld API) | code (the agent writes Python against `apis` "
                    "in a sandboxed REPL, through the gateway's one tool `execute`; see docs/code-mode.md)")
UNSAFE_HELP = ("UNSAFE, code mode only: where no sandbox (bubblewrap) can run, run the agent's code as a plain "
               "process, which can read the task's answers; recorded in every result")


def add_code_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--interaction", choices=("tools", "code"), help=INTERACTION_HELP)
    parser.add_argument("--unsafe-code-in-process", action="store_true", help=UNSAFE_HELP)


def apply_unsafe_choice(args: argparse.Namespace, settings: Settings) -> Settings:
    """`settings` with `--unsafe-code-in-process` applied, passed on to the gateways this command starts too
    (they read it from their own settings, i.e. the environment)."""
    if not getattr(args, "unsafe_code_in_process", False):
        return settings
    os.environ["UNSAFE_CODE_IN_PROCESS"] = "1"
    return settings.model_copy(update={"unsafe_code_in_process": True})
