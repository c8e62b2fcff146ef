"""Scenario f0d2b22 (test): cleaning up Maya's 2022 archive in Simple Note.

Seeds (shared base world): nine of Maya's notes tagged 'archive-2022' (two pages of `search_notes`
at the default page size), three mention an invoice, three are marked as duplicates; distractors: a
duplicate tagged 'archive-2021' and Ben's own 'archive-2022' duplicate.
Variants: count the archive notes that mention an invoice (question, needs each note's content),
delete the duplicates (action: deleting any other note is collateral damage), append a line to one note.
"""

from __future__ import annotations

from pack.snippets import action_checks, block, check, login_preamble, paginate, question_checks, solution
from pack.types import ScenarioDef, SeedContext, TaskDef

TAG = "archive-2022"
# (title, content)
ARCHIVE = (
    ("Plumber invoice 2022", "Invoice from Bay Plumbing, paid in March."),
    ("Lease renewal 2022", "Signed the renewal for 12 months; rent 1450."),
    ("Dentist visit 2022", "Cleaning done; next check-up in six months."),
    ("Standup notes copy", "Duplicate of the standup notes; safe to remove."),
    ("Movers invoice 2022", "Invoice for the October move, 640 dollars."),
    ("Trip ideas copy", "Duplicate of trip ideas; safe to remove."),
    ("Car insurance 2022", "Renewed with the same provider; invoice attached to email."),
    ("Budget 2022 copy", "Duplicate of the 2022 budget sheet."),
    ("Volunteer hours 2022", "Food bank: 24 hours in total."),
)
INVOICE_COUNT = sum(1 for _, content in ARCHIVE if "invoice" in content.lower())
DUPLICATES = sorted(title for title, content in ARCHIVE if "duplicate" in content.lower())
APPENDED = "Reviewed on 2023-05-18"


def seed_base(ctx: SeedContext) -> None:
    notes = ctx.models.simple_note.Note
    maya = ctx.user("simple_note", ctx.supervisor.key)
    for index, (title, content) in enumerate(ARCHIVE):
        notes.create_save(user_id=maya.id, title=title, content=content, tags=[TAG, "old"],
                          created_at=ctx.at(f"2022-{3 + index:02d}-15T10:00:00"))
    notes.create_save(user_id=maya.id, title="Budget 2021 copy", content="Duplicate of the 2021 budget sheet.",
                      tags=["archive-2021"], created_at=ctx.at("2021-11-15T10:00:00"))
    notes.create_save(user_id=ctx.user("simple_note", "ben").id, title="Notes copy",
                      content="Duplicate of my notes.", tags=[TAG])


NOTE_LOGIN = login_preamble("simple_note")
LOGIN = block(NOTE_LOGIN, paginate("archive", "simple_note.search_notes", 'tags=["archive-2022"]', align=True), '''
    contents = {n["note_id"]: apis.simple_note.show_note(note_id=n["note_id"], access_token=token)["content"]
                for n in archive}
''')

COUNT_INVOICES = TaskDef(
    variant=1,
    difficulty=2,
    instruction=f"How many of my Simple Note notes tagged '{TAG}' contain the word 'invoice' in their content?",
    paraphrases={
        "mild": (f"How many of my Simple Note notes with the tag '{TAG}' have the word 'invoice' in their content?",),
        "medium": (
            f"Among my Simple Note notes tagged '{TAG}', how many contain the word 'invoice' in their content?",
        ),
        "strong": (
            f"It's Maya, digging through old paperwork. Of the Simple Note entries I labelled '{TAG}', what number "
            "mention 'invoice' somewhere in the body?",
        ),
        "naturalistic": (f"how many of my Simple Note notes taged '{TAG}' have the word 'invoice' in them?",),
    },
    answer=INVOICE_COUNT,
    required_apps=("simple_note",),
    solution=solution(LOGIN, '''
    apis.supervisor.complete_task(answer=sum(1 for content in contents.values() if "invoice" in content.lower()))
'''),
    **question_checks("the number of archive-2022 notes whose content mentions an invoice"),
)

