"""Does a battle's saved end state follow from its own calls? The replay's answer, compared with the saved state.

`world/replay.py` replays the battle's forwarded calls (`green_agent.rejudge.calls`) into a fresh world of its
task and saves that world's end state in AppWorld's change-log format (`checkpoints/replayed` of the replay's
outputs folder). Here that folder is copied with the archive step's own redaction
(`green_agent.steps.archive.copy_redacted`, whatever it redacts in a battle's state) and the state compared
with the saved `appworld/dbs`, file by file and byte for byte (the same bytes `state_digest` hashes), but for
AppWorld's `model_hashes.json`, whose counters carry the slot's earlier battles of the task: the saved counters
must cover the replay's (`_hashes_cover`).
The replay is deterministic (time frozen at the task's datetime, AppWorld's random seed, the same requests in
the same order), so an honest battle's saved state is reproduced exactly.

`replay_differences(saved_dbs, replay_outputs, answer, plan)` returns each difference in words (none: the state
follows from the calls): a file whose bytes differ (where it first differs, by line and field, and how many more
files differ: `green_agent.rejudge.state_diff`), and calls whose replayed HTTP status is not the one the log
records (the recorded status only). Nothing the replay computed is printed: a forger who copied it into the saved
state (a row's `record_hash`) would make the same forgery re-judge equal. `replay_summary` is the one-line account
a report keeps.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from green_agent.rejudge.calls import ReplayPlan
from green_agent.rejudge.state import HASHES_FILE, MAX_STATE_BYTES
from green_agent.rejudge.state_diff import first_difference, hashes_shortfall
from green_agent.steps.archive import CALLS_FILE, copy_redacted

REPLAYED_STATE = "replayed"
"""The state id `world/replay.py` saves the replayed world under (`<outputs>/checkpoints/<id>`)."""


def replay_differences(saved_dbs: Path, replay_outputs: Path, answer: dict[str, Any], plan: ReplayPlan) -> list[str]:
    """Each way the saved state and the call log disagree with the replay (module docstring); `replay_outputs`:
    the replay's task outputs folder."""
    found = _status_differences(answer, plan)
    if not (replay_outputs / "checkpoints" / REPLAYED_STATE).is_dir():
        return found + ["the replay of the call log saved no end state"]
    with tempfile.TemporaryDirectory(prefix="replayed-") as tmp:
        copy_redacted(replay_outputs, Path(tmp) / "archived")
        replayed = Path(tmp) / "archived" / "checkpoints" / REPLAYED_STATE
        differing = [name for name in sorted(_names(saved_dbs) | _names(replayed))
                     if not _same(name, _read(saved_dbs / name), _read(replayed / name))]
        if differing:
            name = differing[0]
            more = f"; {len(differing) - 1} more file(s) differ" if len(differing) > 1 else ""
            found.insert(0, f"its own calls do not produce the saved end state: replaying the {len(plan.calls)} "
                            f"forwarded call(s) of {CALLS_FILE} gives another {name} "
                            f"({first_difference(name, _read(saved_dbs / name), _read(replayed / name))}){more}")
    return found


def replay_summary(found: list[str], plan: ReplayPlan) -> str:
    """One line: whether the replay reproduced the saved state."""
    if found:
        return f"differs: {len(plan.calls)} forwarded call(s) replayed into a fresh world do not give the saved state"
    return f"equal: {len(plan.calls)} forwarded call(s) replayed into a fresh world give the saved end state"


def _status_differences(answer: dict[str, Any], plan: ReplayPlan) -> list[str]:
    mismatches = answer.get("mismatches") if isinstance(answer.get("mismatches"), list) else []
    found = []
    for item in mismatches:
        index = item.get("call") if isinstance(item, dict) else None
        if isinstance(index, int) and 1 <= index <= len(plan.calls):
            call = plan.calls[index - 1]
            found.append(f"call {call.seq} ({call.tool}): the log records HTTP {call.recorded}, the replay got "
                         "another status")
    count = answer.get("mismatch_count")
    if isinstance(count, int) and count > len(found):
        found.append(f"{count - len(found)} more call(s) got another HTTP status when replayed")
    return found


def _same(name: str, saved: bytes | None, replayed: bytes | None) -> bool:
    """Byte for byte, but for `model_hashes.json` (`_hashes_cover`)."""
    if name == HASHES_FILE and saved is not None and replayed is not None:
        return _hashes_cover(saved, replayed)
    return saved == replayed


def _hashes_cover(saved: bytes, replayed: bytes) -> bool:
    """AppWorld's model hashes are counters of its server process, kept per task database and never reset between
    battles: a task battled a second time on a slot saves the first battle's counts plus its own (and the apps in the
    order the first touched them), while the replay starts from none. So the saved counters must cover the
    replay's: every model the calls changed counts at least as many changes in the saved state (a forger who zeroes
    a model's counter, so that AppWorld's evaluator would take its table as unchanged, is caught)."""
    return hashes_shortfall(saved, replayed) is None


def _names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def _read(path: Path) -> bytes | None:
    """The bytes of a regular file (None: absent or not one), at most the saved state's limit."""
    if path.is_symlink() or not path.is_file():
        return None
    with open(path, "rb") as handle:
        return handle.read(MAX_STATE_BYTES + 1)
