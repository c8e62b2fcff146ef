"""Scenario f0daa10 (dev): the 'Atlas Launch' Todoist project and Maya's coworkers on the phone.

Seeds (every variant's own world, via `seed_task`): Maya's shared project 'Atlas Launch' with 14 tasks
assigned to coworkers (Ben, Diego, Grace, Hiro, Tom), to her friend Kira, to herself or to nobody,
some completed, several due tomorrow (2023-05-19); a second project 'Team Offsite' with a coworker's
task due tomorrow (distractor). Who is a coworker comes from the base world's phone contacts.
Variants: which coworker has a July birthday (question), how many open 'Atlas Launch' tasks are
assigned to coworkers (question), text each coworker a reminder per open task due tomorrow (action).
"""

from __future__ import annotations

from pack.snippets import (
    NULL_ANSWER_CHECK, added_only_check, block, check, checks, login, login_preamble, paginate, question_checks,
    solution,
)
from pack.types import ScenarioDef, SeedContext, TaskDef
from pack.world import PEOPLE, SUPERVISOR_RELATIONSHIPS

PROJECT = "Atlas Launch"
TOMORROW = "2023-05-19"
COWORKERS = sorted(key for key, relations in SUPERVISOR_RELATIONSHIPS.items() if "coworker" in relations)
PERSON = {person.key: person for person in PEOPLE}
# (title, assignee key or None, due date, completed); order_index follows this order.
TASKS = (
    ("Finalize pricing page copy", "ben", TOMORROW, False),
    ("QA the signup flow", "diego", TOMORROW, False),
    ("Record demo video", "grace", TOMORROW, True),
    ("Update launch checklist", "hiro", TOMORROW, False),
    ("Design social media banners", "kira", TOMORROW, False),
    ("Draft press release", "maya", TOMORROW, False),
    ("Prepare FAQ for support team", "ben", TOMORROW, False),
    ("Book launch party venue", "grace", "2023-05-22", False),
    ("Review analytics dashboard", "diego", "2023-05-18", False),
    ("Write release notes", "hiro", "2023-05-25", False),
    ("Collect beta feedback", "tom", "2023-05-20", False),
    ("Localize onboarding emails", "grace", "2023-05-30", True),
    ("Order team t-shirts", None, TOMORROW, False),
    ("Fix checkout bug", "tom", "2023-05-17", True),
)
COLLABORATORS = ("maya", "ben", "diego", "grace", "hiro", "tom", "kira")
OFFSITE = ("Team Offsite", "Reserve offsite meeting room", "grace", TOMORROW)

OPEN_COWORKER_TASKS = sum(1 for _, who, _, done in TASKS if who in COWORKERS and not done)
REMINDERS = sorted([PERSON[who].phone_number, f"Reminder: {title} is due tomorrow."]
                   for title, who, due, done in TASKS if who in COWORKERS and due == TOMORROW and not done)
JULY_COWORKERS = [PERSON[key].full_name for key in COWORKERS if PERSON[key].birthday[5:7] == "07"]
if len(JULY_COWORKERS) != 1:
    raise ValueError(f"f0daa10 needs exactly one coworker born in July, world.py gives {JULY_COWORKERS}")


def seed_launch(ctx: SeedContext) -> None:
    todoist = ctx.models.todoist
    users = {key: ctx.user("todoist", key) for key in COLLABORATORS}
    maya = users["maya"]
    project = todoist.Project.create_save(user_id=maya.id, name=PROJECT, color="red",
                                          description="Product launch on May 31",
                                          created_at=ctx.at("2023-04-20T10:00:00"))
    for key in COLLABORATORS:
        todoist.ProjectCollaboratorLink.create_save(project_id=project.id, user_id=users[key].id,
                                                    created_at=ctx.at("2023-04-20T10:00:00"))
    for index, (title, who, due, done) in enumerate(TASKS):
        todoist.Task.create_save(
            project_id=project.id, user_id=maya.id, title=title, order_index=index,
            priority="high" if index % 3 else "medium",
            due_date=ctx.at(f"{due}T17:00:00"), is_completed=done,
            assignee_id=users[who].id if who else None, assigner_id=maya.id if who else None,
            created_at=ctx.at(f"2023-04-{21 + index % 7:02d}T09:00:00"),
        )
    name, title, who, due = OFFSITE
    offsite = todoist.Project.create_save(user_id=maya.id, name=name, color="yellow",
                                          created_at=ctx.at("2023-05-02T10:00:00"))
    for key in ("maya", who):
        todoist.ProjectCollaboratorLink.create_save(project_id=offsite.id, user_id=users[key].id)
    todoist.Task.create_save(project_id=offsite.id, user_id=maya.id, title=title, order_index=0, priority="low",
                             due_date=ctx.at(f"{due}T17:00:00"), assignee_id=users[who].id, assigner_id=maya.id)


