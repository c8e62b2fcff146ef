"""The reference-reckless Blue: the reference Blue, repeating every failed call at once.

It replays the task's reference solution as `blue_agent.reference` does, but any call that failed, whatever the
failure, is called again at once, up to 10 times (`blue_agent.retry.reckless`, in tools and code mode): no
retry-after honoured, no timed-out write checked. It stands for the agent that retries everything without limit,
beside `reference`, `reference-retry` and `reference-careful` on one reliability curve (docs/reliability.md): it
should score no better than `reference-retry`, at visibly more calls per task.

Run: `python -m blue_agent.reference_reckless --port P [--host 127.0.0.1]`.
"""

from __future__ import annotations

from collections.abc import Sequence

from blue_agent.a2a_server import BlueHandler
from blue_agent.launch import run_blue
from blue_agent.reference import make_handler
from kernel.settings import Settings

NAME = "Reference-reckless Blue"
DESCRIPTION = ("Offline Blue Agent: replays the task's reference solution through the AppWorld MCP gateway, calling "
               "any failed call again at once, up to 10 times.")


def make_reckless_handler(settings: Settings) -> BlueHandler:
    return make_handler(settings, policy="reckless")


def main(argv: Sequence[str] | None = None) -> int:
    return run_blue(NAME, DESCRIPTION, "reference_reckless", make_reckless_handler, argv)


if __name__ == "__main__":
    raise SystemExit(main())
