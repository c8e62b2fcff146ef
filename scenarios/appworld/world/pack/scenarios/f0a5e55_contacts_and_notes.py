"""Scenario f0a5e55 (test): phone contacts meet Simple Note.

Reads the base world's phone contacts (five coworkers, two roommates). Seeds (shared base world):
Maya's note 'House rules' and a distractor 'House rules (old)'.
Variants: count the coworkers with a birthday from July to December (question; phone), a birthday list note
from the contacts (action; phone + simple_note), text each roommate the 'House rules' note (action;
simple_note + phone; a text to anyone else is collateral damage).
"""

from __future__ import annotations

from pack.snippets import action_checks, added_only_check, check, login_preamble, paginate, question_checks, solution
from pack.types import ScenarioDef, SeedContext, TaskDef
from pack.world import PEOPLE, SUPERVISOR_RELATIONSHIPS

_BY_KEY = {person.key: person for person in PEOPLE}
COWORKERS = sorted((k for k, rels in SUPERVISOR_RELATIONSHIPS.items() if "coworker" in rels))
ROOMMATES = sorted((k for k, rels in SUPERVISOR_RELATIONSHIPS.items() if "roommate" in rels))
LATE_BIRTHDAYS = sorted(_BY_KEY[k].full_name for k in COWORKERS if int(_BY_KEY[k].birthday[5:7]) >= 7)
BIRTHDAY_LINES = sorted(f"{_BY_KEY[k].full_name}: {_BY_KEY[k].birthday}" for k in COWORKERS)
RULES = "Quiet hours after 10pm. Recycling goes out on Tuesdays. Guests tell the group chat first."
if not LATE_BIRTHDAYS or len(LATE_BIRTHDAYS) == len(COWORKERS) or len(ROOMMATES) < 2:
    raise ValueError("f0a5e55 needs coworkers on both sides of July 1 and two roommates in pack.world")


def seed_base(ctx: SeedContext) -> None:
    notes = ctx.models.simple_note.Note
    maya = ctx.user("simple_note", ctx.supervisor.key)
    notes.create_save(user_id=maya.id, title="House rules (old)", content="No shoes inside. Bins out on Mondays.",
                      tags=["flat"], created_at=ctx.at("2022-09-01T10:00:00"))
    notes.create_save(user_id=maya.id, title="House rules", content=RULES, tags=["flat"],
                      created_at=ctx.at("2023-03-01T10:00:00"))


PHONE_LOGIN = login_preamble("phone", token="phone_token", profile=True)


def _contacts(relationship: str) -> str:
    return paginate("contacts", "phone.search_contacts", f"relationship={relationship!r}", token="phone_token",
                    align=True)


LATE = TaskDef(
    variant=1,
    difficulty=1,
    instruction=("How many of my coworkers have their birthday between July 1 and December 31? My phone contacts "
                 "say who my coworkers are and when their birthdays are."),
    paraphrases={
        "mild": (
            "How many of my coworkers have a birthday between July 1 and December 31? My phone contacts show who my "
            "coworkers are and when their birthdays fall.",
        ),
        "medium": (
            "My phone contacts say who my coworkers are and when their birthdays are. Between July 1 and December 31, "
            "how many of those coworkers have their birthday?",
        ),
        "strong": (
            "Maya here, budgeting for office cake in the second half of the year. Whose birthday from work lands from "
            "July 1 through December 31? I just need a count; my phone's address book records both the work "
            "relationship and the dates.",
        ),
        "naturalistic": (
            "how many of my coworkers have bdays between July 1 and December 31? u can see who's a coworker + their "
            "birthdays in my phone contacts",
        ),
    },
    answer=len(LATE_BIRTHDAYS),
    required_apps=("phone",),
    solution=solution(PHONE_LOGIN, _contacts("coworker"), '''
    late = [c for c in contacts if int(c["birthday"][5:7]) >= 7]
    apis.supervisor.complete_task(answer=len(late))
'''),
    **question_checks("the number of coworkers born from July to December"),
)

