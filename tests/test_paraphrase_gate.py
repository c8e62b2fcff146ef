"""The validity gate (green_agent/paraphrase/gate.py) on the built world's tasks: planted bad lines are rejected
naming the fact; good rewordings pass; `usable_variants` drops what fails (now or when it was written). The
shipped authored set (the world's `paraphrases/authored.jsonl`, and as the pack writes it now) covers every task
at every strength and passes; a malformed set file is refused naming the line (kernel/paraphrase_set.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from green_agent.paraphrase.gate import check_paraphrase, task_facts, usable_variants
from green_agent.runtime.world_build import WORLD_DIR
from kernel.errors import BadInputError
from kernel.paraphrase_set import AUTHORED, AUTHORED_SET, STRENGTHS, GateRecord, Paraphrase, ParaphraseSet, load_set
from kernel.settings import Settings
from kernel.world_data import WorldData


@pytest.fixture(scope="module")
def world(appworld_root: Path) -> WorldData:
    return WorldData(appworld_root)


def verdict(world: WorldData, task_id: str, text: str) -> GateRecord:
    line = Paraphrase(task_id=task_id, strength="mild", variant=1, text=text, source="test")
    return check_paraphrase(line, world.task(task_id).instruction, task_facts(world, task_id))


def test_task_facts_read_the_instruction_and_its_ground_truth(world: WorldData) -> None:
    facts = {(fact.kind, fact.value) for fact in task_facts(world, "f0b2d02_1").facts}
    assert {("month", "month:4"), ("number", "2023"), ("name", "farid haddad"), ("name", "venmo")} <= facts
    rsvp = {fact.value for fact in task_facts(world, "f0e5a05_2").facts if fact.kind == "literal"}
    assert "RSVP: Kira's bridal shower" in rsvp  # the apostrophe inside is not the quote's end
    assert ("name", "grace kim") in {(f.kind, f.value) for f in task_facts(world, "f0e5a05_1").facts}


@pytest.mark.parametrize(("task_id", "text", "reason"), [
    ("f0a7c07_2", "Put every Amazon wish-list item priced under $35 in my cart with its full wish-list quantity; "
                  "leave the others and don't place an order.", "changed amount: 30 -> 35"),
    ("f0a7c07_2", "Put every Amazon wish-list item priced under $30 in my cart, at most 5 of each; leave the "
                  "others and don't place an order.", "added the number 5 (not in the original)"),
    ("f0b2d02_1", "What was the total Farid sent me on Venmo in April 2023?", "dropped the name 'Farid Haddad'"),
    ("f0b2d02_1", "What was the total Farid Haddad and Ann Lee sent me on Venmo in April 2023?",
     "added the name 'Ann Lee' (not in the original)"),
    ("f0b2d02_3", "Pay each roommate of mine $45.50 on Venmo with the description 'May utility'. My phone "
                  "contacts list my roommates.", "changed quoted text: \"'May utilities'\" -> \"'May utility'\""),
    ("f0b2d02_3", "Pay each roommate of mine $45.50 on Venmo for the utilities. My phone contacts list my roommates.",
     "dropped the quoted text \"'May utilities'\""),
    ("f0c1a11_3", "On my phone, switch off the 'Wake up' alarm (keep it) and add an alarm at 7:30 pm labelled "
                  "'Gym' repeating Monday, Wednesday and Friday. Leave my other alarms alone.",
     "changed time: 07:30 -> 7:30 pm"),
    ("f0c1a11_1", "How many texts did my mother send me on my phone from May 12 to May 17? My phone contacts say "
                  "who she is.", "dropped the number 2023"),
    ("f0b2d02_1", "how much money in total did Farid Haddad send me on Venmo during April, 2023",
     "identical to the original (up to case, spacing and punctuation)"),
    ("f0b2d02_1", " \n ", "empty"),
])
def test_planted_bad_lines_are_rejected_naming_why(world: WorldData, task_id: str, text: str, reason: str) -> None:
    record = verdict(world, task_id, text)
    assert not record.passed and record.reason == reason


@pytest.mark.parametrize(("task_id", "text"), [
    ("f0a7c07_2", "Put every Amazon wish-list item priced under 30.00 dollars in my cart with its full wish-list "
                  "quantity; leave the others and don't place an order."),
    ("f0b2d02_1", "hey it's Maya, how much did farid haddad send me on venmo in apr 2023 all together?"),
    ("f0c1a11_3", "On my phone, switch off the 'Wake up' alarm (keep it) and add an alarm at 7:30 am labelled "
                  "'Gym' repeating Mon, Wed and Fri. Leave my other alarms alone."),
    ("f0d4f04_2", "In my Todoist project 'Apartment Move', give every overdue task that isn't done a due date of "
                  "May 21, 2023 and high priority."),
])
def test_rewordings_that_keep_every_fact_pass(world: WorldData, task_id: str, text: str) -> None:
    record = verdict(world, task_id, text)
    assert record.passed, record.reason
    assert record.checks == ["not_empty", "not_original", "facts_kept", "no_added_facts"]


def test_usable_variants_drops_lines_that_fail_now_or_failed_when_written(world: WorldData) -> None:
    good = "What was the total Farid Haddad sent me on Venmo in April 2023?"
    lines = [
        Paraphrase(task_id="f0b2d02_1", strength="strong", variant=3, text=good + " Thanks!", source="m"),
        Paraphrase(task_id="f0b2d02_1", strength="strong", variant=1, text=good, source="m"),
        Paraphrase(task_id="f0b2d02_1", strength="strong", variant=2, text=good.replace("April", "May"), source="m"),
        Paraphrase(task_id="f0b2d02_1", strength="strong", variant=4, text=good + " Please.", source="m",
                   gate=GateRecord(passed=False, reason="entailment: B does not entail A", entailment_model="m")),
    ]
    usable = usable_variants(ParaphraseSet(lines, "digest"), world, "f0b2d02_1", "strong")
    assert [line.variant for line in usable] == [1, 3]
    assert usable_variants(ParaphraseSet(lines, "digest"), world, "f0b2d02_1", "mild") == []


def pack_authored_set(settings: Settings) -> bytes:
    """The authored set as the builder writes it from the pack now (builder/paraphrases.py, in .venv-appworld)."""
    code = "import sys; from pack import load_scenarios; from builder.paraphrases import authored_lines; " \
           "sys.stdout.write(authored_lines(load_scenarios()))"
    done = subprocess.run([str(settings.appworld_python), "-c", code], cwd=WORLD_DIR, capture_output=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_shipped_set_covers_every_task_and_strength_and_passes_the_gate(settings: Settings,
                                                                             world: WorldData) -> None:
    shipped = load_set(world.data / AUTHORED_SET)
    assert (world.data / AUTHORED_SET).read_bytes() == pack_authored_set(settings), "world built from another pack"
    for task_id in world.split("all"):
        for strength in STRENGTHS:
            lines = shipped.variants(task_id, strength)
            assert lines and all(line.source == AUTHORED for line in lines), (task_id, strength)
            assert usable_variants(shipped, world, task_id, strength) == lines, (task_id, strength)
    assert shipped.tasks() == set(world.split("all"))


@pytest.mark.parametrize(("text", "message"), [
    (b'{"task_id": "t_1", "strength": "mild", "variant": 1, "text": "x", "source": "authored"}\nnot json\n',
     "line 2: not a JSON object"),
    (b'\n{"task_id": "t_1", "strength": "loud", "variant": 1, "text": "x", "source": "authored"}\n',
     "line 2: strength:"),
    (b'{"task_id": "t_1", "strength": "mild", "variant": 0, "text": "x", "source": "authored"}\n', "line 1: variant:"),
    (b'{"task_id": "t_1", "strength": "mild", "variant": 1, "text": "", "source": "authored"}\n', "line 1: text:"),
    (b'{"task_id": "t_1", "strength": "mild", "variant": 1, "text": "x", "source": "a", "extra": 1}\n',
     "line 1: extra:"),
    (b'{"task_id": "t_1", "strength": "mild", "variant": 1, "text": "x", "source": "a"}\n' * 2,
     "t_1 mild variant 1 appears twice"),
])
def test_a_malformed_set_file_is_refused_naming_the_line(tmp_path: Path, text: bytes, message: str) -> None:
    path = tmp_path / "set.jsonl"
    path.write_bytes(text)
    with pytest.raises(BadInputError, match=re.escape(message)):
        load_set(path)
    with pytest.raises(BadInputError, match="cannot read it"):
        load_set(tmp_path / "missing.jsonl")
