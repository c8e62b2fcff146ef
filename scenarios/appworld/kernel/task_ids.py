"""The task-id rule: a task id extracted from a battle's task config and validated before any use.

Accepted inputs (surrounding whitespace ignored):
- `"Task description: <id>"` (the seed's `task_config`; the first token after the colon is used),
- a bare task id such as `7c1a0e2_1`,
- a bare number N (ASCII digits): the N-th task, counting from 1, of the configured split
  (`Settings.default_split`, `dev` unless set), in the split file's order.

A task id must match `^[A-Za-z0-9]+_[0-9]+$` (ASCII only) and be at most 64 characters. This is
checked before the id goes into any path, URL or command, so path traversal, shell metacharacters,
unicode look-alikes and huge strings are refused with a `BadInputError` that quotes at most
80 characters of the input. A well-formed id that the world does not contain is an `UnknownTaskError`.
"""

from __future__ import annotations

import re
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from kernel.errors import BadInputError, UnknownTaskError
from kernel.world_data import WorldData

TASK_ID_PATTERN = re.compile(r"[A-Za-z0-9]+_[0-9]+")
MAX_TASK_ID_LEN = 64
MAX_INPUT_LEN = 10_000
"""Task configs longer than this are refused outright (nothing legitimate is that long)."""
QUOTE_LEN = 80
_DESCRIPTION = re.compile(r"Task description:\s*(\S*)", re.IGNORECASE)
_INDEX = re.compile(r"[0-9]{1,6}")


class TaskRef(BaseModel):
    """A validated task id and how it was named."""

    task_id: str = Field(description="Validated AppWorld task id.")
    source: Literal["id", "index"] = Field(description="Named directly, or as the N-th task of a split.")
    split: str | None = Field(default=None, description="Split the index refers to (index form only).")
    index: int | None = Field(default=None, description="1-based position in the split (index form only).")


class TaskLookup(Protocol):
    """Anything that can say whether a task exists (WorldData, or the env server via GET /tasks/{id})."""

    def has_task(self, task_id: str) -> bool: ...


def quote_input(text: str) -> str:
    """`repr` of at most QUOTE_LEN characters of `text`, noting the full length when cut."""
    if len(text) <= QUOTE_LEN:
        return repr(text)
    return f"{text[:QUOTE_LEN]!r}... ({len(text)} characters)"


def extract_task_token(task_config: str) -> str:
    """The raw token naming the task: after `Task description:` if present, else the whole input."""
    if not isinstance(task_config, str):
        raise BadInputError(f"task config must be text, got {type(task_config).__name__}")
    if len(task_config) > MAX_INPUT_LEN:
        raise BadInputError(f"task config too long: {quote_input(task_config)}")
    match = _DESCRIPTION.search(task_config)
    token = match.group(1) if match else task_config.strip()
    if not token:
        raise BadInputError(f"no task id in task config {quote_input(task_config)}; expected 'Task description: <id>'")
    return token


def validate_task_id(value: str) -> str:
    """Return `value` if it is a well-formed task id; raise BadInputError (quoting it briefly) if not."""
    if not isinstance(value, str) or len(value) > MAX_TASK_ID_LEN or not TASK_ID_PATTERN.fullmatch(value):
        raise BadInputError(
            f"invalid task id {quote_input(str(value))}: expected <letters/digits>_<number> "
            f"(e.g. 7c1a0e2_1), ASCII only, at most {MAX_TASK_ID_LEN} characters"
        )
    return value


def resolve_task(task_config: str, world: WorldData | None, split: str, lookup: TaskLookup | None = None) -> TaskRef:
    """Step 1: turn a task config into a validated, existing task id.

    Args:
        task_config: `"Task description: <id>"`, a bare id, or a bare 1-based index into `split`.
        world: the world's data files (split lists, task existence); None if not readable locally.
        split: split that a bare index refers to.
        lookup: existence check used when `world` is None (e.g. the env server).

    Raises:
        BadInputError: malformed input or index out of range.
        UnknownTaskError: a well-formed id the world does not contain.
    """
    token = extract_task_token(task_config)
    if _INDEX.fullmatch(token):
        return _by_index(int(token), world, split)
    task_id = validate_task_id(token)
    checker: TaskLookup | None = world if world is not None else lookup
    if checker is not None and not checker.has_task(task_id):
        raise UnknownTaskError(f"unknown task id {task_id!r}: the AppWorld world has no such task; "
                               "list the available ids in its data/datasets/*.txt")
    return TaskRef(task_id=task_id, source="id")


def _by_index(index: int, world: WorldData | None, split: str) -> TaskRef:
    if world is None:
        raise BadInputError(f"task index {index} needs the world's split files, which are not readable here")
    ids = world.split(split)
    if not 1 <= index <= len(ids):
        raise BadInputError(f"task index {index} is out of range: split {split!r} has {len(ids)} tasks (1-based)")
    task_id = validate_task_id(ids[index - 1])
    if not world.has_task(task_id):
        raise UnknownTaskError(f"split {split!r} names task {task_id!r}, which the world does not contain")
    return TaskRef(task_id=task_id, source="index", split=split, index=index)