BIRTHDAY_NOTE = TaskDef(
    variant=2,
    difficulty=2,
    instruction=("Create a Simple Note note titled 'Coworker birthdays' that lists each of my coworkers (see my phone "
                 "contacts), one per line, as 'First Last: YYYY-MM-DD' with their birthday."),
    paraphrases={
        "mild": (
            "Make a Simple Note note titled 'Coworker birthdays' listing each of my coworkers (see my phone contacts), "
            "one per line, as 'First Last: YYYY-MM-DD' with their birthday.",
        ),
        "medium": (
            "Using my phone contacts to find my coworkers, create a Simple Note note titled 'Coworker birthdays' with "
            "one line per coworker, written as 'First Last: YYYY-MM-DD' with their birthday.",
        ),
        "strong": (
            "It's Maya. I keep forgetting work birthdays, so I want them written down: a new Simple Note entry named "
            "'Coworker birthdays', a single line for every colleague in my phone's address book, each shaped exactly "
            "like 'First Last: YYYY-MM-DD' using that person's date of birth.",
        ),
        "naturalistic": (
            "can u make a Simple Note note called 'Coworker birthdays' w/ all my coworkers from my phone contacts, one "
            "per line, formatted 'First Last: YYYY-MM-DD' w/ their bday",
        ),
    },
    required_apps=("phone", "simple_note"),
    private_data={"title": "Coworker birthdays", "lines": BIRTHDAY_LINES},
    solution=solution(PHONE_LOGIN, _contacts("coworker"), '''
    note_token = apis.simple_note.login(username=profile["email"], password=passwords["simple_note"])["access_token"]
    lines = [c["first_name"] + " " + c["last_name"] + ": " + c["birthday"] for c in contacts]
    apis.simple_note.create_note(title="Coworker birthdays", content="\\n".join(lines), access_token=note_token)
    apis.supervisor.complete_task()
'''),
    **action_checks(check("no_op_fail", """
        assert exactly one note was added, owned by the user and titled 'Coworker birthdays'.
    """, '''
        added, updated, removed = models.changed_records("simple_note.Note")
        owner = models.end.simple_note.User.find_from(main_user)
        test.case(len(added), "==", 1)
        test.case(added[0].user_id, "==", owner.id)
        test.case(added[0].title, "==", private_data.title, normalize_text=True)
    '''), check("no_op_fail", """
        assert the new note's non-empty lines are exactly one 'First Last: YYYY-MM-DD' line per coworker.
    """, '''
        added, updated, removed = models.changed_records("simple_note.Note")
        test.case(len(added), ">", 0)
        lines = [line.strip().lstrip("-* ").strip().lower() for line in added[0].content.splitlines()]
        test.case(sorted(line for line in lines if line), "==", [line.lower() for line in private_data.lines])
    '''), added_only_check("""
        assert no existing note was edited or deleted and nothing outside simple_note.Note changed.
    """, "simple_note.Note")),
)

TEXT_RULES = TaskDef(
    variant=3,
    difficulty=3,
    instruction=("Text each of my roommates on my phone the content of my Simple Note note titled 'House rules', "
                 "exactly as written. My phone contacts say who my roommates are."),
    paraphrases={
        "mild": (
            "Send each of my roommates a text on my phone with the content of my Simple Note note titled 'House "
            "rules', exactly as it is written. My phone contacts show who my roommates are.",
        ),
        "medium": (
            "My phone contacts say who my roommates are. Each of them should get a text from my phone containing the "
            "content of my Simple Note note titled 'House rules', exactly as written.",
        ),
        "strong": (
            "Maya here; the flat needs reminding of the rules. Whoever my phone's address book marks as living with me "
            "should get a message from me, word for word the body of the Simple Note entry called 'House rules', "
            "nothing changed.",
        ),
        "naturalistic": (
            "text each of my roommates on my phone whatever's in my Simple Note note 'House rules', word for word pls. "
            "my phone contacts say who the roomates are",
        ),
    },
    required_apps=("phone", "simple_note"),
    private_data={"receivers": [_BY_KEY[k].phone_number for k in ROOMMATES], "message": RULES},
    solution=solution(PHONE_LOGIN, _contacts("roommate"), '''
    note_token = apis.simple_note.login(username=profile["email"], password=passwords["simple_note"])["access_token"]
    notes = apis.simple_note.search_notes(query="House rules", page_limit=20, access_token=note_token)
    note = [n for n in notes if n["title"] == "House rules"][0]
    content = apis.simple_note.show_note(note_id=note["note_id"], access_token=note_token)["content"]
    for contact in contacts:
        apis.phone.send_text_message(phone_number=contact["phone_number"], message=content, access_token=phone_token)
    apis.supervisor.complete_task()
'''),
    **action_checks(check("no_op_fail", """
        assert each roommate got exactly one new text from the user whose message is the note's content.
    """, '''
        added, updated, removed = models.changed_records("phone.GlobalTextMessage")
        maya = models.end.phone.User.find_from(main_user)
        for number in private_data.receivers:
            roommate = models.end.phone.User.find_one(phone_number=number)
            texts = [t for t in added if t.sender_id == maya.id and t.receiver_id == roommate.id]
            test.case(len(texts), "==", 1)
            test.case(texts[0].message, "==", private_data.message, normalize_text=True)
    '''), check("no_op_pass", """
        assert no text went to anyone who is not a roommate and no text was changed or deleted.
    """, '''
        added, updated, removed = models.changed_records("phone.GlobalTextMessage")
        ids = {models.end.phone.User.find_one(phone_number=number).id for number in private_data.receivers}
        test.case([t.id for t in added if t.receiver_id not in ids], "is_falsy")
        test.case(len(updated) + len(removed), "==", 0)
    '''), check("no_op_pass", """
        assert nothing outside the phone's text messages changed (the note is untouched).
    """, '''
        test.case(models.changed_model_names() - {"phone.GlobalTextMessage", "phone.UserTextMessage"}, "is_falsy")
    ''')),
)

SCENARIO = ScenarioDef(
    scenario_id="f0a5e55",
    title="Phone contacts meet Simple Note",
    split="test",
    apps=("phone", "simple_note"),
    seed_base=seed_base,
    tasks=(LATE, BIRTHDAY_NOTE, TEXT_RULES),
)
