"""The `--faults SPEC` flag of the commands that take a battle's settings (`battle`, `eval`, `reliability`).

The spec is parsed before anything starts (`kernel.fault_spec.parse_fault_spec`: bad input, exit 2, with a
message naming the bad part) and only carried on: the gateway alone plans and applies it.
"""

from __future__ import annotations

import argparse

from kernel.fault_spec import FaultSpec, parse_fault_spec

FAULTS_HELP = ("a reliability run: answer a seeded share of the apps' calls with a fault, "
               "rate=R,seed=S[,kinds=error+rate_limit+timeout(+empty+malformed+lost_response)][,timeout_s=5]"
               "[,max_consecutive=2][,salt=HEX: a finished run's published secret, to reproduce its plan] "
               "(docs/reliability.md)")


def add_faults_argument(parser: argparse.ArgumentParser, required: bool = False) -> None:
    parser.add_argument("--faults", metavar="SPEC", required=required, help=FAULTS_HELP)


def faults_of(args: argparse.Namespace) -> FaultSpec | None:
    """The parsed `--faults`, or None; BadInputError naming the bad part."""
    text = getattr(args, "faults", None)
    return parse_fault_spec(text) if text is not None else None