DELETE_DUPLICATES = TaskDef(
    variant=2,
    difficulty=2,
    instruction=(f"Delete every one of my Simple Note notes tagged '{TAG}' whose content contains the word "
                 "'duplicate'. Keep all my other notes."),
    paraphrases={
        "mild": (
            f"Delete each of my Simple Note notes tagged '{TAG}' whose content contains the word 'duplicate'. Keep "
            "every other note of mine.",
        ),
        "medium": (
            f"My Simple Note notes tagged '{TAG}' whose content contains the word 'duplicate' should all be deleted; "
            "all my other notes stay.",
        ),
        "strong": (
            f"Maya here, decluttering. Among the Simple Note entries labelled '{TAG}', get rid of whichever have "
            "'duplicate' written in the body. Everything else I've written stays put.",
        ),
        "naturalistic": (
            f"pls delete my Simple Note notes taged '{TAG}' that have the word 'duplicate' in them. keep all the other "
            "notes",
        ),
    },
    required_apps=("simple_note",),
    private_data={"titles": DUPLICATES},
    solution=solution(LOGIN, '''
    for note_id, content in contents.items():
        if "duplicate" in content.lower():
            apis.simple_note.delete_note(note_id=note_id, access_token=token)
    apis.supervisor.complete_task()
'''),
    **action_checks(check("no_op_fail", """
        assert every duplicate archive note (private_data.titles) was deleted.
    """, '''
        added, updated, removed = models.changed_records("simple_note.Note")
        test.case(sorted({note.title for note in removed} & set(private_data.titles)), "==", private_data.titles)
    '''), check("no_op_pass", """
        assert no other note was deleted, none was added or edited, and nothing outside simple_note.Note changed.
    """, '''
        added, updated, removed = models.changed_records("simple_note.Note")
        test.case({note.title for note in removed} - set(private_data.titles), "is_falsy")
        test.case(len(added) + len(updated), "==", 0)
        test.case(models.changed_model_names() - {"simple_note.Note"}, "is_falsy")
    ''')),
)

APPEND_LINE = TaskDef(
    variant=3,
    difficulty=1,
    instruction=f"Add the line '{APPENDED}' at the end of my Simple Note note titled 'Lease renewal 2022'.",
    paraphrases={
        "mild": (f"Append the line '{APPENDED}' to the end of my Simple Note note titled 'Lease renewal 2022'.",),
        "medium": (f"At the end of my Simple Note note titled 'Lease renewal 2022', add the line '{APPENDED}'.",),
        "strong": (
            "It's Maya; I've gone over the lease paperwork. Stamp the Simple Note entry called 'Lease renewal 2022' "
            f"with a final line reading '{APPENDED}'.",
        ),
        "naturalistic": (f"add the line '{APPENDED}' at the bottom of my Simple Note note 'Lease renewal 2022' pls",),
    },
    required_apps=("simple_note",),
    private_data={"title": "Lease renewal 2022", "line": APPENDED},
    solution=solution(block(NOTE_LOGIN, '''
    notes = apis.simple_note.search_notes(query="Lease renewal 2022", page_limit=20, access_token=token)
    note = [n for n in notes if n["title"] == "Lease renewal 2022"][0]
    apis.simple_note.add_content_to_note(note_id=note["note_id"], append_or_prepend="append",
                                         added_content="Reviewed on 2023-05-18", access_token=token)
    apis.supervisor.complete_task()
''')),
    **action_checks(check("no_op_fail", """
        assert the note 'Lease renewal 2022' now ends with the requested line and kept its original content before it.
    """, '''
        added, updated, removed = models.changed_records("simple_note.Note")
        lease = [note for note in updated if note.title == private_data.title]
        test.case(len(lease), "==", 1)
        original = models.start.simple_note.Note.find_one(id=lease[0].id).content
        lines = [line.strip() for line in lease[0].content.strip().splitlines()]
        test.case(lines[-1], "==", private_data.line, normalize_text=True)
        test.case(lease[0].content.strip().startswith(original.strip()), "is_truthy")
    '''), check("no_op_pass", """
        assert no other note was edited, added or deleted, and nothing outside simple_note.Note changed.
    """, '''
        added, updated, removed = models.changed_records("simple_note.Note")
        test.case([note.title for note in updated if note.title != private_data.title], "is_falsy")
        test.case(len(added) + len(removed), "==", 0)
        test.case(models.changed_model_names() - {"simple_note.Note"}, "is_falsy")
    ''')),
)

SCENARIO = ScenarioDef(
    scenario_id="f0d2b22",
    title="Cleaning up the 2022 archive in Simple Note",
    split="test",
    apps=("simple_note",),
    seed_base=seed_base,
    tasks=(COUNT_INVOICES, DELETE_DUPLICATES, APPEND_LINE),
)
