"""The reference-retry Blue: the reference Blue, retrying a call that failed with a passing fault.

It replays the task's reference solution exactly as `blue_agent.reference` does, but a call whose failure says it
is passing (HTTP 429, 503, 504: `blue_agent.retry`) is retried after the message's retry-after, up to 3 times, in
tools and code mode. Under a reliability run's default kinds its TGC equals the reference Blue's without faults;
the reference Blue, which never retries, loses tasks. The pair shows that `r_fault` discriminates.

Run: `python -m blue_agent.reference_retry --port P [--host 127.0.0.1]`.
"""

from __future__ import annotations

from collections.abc import Sequence

from blue_agent.a2a_server import BlueHandler
from blue_agent.launch import run_blue
from blue_agent.reference import make_handler
from kernel.settings import Settings

NAME = "Reference-retry Blue"
DESCRIPTION = ("Offline Blue Agent: replays the task's reference solution through the AppWorld MCP gateway, retrying "
               "calls that failed with a passing fault (429, 503, 504).")


def make_retry_handler(settings: Settings) -> BlueHandler:
    return make_handler(settings, policy="retry")


def main(argv: Sequence[str] | None = None) -> int:
    return run_blue(NAME, DESCRIPTION, "reference_retry", make_retry_handler, argv)


if __name__ == "__main__":
    raise SystemExit(main())
