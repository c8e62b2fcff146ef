"""The `--paraphrase STRENGTH [--paraphrase-set FILE] [--paraphrase-seed N]` flags (`battle`, `eval`, `reliability`).

A paraphrase arm asks the agent in another wording of the same task (`green_agent.steps.wording`): one of the
strengths `mild`, `medium`, `strong`, `naturalistic`, drawn from the world's authored set or from `--paraphrase-set`,
under `--paraphrase-seed` (default 0). The flags are parsed before anything starts; a bad one is bad input (exit 2)
naming it. `reliability`, which runs several strengths, reads the set and seed flags with `paraphrase_spec_for`.
"""

from __future__ import annotations

import argparse

from kernel.errors import BadInputError
from kernel.paraphrase_set import STRENGTHS, ParaphraseSpec, Strength

PARAPHRASE_HELP = (f"ask the agent in a paraphrase of each task at this strength ({' | '.join(STRENGTHS)}), chosen "
                   "per (seed, task, trial) among the ones that pass the validity gate; a custom run "
                   "(docs/paraphrases.md)")


def add_paraphrase_args(parser: argparse.ArgumentParser, strength: bool = True) -> None:
    """The flags; `strength` False leaves `--paraphrase` to the command (`reliability` takes several)."""
    if strength:
        parser.add_argument("--paraphrase", metavar="STRENGTH", help=PARAPHRASE_HELP)
    parser.add_argument("--paraphrase-set", metavar="FILE",
                        help="the paraphrase set (JSONL; default: the world's authored set)")
    parser.add_argument("--paraphrase-seed", type=int, metavar="N",
                        help="the seed of the variant choice (default 0)")


def check_strength(text: str) -> Strength:
    """`text` as a strength; BadInputError naming the choices."""
    if text not in STRENGTHS:
        raise BadInputError(f"--paraphrase {text[:40]!r}: not a strength; choose one of {', '.join(STRENGTHS)}")
    return text  # type: ignore[return-value]


def paraphrase_spec_for(args: argparse.Namespace, strength: str) -> ParaphraseSpec:
    """The spec of `strength` with the command's set and seed flags."""
    seed = getattr(args, "paraphrase_seed", None)
    return ParaphraseSpec(strength=check_strength(strength), seed=0 if seed is None else seed,
                          set_path=getattr(args, "paraphrase_set", None))


def paraphrase_spec_from(args: argparse.Namespace) -> ParaphraseSpec | None:
    """The parsed flags, or None without `--paraphrase`; BadInputError for a bad strength, or a set or seed flag
    given without it."""
    strength = getattr(args, "paraphrase", None)
    if strength is None:
        flags = (("--paraphrase-set", "paraphrase_set"), ("--paraphrase-seed", "paraphrase_seed"))
        given = [flag for flag, name in flags if getattr(args, name, None) is not None]
        if given:
            raise BadInputError(f"{' and '.join(given)} without --paraphrase STRENGTH: say which strength to ask in")
        return None
    return paraphrase_spec_for(args, strength)
