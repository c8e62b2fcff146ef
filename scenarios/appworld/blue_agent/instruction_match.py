"""Which task a wording asks for, read the brittle way: by its words, against the world's original instructions.

The `instruction-bound` stand-ins (`blue_agent.instruction_bound`, `blue_agent.purple.instruction_bound`) identify
their task from the instruction's wording alone, as an agent that keys on the words it was given does:
`content_words` (lower-cased words, stop words dropped) of the wording against those of every task's original
instruction in the world, scored by Jaccard similarity (shared words over all words). The match is clear when the
best score is at least `MIN_SCORE` and ahead of the runner-up by at least `MIN_MARGIN`; otherwise there is no
match. So a wording that keeps most of the original's words (the original itself, a mild or medium rewording)
matches, and one that moves its facts into other words (strong, naturalistic) does not: a measure of robustness to
how a task is asked must see this stand-in lose there (docs/paraphrases.md).

`instruction_of(message)` is the wording in a task message (`Task instruction:` up to the `Supervisor:` line).
"""

from __future__ import annotations

import re
from functools import cached_property

from pydantic import BaseModel, Field

from kernel.world_data import WorldData

MIN_SCORE = 0.6
"""The least Jaccard similarity of a clear match (the original wording scores 1.0)."""
MIN_MARGIN = 0.1
"""How far ahead of the runner-up a clear match must be (sibling tasks of one scenario share many words)."""
STOPWORDS = frozenset("""
a about all an and any are as at be been but by can could do does for from get had has have how i if in into is it
its just me my of on or our please so than that the their them then there these they this those to up was we were
what when where which who will with would you your
""".split())
_WORD = re.compile(r"[a-z0-9]+")
_START = "Task instruction:"
_END = "Supervisor:"


def content_words(text: str) -> frozenset[str]:
    """The lower-cased words of `text`, stop words dropped."""
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def instruction_of(message: str) -> str | None:
    """The instruction a task message carries (both modes, and the in-band bridge's first message); None if none."""
    lines = message.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == _START]
    if not starts:
        return None
    body = []
    for line in lines[starts[0] + 1:]:
        if line.startswith(_END):
            break
        body.append(line)
    text = "\n".join(body).strip()
    return text or None


class TaskMatch(BaseModel):
    """The best and second-best tasks for a wording, and whether the best is clear."""

    task_id: str | None = Field(description="The clearly matching task (None: no clear match).")
    best: str | None = Field(default=None, description="The best-scoring task, clear or not.")
    score: float = Field(description="Its Jaccard similarity to the wording.")
    runner_up: str | None = Field(default=None, description="The second-best task.")
    runner_up_score: float = Field(default=0.0, description="Its similarity.")


class InstructionIndex:
    """The content words of every task's original instruction in one world."""

    def __init__(self, world: WorldData) -> None:
        self.world = world

    @cached_property
    def words(self) -> dict[str, frozenset[str]]:
        tasks = sorted(p.name for p in (self.world.data / "tasks").iterdir() if (p / "specs.json").is_file())
        return {task_id: content_words(self.world.task(task_id).instruction) for task_id in tasks}

    def match(self, wording: str) -> TaskMatch:
        """The wording's task (module docstring: clear when >= MIN_SCORE and MIN_MARGIN ahead of the runner-up)."""
        asked = content_words(wording)
        ranked = sorted(((jaccard(asked, words), task_id) for task_id, words in self.words.items()),
                        key=lambda pair: (-pair[0], pair[1]))
        if not ranked:
            return TaskMatch(task_id=None, score=0.0)
        (score, best), second = ranked[0], ranked[1] if len(ranked) > 1 else (0.0, None)
        clear = score >= MIN_SCORE and score - second[0] >= MIN_MARGIN
        return TaskMatch(task_id=best if clear else None, best=best, score=round(score, 4), runner_up=second[1],
                         runner_up_score=round(second[0], 4))