LOGIN = block(login_preamble("phone", token="phone_token", profile=True),
              paginate("coworkers", "phone.search_contacts", 'relationship="coworker"', token="phone_token"))

TODOIST_LOGIN = block(login("todoist", 'profile["email"]'), f'''
    projects = apis.todoist.show_projects(query="{PROJECT}", page_limit=20, access_token=token)
    project_id = [p for p in projects if p["name"] == "{PROJECT}"][0]["project_id"]


    def open_tasks_of(assignee_email):
        found = apis.todoist.show_tasks(
            project_id=project_id, assignee_email=assignee_email, is_completed=False, access_token=token
        )
        return found["no_section_tasks"] + [task for section in found["sections"] for task in section["tasks"]]
''')


JULY_BIRTHDAY = TaskDef(
    variant=1,
    difficulty=1,
    instruction="Which of my coworkers in my phone contacts has a birthday in July? Tell me their full name.",
    paraphrases={
        "mild": ("Which of my coworkers in my phone contacts has their birthday in July? Give me their full name.",),
        "medium": ("In my phone contacts, which coworker of mine has a birthday in July? Tell me their full name.",),
        "strong": (
            "It's Maya, organising a card. Among the colleagues in my phone's address book, whose birthday falls in "
            "July? First and last name, please.",
        ),
        "naturalistic": ("which coworker in my phone contacts has a bday in July? full name pls",),
    },
    answer=JULY_COWORKERS[0],
    required_apps=("phone",),
    seed_task=seed_launch,
    solution=solution(LOGIN, '''
    july = [c for c in coworkers if c["birthday"] and c["birthday"][5:7] == "07"]
    apis.supervisor.complete_task(answer=july[0]["first_name"] + " " + july[0]["last_name"])
'''),
    **question_checks("the full name of the user's only coworker contact born in July"),
)

COUNT_OPEN = TaskDef(
    variant=2,
    difficulty=2,
    instruction=(
        f"How many unfinished tasks in my Todoist project '{PROJECT}' are assigned to my coworkers? "
        "My phone contacts say who my coworkers are."
    ),
    paraphrases={
        "mild": (
            f"How many incomplete tasks in my Todoist project '{PROJECT}' are assigned to my coworkers? My phone "
            "contacts show who my coworkers are.",
        ),
        "medium": (
            f"In my Todoist project '{PROJECT}', how many unfinished tasks are assigned to my coworkers? Who my "
            "coworkers are is in my phone contacts.",
        ),
        "strong": (
            f"Maya here, checking the team's load. Of the open to-dos in '{PROJECT}' on Todoist, what number sit with "
            "my colleagues? My phone's address book marks which people are colleagues.",
        ),
        "naturalistic": (
            f"how many unfinished tasks in my Todoist project '{PROJECT}' are assigned to my coworkers? my phone "
            "contacts say who they are",
        ),
    },
    answer=OPEN_COWORKER_TASKS,
    required_apps=("phone", "todoist"),
    seed_task=seed_launch,
    solution=solution(LOGIN, TODOIST_LOGIN, '''
    count = sum(len(open_tasks_of(coworker["email"])) for coworker in coworkers)
    apis.supervisor.complete_task(answer=count)
'''),
    **question_checks(
        f"the number of incomplete tasks in '{PROJECT}' whose assignee is one of the user's coworker contacts"
    ),
)

