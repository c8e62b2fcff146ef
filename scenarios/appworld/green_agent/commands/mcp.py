"""`appworld-green mcp`: run the AppWorld MCP gateway; its flags and its run live in `mcp_gateway.cli`."""

from __future__ import annotations

import argparse

from mcp_gateway.cli import DESCRIPTION, add_arguments, run


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mcp", help="run the AppWorld MCP gateway (Streamable HTTP /mcp, SSE /sse, call log)", description=DESCRIPTION)
    add_arguments(parser)
    parser.set_defaults(func=run)
