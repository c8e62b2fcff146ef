"""Command-line entry shared by the offline Blues: `python -m blue_agent.<name> --port P [--host H]`."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable, Sequence

from blue_agent.a2a_server import BlueHandler, make_card, serve
from kernel.process_exit import exit_without_teardown
from kernel.settings import Settings, load_settings

DEFAULT_HOST = "127.0.0.1"


def run_blue(name: str, description: str, skill_id: str, make_handler: Callable[[Settings], BlueHandler],
             argv: Sequence[str] | None = None) -> int:
    """Parse `--host/--port`, read settings, and serve the Blue until interrupted. Returns an exit code."""
    parser = argparse.ArgumentParser(prog=f"python -m blue_agent.{skill_id}", description=description)
    parser.add_argument("--host", default=DEFAULT_HOST, help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, required=True, help="port of the A2A server")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    settings = load_settings()
    card = make_card(name, description, f"http://{args.host}:{args.port}/", skill_id)
    serve(card, make_handler(settings), args.host, args.port)
    exit_without_teardown(0)
    return 0  # not reached
