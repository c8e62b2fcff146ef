"""The task-pack format: plain dataclasses, no AppWorld import.

A scenario is one Python module in `pack/scenarios/` exposing `SCENARIO = ScenarioDef(...)` with
exactly three `TaskDef` variants. The builder (`build.py`) validates every definition, then turns
it into AppWorld's native task format. `AUTHORING.md` explains the rules with examples.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Protocol

# Re-exported for drafts written before `pack.snippets` held the evaluation templates.
from pack.snippets import EVALUATION_HEADER  # noqa: F401

Split = Literal["train", "dev", "test"]
SPLITS: tuple[str, ...] = ("train", "dev", "test")
"""train: few-shot demos for the API predictor; dev: tuning; test: held out, never used to tune anything."""
TestLabel = Literal["no_op_fail", "no_op_pass"]
ParaphraseStrength = Literal["mild", "medium", "strong", "naturalistic"]
PARAPHRASE_STRENGTHS: tuple[str, ...] = ("mild", "medium", "strong", "naturalistic")
"""The field's four strengths (kernel.paraphrase_set.Strength, kept here: the pack imports nothing of the Green)."""

DEFAULT_TASK_DATETIME = "2023-05-18T12:00:00"
"""When every task happens (AppWorld's default system datetime); time is frozen there."""


@dataclass(frozen=True)
class Person:
    """One person of the shared world (an `admin.MainUser` with an account in every app)."""

    key: str
    """Short handle used by seed code, e.g. `"ben"` (lower-case first name)."""
    first_name: str
    last_name: str
    email: str
    phone_number: str
    """10 digits, no punctuation (the phone app's login name)."""
    birthday: str
    """YYYY-MM-DD."""
    sex: Literal["male", "female"]

    @property
    def full_name(self) -> str:
        return f"{self.first_name} {self.last_name}"

    def as_main_user(self) -> dict[str, str]:
        """Fields of `admin.MainUser` / `supervisor.Supervisor`."""
        return {
            "first_name": self.first_name, "last_name": self.last_name, "email": self.email,
            "phone_number": self.phone_number, "birthday": self.birthday, "sex": self.sex,
        }


class SeedContext(Protocol):
    """What seed functions receive (implemented by `builder/context.py`, which imports AppWorld).

    Attributes:
        models: AppWorld's `ModelCollection`; `ctx.models.<app>.<Model>.create_save(**fields)` adds a row.
        people: every `Person` by key; `supervisor` is the main user of all tasks.
        rng: a `random.Random` seeded per seed function (deterministic builds).
    """

    models: Any
    people: dict[str, Person]
    supervisor: Person
    rng: Any

    def user(self, app: str, person_key: str) -> Any:
        """The app's `User` row of a person (e.g. `ctx.user("venmo", "ben").id`)."""

    def at(self, iso: str) -> Any:
        """An AppWorld `DateTime` from `"YYYY-MM-DDTHH:MM:SS"`, for `created_at`-style fields."""

    def password(self, person_key: str, app: str) -> str:
        """The person's account password in an app (also in `admin.AccountPassword`)."""


SeedFn = Callable[[SeedContext], None]


@dataclass(frozen=True)
class TaskDef:
    """One variant of a scenario: AppWorld task `<scenario_id>_<variant>`."""

    variant: int
    """1, 2 or 3."""
    instruction: str
    """What the supervisor asks, in their words. Must not leak the answer."""
    difficulty: int
    """1 (easy) to 3 (hard)."""
    solution: str
    """Python source defining `solution(apis, requester)`: the reference solution. Its
    `apis.<app>.<api>` calls are the task's gold required APIs."""
    evaluation: str
    """Python source defining `evaluate(test, public_data, private_data, main_user, models,
    ground_truth_answer)` made of `with test(\"\"\"<requirement>\"\"\"):` blocks."""
    test_labels: tuple[TestLabel, ...]
    """One label per `with test(...)` block, in source order."""
    required_apps: tuple[str, ...]
    """Apps the solution uses, without `supervisor` (AppWorld's convention)."""
    answer: Any = None
    """None for an action task; the expected JSON value for a question task."""
    private_data: dict[str, Any] = field(default_factory=dict)
    """Values the evaluation reads as `private_data.<key>` (never shown to the agent)."""
    public_data: dict[str, Any] = field(default_factory=dict)
    seed_task: SeedFn | None = None
    """Adds rows that only this task's world has (after the base world and `seed_base`)."""
    paraphrases: dict[ParaphraseStrength, tuple[str, ...]] = field(default_factory=dict)
    """Other wordings of `instruction`, at least one per strength (`PARAPHRASE_STRENGTHS`): `mild` synonyms and
    voice, `medium` reordered, `strong` a persona stating the request indirectly, `naturalistic` casual, with typos
    and abbreviations in ordinary words. Each keeps every fact of the instruction literally (quoted strings,
    numbers in digits, dates, names) and adds none; the build writes them to `paraphrases/authored.jsonl`."""

    @property
    def is_question(self) -> bool:
        return self.answer is not None


@dataclass(frozen=True)
class ScenarioDef:
    """Three task variants around one situation, sharing seed data."""

    scenario_id: str
    """7 lower-case hex characters starting with `f0` (never an official AppWorld id)."""
    title: str
    split: Split
    apps: tuple[str, ...]
    """Apps the scenario's tasks touch (documentation and coverage counts)."""
    tasks: tuple[TaskDef, ...]
    """Exactly three variants, numbered 1, 2, 3."""
    seed_base: SeedFn | None = None
    """Adds rows to the SHARED base world (visible in every task of every scenario)."""
    source: str = ""
    """Set by the registry: the module file the scenario came from (for error messages)."""

    def task_id(self, task: TaskDef) -> str:
        return f"{self.scenario_id}_{task.variant}"