TEXT_REMINDERS = TaskDef(
    variant=3,
    difficulty=3,
    instruction=(
        f"For every unfinished task in my Todoist project '{PROJECT}' that is due tomorrow and assigned to one of "
        "my coworkers (see my phone contacts), text that coworker on the phone, one message per task, saying "
        "exactly: Reminder: <task title> is due tomorrow."
    ),
    paraphrases={
        "mild": (
            f"For each unfinished task in my Todoist project '{PROJECT}' that is due tomorrow and assigned to one of "
            "my coworkers (see my phone contacts), text that coworker on the phone, one message per task, saying "
            "exactly: Reminder: <task title> is due tomorrow.",
        ),
        "medium": (
            "Text a coworker on the phone, one message per task, for every unfinished task in my Todoist project "
            f"'{PROJECT}' that is assigned to them (my phone contacts say who my coworkers are) and due tomorrow, "
            "saying exactly: Reminder: <task title> is due tomorrow.",
        ),
        "strong": (
            "It's Maya; launch prep is tight. Wherever a colleague of mine (my phone's address book tells you who) "
            f"holds an open to-do in '{PROJECT}' on Todoist with a deadline of tomorrow, message that person from my "
            "phone, a separate message for each to-do, worded exactly: Reminder: <task title> is due tomorrow.",
        ),
        "naturalistic": (
            f"for every unfinished task in my Todoist project '{PROJECT}' due tmrw and assigned to a coworker (see my "
            "phone contacts), text that coworker on the phone, one msg per task, saying exactly: Reminder: <task "
            "title> is due tomorrow.",
        ),
    },
    required_apps=("phone", "todoist"),
    seed_task=seed_launch,
    private_data={"messages": REMINDERS},
    solution=solution(LOGIN, TODOIST_LOGIN, f'''
    for coworker in coworkers:
        for task in open_tasks_of(coworker["email"]):
            if task["due_date"] and task["due_date"].startswith("{TOMORROW}"):
                apis.phone.send_text_message(
                    phone_number=coworker["phone_number"], message="Reminder: " + task["title"] + " is due tomorrow.",
                    access_token=phone_token,
                )
    apis.supervisor.complete_task()
'''),
    **checks('''
    def normalized(text):
        return " ".join(text.lower().split())

    maya = models.end.phone.User.find_from(main_user)
''', NULL_ANSWER_CHECK, check("no_op_fail", """
        assert every expected reminder (private_data.messages: recipient phone number and text, compared case- and
        whitespace-insensitively) was sent exactly once by the user.
    """, '''
        added = models.changed_records("phone.GlobalTextMessage")[0]
        sent = [[models.end.phone.User.find_one(id=m.receiver_id).phone_number, normalized(m.message)]
                for m in added if m.sender_id == maya.id]
        test.case(len(private_data.messages), ">", 0)
        for phone, text in private_data.messages:
            test.case(sent.count([phone, normalized(text)]), "==", 1)
    '''), check("no_op_pass", """
        assert no new text message went to anyone who gets no reminder, and none is an extra text to a recipient.
    """, '''
        added = models.changed_records("phone.GlobalTextMessage")[0]
        receivers = [models.end.phone.User.find_one(id=m.receiver_id).phone_number for m in added]
        expected = [phone for phone, _ in private_data.messages]
        test.case(set(receivers) - set(expected), "is_falsy")
        test.case(len(receivers), "<=", len(expected))
    '''), added_only_check("""
        assert no existing message was changed or removed, and nothing but text messages changed (Todoist included).
    """, "phone.GlobalTextMessage", "phone.UserTextMessage")),
)

SCENARIO = ScenarioDef(
    scenario_id="f0daa10",
    title="Launch reminders: Todoist and phone",
    split="dev",
    apps=("todoist", "phone"),
    tasks=(JULY_BIRTHDAY, COUNT_OPEN, TEXT_REMINDERS),
)
