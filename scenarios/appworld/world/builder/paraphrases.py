"""Step 4: the pack's authored paraphrases as the world's set, `<data>/paraphrases/authored.jsonl`.

One JSON object a line in `kernel.paraphrase_set.Paraphrase`'s field order (task_id, strength, variant, text,
source "authored", gate null: the Green gates every line before a battle uses it), tasks in id order, strengths in
`PARAPHRASE_STRENGTHS` order, variants from 1. Runs without AppWorld: `build.py --paraphrases-only` writes it into
an existing world without rebuilding anything else.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pack.types import PARAPHRASE_STRENGTHS, ScenarioDef

AUTHORED_SET = Path("paraphrases") / "authored.jsonl"
"""Where the set goes under the data folder (kernel.paraphrase_set.AUTHORED_SET)."""


def authored_lines(scenarios: list[ScenarioDef]) -> str:
    """The set's JSONL text (module docstring's order)."""
    tasks = sorted(((scenario.task_id(task), task) for scenario in scenarios for task in scenario.tasks),
                   key=lambda pair: pair[0])
    lines = []
    for task_id, task in tasks:
        for strength in PARAPHRASE_STRENGTHS:
            for variant, text in enumerate(task.paraphrases.get(strength, ()), start=1):
                line = {"task_id": task_id, "strength": strength, "variant": variant, "text": text,
                        "source": "authored", "gate": None}
                lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    return "".join(lines)


def write_authored_set(data_dir: Path, scenarios: list[ScenarioDef]) -> Path:
    """Write the set under `data_dir` atomically (a reader never sees half a file); returns its path."""
    path = Path(data_dir) / AUTHORED_SET
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.{os.getpid()}")
    staging.write_text(authored_lines(scenarios), encoding="utf-8")
    staging.replace(path)
    return path
