"""`appworld-green paraphrase --split S --out FILE`: a paraphrase set for any world, written and gated by a model.

Thin: checks the arguments, builds the model seam over the `openai` package (settings' `OPENAI_API_KEY`,
`OPENAI_BASE_URL`), calls `green_agent.paraphrase.generate`, writes the set (JSONL, `kernel.paraphrase_set`'s
format, rejected lines kept with `passed: false`) and `<FILE>.summary.json` (the rejection rate, per strength,
the reasons), and prints the rejection rate. Exit codes: 0 written (whatever the rejection rate), 2 bad arguments
or no key (the message says what is needed), 3 the model could not be reached.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kernel.atomic import atomic_write_text
from kernel.errors import BadInputError, InfrastructureError
from kernel.paraphrase_set import STRENGTHS, Strength, dump_lines
from kernel.settings import Settings
from kernel.world_data import WorldData

MAX_VARIANTS = 10
TIMEOUT_S = 60.0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "paraphrase", help="write a gated paraphrase set of a split's tasks with an LLM (needs OPENAI_API_KEY)",
        description="Writes FILE (one JSON line per task, strength, variant; rejected lines kept with passed: "
                    "false and their reason) and FILE.summary.json (lines, rejected, rejection_rate, per strength, "
                    "reasons); prints the rejection rate. Needs OPENAI_API_KEY (and OPENAI_BASE_URL for another "
                    "OpenAI-compatible endpoint).")
    parser.add_argument("--split", required=True, help="the world's split whose tasks to paraphrase (e.g. dev)")
    parser.add_argument("--strengths", default="+".join(STRENGTHS),
                        help=f"strengths joined by + (default {'+'.join(STRENGTHS)})")
    parser.add_argument("--variants", type=int, default=1, help=f"wordings per task and strength, 1..{MAX_VARIANTS}")
    parser.add_argument("--out", type=Path, required=True, help="the set file to write (JSONL)")
    parser.add_argument("--model", help="the model that writes and judges (default: settings' scope_model)")
    parser.set_defaults(func=run_paraphrase)


def parse_strengths(text: str) -> list[Strength]:
    names = [name.strip() for name in text.split("+") if name.strip()]
    unknown = [name for name in names if name not in STRENGTHS]
    if unknown or not names:
        raise BadInputError(f"--strengths {text!r}: unknown {', '.join(unknown) or '(none given)'}; "
                            f"known: {', '.join(STRENGTHS)}")
    return list(dict.fromkeys(names))  # type: ignore[arg-type]


def run_paraphrase(args: argparse.Namespace, settings: Settings) -> int:
    from green_agent.paraphrase.generate import generate_set, summarise

    strengths = parse_strengths(args.strengths)
    if not 1 <= args.variants <= MAX_VARIANTS:
        raise BadInputError(f"--variants {args.variants}: give 1..{MAX_VARIANTS}")
    if not settings.openai_api_key:  # unset or empty
        raise BadInputError("paraphrase needs a model: set OPENAI_API_KEY (and OPENAI_BASE_URL for an "
                            "OpenAI-compatible endpoint other than api.openai.com), or pass --env-file with them")
    world = WorldData(settings.appworld_root).require()
    task_ids = world.split(args.split)
    model = args.model or settings.scope_model
    lines = generate_set(world, task_ids, strengths, args.variants, _chat(settings, model), model)
    summary = summarise(lines, model)
    atomic_write_text(args.out, dump_lines(lines))
    summary_path = args.out.with_name(args.out.name + ".summary.json")
    atomic_write_text(summary_path, summary.model_dump_json(indent=2) + "\n")
    print(f"wrote {summary.lines} lines of {len(task_ids)} tasks to {args.out}: {summary.rejected} rejected "
          f"(rejection rate {summary.rejection_rate:.1%}); summary in {summary_path}")
    for reason, count in list(summary.reasons.items())[:5]:
        print(f"  {count} x {reason}")
    return 0


def _chat(settings: Settings, model: str):  # noqa: ANN202 - a Chat (generate.py)
    import openai  # imported on use: it costs seconds

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    client = openai.OpenAI(api_key=key, base_url=settings.openai_base_url, timeout=TIMEOUT_S, max_retries=2)

    def chat(messages: list[dict[str, str]]) -> str:
        try:
            response = client.chat.completions.create(model=model, messages=messages)
        except openai.APIStatusError as exc:
            raise InfrastructureError(f"the model endpoint answered {exc.status_code} for {model}") from None
        except openai.OpenAIError as exc:
            raise InfrastructureError(f"cannot reach the model endpoint ({type(exc).__name__})") from None
        choices = response.choices or []
        return (choices[0].message.content or "") if choices else ""

    return chat
