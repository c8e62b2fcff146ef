"""The reference-careful Blue: the reference Blue, meeting failures the way a careful agent does.

It replays the task's reference solution as `blue_agent.reference` does, under the careful policy
(`blue_agent.careful_policy`, in tools and code mode): a 429 or 503 is retried after its retry-after; after a 504 or
an answer cut short, a read is retried and a write is repeated only if reading the app's state shows it did not
happen (`blue_agent.careful_checks`); an empty page is read again. With `reference` (never retries) and
`reference-retry` (retries any 429, 503 or 504, writes included) it is the third point of one reliability curve
(docs/reliability.md).

Run: `python -m blue_agent.reference_careful --port P [--host 127.0.0.1]`.
"""

from __future__ import annotations

from collections.abc import Sequence

from blue_agent.a2a_server import BlueHandler
from blue_agent.launch import run_blue
from blue_agent.reference import make_handler
from kernel.settings import Settings

NAME = "Reference-careful Blue"
DESCRIPTION = ("Offline Blue Agent: replays the task's reference solution through the AppWorld MCP gateway, retrying "
               "passing failures and repeating a write that got no answer only if reading the state shows it did not "
               "happen.")


def make_careful_handler(settings: Settings) -> BlueHandler:
    return make_handler(settings, policy="careful")


def main(argv: Sequence[str] | None = None) -> int:
    return run_blue(NAME, DESCRIPTION, "reference_careful", make_careful_handler, argv)


if __name__ == "__main__":
    raise SystemExit(main())
