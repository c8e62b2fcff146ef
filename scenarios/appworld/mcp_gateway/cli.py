"""The gateway's command line: `python -m mcp_gateway ARGS` (and `appworld-green mcp ARGS`, which delegates here).

Flags as upstream `appworld serve mcp http`. `add_arguments` declares them on any parser, `run` serves
one gateway from parsed flags and settings, `main` is the gateway's own entry point (settings from
`--env-file`, logging, signals and exit codes as the Green's CLI has them: 2 bad input, 3
infrastructure, 130 Ctrl-C/SIGTERM). The gateway never imports the Green.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from kernel.entry import configure_logging, run_entry_point
from kernel.settings import DEFAULT_GATEWAY_PORT, REPO_ROOT, Settings

if TYPE_CHECKING:
    from mcp_gateway.models import GatewayConfig

DESCRIPTION = ("Serve one MCP tool per AppWorld API, forwarded to an AppWorld APIs server; "
               "every call is appended to the JSONL call log.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The gateway's flags (all optional; unset ones come from settings)."""
    parser.add_argument("--remote-apis-url", help="AppWorld APIs server (default: settings appworld_apis_url)")
    parser.add_argument("--app-names", help="comma-separated apps (default: all except api_docs and admin)")
    parser.add_argument("--port", type=int, default=DEFAULT_GATEWAY_PORT, help=f"default {DEFAULT_GATEWAY_PORT}")
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--log-path", type=Path, help="call log (default: settings agentbeats_mcp_log_path)")
    parser.add_argument("--appworld-root", "--root", dest="appworld_root", type=Path,
                        help="AppWorld root whose api docs define the tools (default: settings appworld_root)")
    parser.add_argument("--output-type", choices=["both", "content_only", "structured_data_only"], default="both",
                        help="tool result form (default both: text for SDK agents + structured)")
    parser.add_argument("--unsafe-code-in-process", action="store_true",
                        help="UNSAFE: run code-mode agent code without a sandbox where no sandbox can run")
    parser.add_argument("--code-spares-at-start", action="store_true",
                        help="spawn the spare REPLs when the gateway starts (a code-mode run), not at its first code "
                             "battle, so that battle's REPL has imported while the slot started")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Serve until stopped, then leave the process at once (`exit_without_teardown`)."""
    from kernel.process_exit import exit_without_teardown
    from mcp_gateway.server import serve

    serve(gateway_config(args, settings))
    exit_without_teardown(0)
    return 0  # not reached


def gateway_config(args: argparse.Namespace, settings: Settings) -> GatewayConfig:
    """The gateway's configuration: the command line over the settings."""
    from mcp_gateway.models import GatewayConfig

    apps = [a.strip() for a in (args.app_names or "").split(",") if a.strip()] or None
    return GatewayConfig(
        remote_apis_url=args.remote_apis_url or settings.appworld_apis_url,
        appworld_root=args.appworld_root or settings.appworld_root,
        log_path=args.log_path or settings.agentbeats_mcp_log_path,
        app_names=apps, host=args.host, port=args.port, output_type=args.output_type,
        appworld_python=settings.appworld_python,
        unsafe_code_in_process=args.unsafe_code_in_process or settings.unsafe_code_in_process,
        code_sandbox=settings.code_sandbox, code_spares=settings.code_spares,
        code_spares_at_start=args.code_spares_at_start,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcp_gateway", description=DESCRIPTION)
    parser.add_argument("--env-file", default=str(REPO_ROOT / ".env"), help="settings file to load (default: .env)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    add_arguments(parser)
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    return run_entry_point(args, run)
