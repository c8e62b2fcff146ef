"""A purple for the leaderboard test: solves the tasks it is told to (the reference solution), gives up on the rest
(the no-op), and reports a fixed usage with every reply, so a run has known, non-trivial figures and costs.

Contract it stands for: any A2A purple speaking `appworld-a2a-tools/1` (our shared purple server) that
puts `kernel.a2a_usage` metadata on its replies. Run as a process:
    python tests/mixed_purple.py --port P --solve TASK,TASK [--usage-cost 0.002] [--usage-by-task JSON]
Every reply reports {"model": "scripted-purple", "input_tokens": 100, "output_tokens": 10, "cost_usd": C}, or
for a task named in --usage-by-task ({task_id: anything}) exactly that value as `usage` (hostile usage tests).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from blue_agent.purple import noop, reference
from blue_agent.purple.server import purple_card, serve
from kernel.a2a_tools import task_id_of
from kernel.a2a_usage import usage_metadata
from kernel.settings import Settings
from kernel.world_data import WorldData

INPUT_TOKENS, OUTPUT_TOKENS = 100, 10


class Reporting:
    """A player that reports the same usage with every reply."""

    def __init__(self, player: object, usage: dict[str, Any]) -> None:
        self.player = player
        self.last_usage = usage

    async def turn(self, text: str) -> str:
        return await self.player.turn(text)  # type: ignore[attr-defined]

    def close(self) -> None:
        self.player.close()  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--solve", default="")
    parser.add_argument("--usage-cost", type=float, default=0.002)
    parser.add_argument("--usage-by-task", type=json.loads, default={})
    args = parser.parse_args()
    usual = usage_metadata("scripted-purple", INPUT_TOKENS, OUTPUT_TOKENS, args.usage_cost)
    solve = set(filter(None, args.solve.split(",")))
    solver = reference.player_factory(WorldData(Settings().appworld_root).require())

    def make_player(first_message: str) -> Reporting:
        task_id = task_id_of(first_message)
        player = solver(first_message) if task_id in solve else noop.make_player(first_message)
        return Reporting(player, {"usage": args.usage_by_task[task_id]} if task_id in args.usage_by_task else usual)

    url = f"http://127.0.0.1:{args.port}/"
    card = purple_card("mixed test purple", "solves some tasks", url, "purple_mixed")
    serve(card, make_player, "127.0.0.1", args.port)


if __name__ == "__main__":
    main()
