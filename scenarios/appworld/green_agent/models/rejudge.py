"""Records of `appworld-green rejudge RUN`: each battle's recorded verdict beside the re-judged one.

`RejudgeReport` is what `rejudge --json` prints. A battle is `equal` (AppWorld's evaluator, run again in a
fresh process on the saved end state, gives the recorded success, the same tests passed and failed, and the
outcome rule gives the recorded outcome, winner and status; and the battle's own call log, replayed into a
fresh world, gives that saved state), `differs` (each difference named in words), `could_not_rejudge` (its
re-judging passed the time limit per battle or the run's, or AppWorld's process ended during it: the reason says
which, with any difference found before), or
`not_rejudgeable` (the battle holds no verdict on the agent to check: an infra_error or a scope_error; the
reason says why). No task content beyond AppWorld's test requirements and the place (file, line, column) where
a saved state differs from its replay, never a value the replay computed, never a secret.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

REJUDGE_SCHEMA_VERSION = 1

RejudgeStatus = Literal["equal", "differs", "could_not_rejudge", "not_rejudgeable"]


class RejudgedBattle(BaseModel):
    """One battle: what the run recorded and what re-judging its saved state gave."""

    battle_id: str = Field(description="The battle's id.")
    task_id: str | None = Field(description="AppWorld task id.")
    trial: int = Field(default=1, description="Trial number (1-based).")
    result_path: str = Field(description="Its result.json, relative to the run folder.")
    status: RejudgeStatus = Field(description="equal | differs | could_not_rejudge | not_rejudgeable.")
    recorded_outcome: str = Field(description="The outcome result.json records.")
    rejudged_outcome: str | None = Field(default=None, description="The outcome rule applied to the re-judged "
                                         "evaluation (None when not re-judged).")
    recorded_tests: str | None = Field(default=None, description="`passed/total` as recorded.")
    rejudged_tests: str | None = Field(default=None, description="`passed/total` as re-judged.")
    differences: list[str] = Field(default_factory=list, description="Each difference, in words.")
    reason: str | None = Field(default=None, description="Why the battle was not re-judged (or not to the end).")
    seconds: float | None = Field(default=None, description="AppWorld's evaluation time for this battle.")
    replay: str | None = Field(default=None, description="What replaying the battle's call log into a fresh world "
                               "gave: equal, differs, or not replayable and why (None: not replayed).")
    replay_seconds: float | None = Field(default=None, description="AppWorld's time to replay the call log.")


class RejudgeReport(BaseModel):
    """`rejudge --json`: every battle of the run folder, and the count of equal verdicts."""

    schema_version: Literal[1] = Field(default=REJUDGE_SCHEMA_VERSION, description="Record format version.")
    run: str = Field(description="The run folder re-judged.")
    kind: Literal["eval", "battle"] = Field(description="eval: run.json + tasks/ (eval, assess, serve); battle: "
                                            "one result.json (battle, demo).")
    battles: list[RejudgedBattle] = Field(description="One per battle, in the run's order.")
    rejudged: int = Field(description="Battles re-judged (equal, differing or not to the end).")
    equal: int = Field(description="Of which equal.")
    not_rejudgeable: int = Field(description="Battles holding no verdict to check (infra_error, scope_error).")
    could_not_rejudge: int = Field(default=0, description="Of which not to the end (timed out, the run's time limit "
                                   "reached, or AppWorld's process ended): not equal.")
    startup_s: float = Field(description="Seconds to start AppWorld's evaluator process (imports).")
    elapsed_s: float = Field(description="Wall seconds of the whole re-judge.")
    run_timeout_s: float | None = Field(default=None, description="The whole re-judge's time limit (--run-timeout-s); "
                                        "battles past it could not be re-judged (None: a report from before it).")
    notes: list[str] = Field(default_factory=list, description="Run-level remarks (e.g. another outcome-rule "
                             "version, results.json rows that disagree with result.json).")

    @property
    def all_equal(self) -> bool:
        return self.equal == self.rejudged and not any(b.status == "differs" for b in self.battles)

    def headline(self) -> str:
        """`N of N verdicts re-judged equal`, or how many differ."""
        text = f"{self.equal} of {self.rejudged} verdicts re-judged equal"
        if self.could_not_rejudge:
            text += f" ({self.could_not_rejudge} could not be re-judged, listed above)"
        if self.not_rejudgeable:
            text += f" ({self.not_rejudgeable} battle(s) not re-judgeable, listed above)"
        return text
