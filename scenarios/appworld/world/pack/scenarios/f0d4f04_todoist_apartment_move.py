"""Scenario f0d4f04 (train): Maya's 'Apartment Move' project in Todoist, shared with her roommate Chloe.

Seeds (per task): the project 'Apartment Move' (Maya + collaborator Chloe) with 13 tasks, most of
them inside the sections 'Packing' and 'Utilities' (`show_tasks` returns them apart from the
section-less tasks); five are incomplete and overdue (task time 2023-05-18), only one of them
outside a section. Distractors: completed overdue tasks, a task due today, and the projects
'Office Move' and 'Apartment Move 2021' with their own overdue tasks. Maya then has 6 projects, so
listing all of them takes two pages at the default page size.
Variants: count the overdue open tasks (question), reschedule them (action), hand the Utilities
section over to Chloe and add a task there (action).
"""

from __future__ import annotations

from pack.snippets import (
    action_checks, block, check, kept_rows_check, login_preamble, page_loop, question_checks, solution,
)
from pack.types import ScenarioDef, SeedContext, TaskDef

PROJECT = "Apartment Move"
TODAY = "2023-05-18"
# (title, section or None, due date, completed, priority); order_index follows this order per section.
TASKS = (
    ("Book moving truck", None, "2023-05-12", False, "high"),
    ("Get moving boxes", None, "2023-05-08", True, "medium"),
    ("Forward mail to new address", None, "2023-05-25", False, "medium"),
    ("Measure the new living room", None, "2023-05-18", False, "low"),
    ("Pack the kitchen", "Packing", "2023-05-15", False, "medium"),
    ("Pack books", "Packing", "2023-05-16", True, "low"),
    ("Pack winter clothes", "Packing", "2023-05-17", False, "low"),
    ("Label all boxes", "Packing", "2023-05-24", False, "medium"),
    ("Pack the bathroom", "Packing", "2023-05-27", False, "low"),
    ("Cancel old internet plan", "Utilities", "2023-05-05", False, "high"),
    ("Set up electricity at new place", "Utilities", "2023-05-10", False, "medium"),
    ("Transfer renter's insurance", "Utilities", "2023-05-29", False, "medium"),
    ("Schedule final meter reading", "Utilities", "2023-05-02", True, "low"),
)
OTHER_PROJECTS = {
    "Office Move": [("Order new desk chairs", "2023-05-09", False), ("Return old badge", "2023-05-11", False),
                    ("Update floor plan", "2023-05-30", False)],
    "Apartment Move 2021": [("Pack the garage", "2021-06-02", False), ("Return cable box", "2021-06-10", False),
                            ("Book cleaners", "2021-06-12", True)],
}
OVERDUE = sorted(title for title, _, due, done, _ in TASKS if not done and due < TODAY)
UTILITIES_OPEN = sorted(title for title, section, _, done, _ in TASKS if section == "Utilities" and not done)
NEW_DUE = "2023-05-21"
NEW_TASK = {"title": "Read the water meter on moving day", "due_date": "2023-05-31", "priority": "high",
            "section": "Utilities"}


def seed_apartment_move(ctx: SeedContext) -> None:
    """Seeded per task (all three variants)."""
    todoist = ctx.models.todoist
    maya, chloe = ctx.user("todoist", ctx.supervisor.key), ctx.user("todoist", "chloe")
    project = todoist.Project.create_save(user_id=maya.id, name=PROJECT, color="green",
                                          description="Moving to the new place on May 31",
                                          created_at=ctx.at("2023-04-02T10:00:00"))
    for member, joined in ((maya, "2023-04-02T10:00:00"), (chloe, "2023-04-03T09:00:00")):
        todoist.ProjectCollaboratorLink.create_save(project_id=project.id, user_id=member.id,
                                                    created_at=ctx.at(joined))
    sections = {
        name: todoist.Section.create_save(project_id=project.id, name=name, order_index=index,
                                          created_at=ctx.at("2023-04-02T10:05:00"))
        for index, name in enumerate(("Packing", "Utilities"))
    }
    order: dict[str | None, int] = {}
    for title, section, due, done, priority in TASKS:
        index = order[section] = order.get(section, -1) + 1
        todoist.Task.create_save(
            project_id=project.id, section_id=sections[section].id if section else None, user_id=maya.id,
            title=title, due_date=ctx.at(f"{due}T17:00:00"), is_completed=done, priority=priority,
            order_index=index, created_at=ctx.at("2023-04-02T10:10:00"),
        )
    for offset, (name, tasks) in enumerate(OTHER_PROJECTS.items()):
        other = todoist.Project.create_save(user_id=maya.id, name=name, color="orange",
                                            created_at=ctx.at(f"2021-0{5 + offset}-01T10:00:00"))
        todoist.ProjectCollaboratorLink.create_save(project_id=other.id, user_id=maya.id,
                                                    is_archived=name.endswith("2021"))
        for index, (title, due, done) in enumerate(tasks):
            todoist.Task.create_save(project_id=other.id, user_id=maya.id, title=title, priority="medium",
                                     due_date=ctx.at(f"{due}T17:00:00"), is_completed=done, order_index=index)


LOGIN = block(login_preamble("todoist"), "    project_id = None", page_loop(
    "todoist.show_projects", condition="project_id is None", body=f'''
    for project in page:
        if project["name"] == "{PROJECT}":
            project_id = project["project_id"]
'''))
OVERDUE_TASKS = '''
    listing = apis.todoist.show_tasks(project_id=project_id, is_completed=False, overdue=True, access_token=token)
    overdue = listing["no_section_tasks"] + [task for section in listing["sections"] for task in section["tasks"]]
'''


COUNT_OVERDUE = TaskDef(
    variant=1,
    difficulty=1,
    instruction=(
        f"How many tasks in my Todoist project '{PROJECT}' are still not completed even though their due date "
        "is already past (before today)?"
    ),
    paraphrases={
        "mild": (
            f"How many tasks in my Todoist project '{PROJECT}' are still not done even though their due date has "
            "already passed (before today)?",
        ),
        "medium": (
            f"In my Todoist project '{PROJECT}', how many tasks have a due date that is already past (before today) "
            "and are still not completed?",
        ),
        "strong": (
            f"Maya here, the move is slipping. Within '{PROJECT}' on Todoist, what count of to-dos are overdue, "
            "meaning their deadline fell before today, and still unfinished?",
        ),
        "naturalistic": (
            f"how many tasks in my Todoist project '{PROJECT}' are overdue (due before today) and still not done?",
        ),
    },
    answer=len(OVERDUE),
    required_apps=("todoist",),
    seed_task=seed_apartment_move,
    solution=solution(LOGIN, OVERDUE_TASKS, '''
    apis.supervisor.complete_task(answer=len(overdue))
'''),
    **question_checks("the number of incomplete overdue tasks in 'Apartment Move'"),
)

RESCHEDULE = TaskDef(
    variant=2,
    difficulty=2,
    instruction=(
        f"In my Todoist project '{PROJECT}', every task that isn't completed and whose due date has already passed "
        f"(before today) should now be due on {NEW_DUE} with high priority. Please update them."
    ),
    paraphrases={
        "mild": (
            f"In my Todoist project '{PROJECT}', every task that isn't done and whose due date has already gone by "
            f"(before today) should now be due on {NEW_DUE} with high priority. Please update them.",
        ),
        "medium": (
            f"Please update my Todoist project '{PROJECT}': each task not yet completed whose due date has already "
            f"passed (before today) gets a new due date of {NEW_DUE} and high priority.",
        ),
        "strong": (
            f"It's Maya, rescheduling. Whatever in '{PROJECT}' on Todoist is still open with a deadline already behind "
            f"us (earlier than today), push it to {NEW_DUE} and flag it as high priority.",
        ),
        "naturalistic": (
            f"in my Todoist project '{PROJECT}' pls move every unfinished task thats overdue (due before today) to "
            f"{NEW_DUE} and make it high priority",
        ),
    },
    required_apps=("todoist",),
    seed_task=seed_apartment_move,
    private_data={"titles": OVERDUE, "due_date": NEW_DUE, "priority": "high"},
    solution=solution(LOGIN, OVERDUE_TASKS, '''
    for task in overdue:
        apis.todoist.update_task(task_id=task["task_id"], due_date="2023-05-21", priority="high", access_token=token)
    apis.supervisor.complete_task()
'''),
    **action_checks(check("no_op_fail", """
        assert exactly the incomplete overdue tasks (private_data.titles) were updated, each now due on
        private_data.due_date with high priority and still not completed.
    """, '''
        added, updated, removed = models.changed_records("todoist.Task")
        test.case(sorted(task.title for task in updated), "==", private_data.titles)
        for task in updated:
            test.case(task.due_date.strftime("%Y-%m-%d"), "==", private_data.due_date)
            test.case(task.priority, "==", private_data.priority)
            test.case(task.is_completed, "==", False)
    '''), kept_rows_check("""
        assert no task was added or removed, the updated tasks kept their title, project and section, and
        nothing outside todoist tasks and notifications changed.
    """, "todoist.Task", changed_only=("todoist.Task", "todoist.Notification"), after='''
        originals = {task.id: task for task in models.start.todoist.Task.all()}
        for task in updated:
            before = originals[task.id]
            test.case((task.title, task.project_id, task.section_id), "==",
                      (before.title, before.project_id, before.section_id))
    ''')),
)

HAND_OVER = TaskDef(
    variant=3,
    difficulty=3,
    instruction=(
        f"My roommate Chloe is taking over the Utilities section of our Todoist project '{PROJECT}'. Assign her "
        f"every task in that section that isn't completed yet, and add a new task to that section titled "
        f"'{NEW_TASK['title']}', due {NEW_TASK['due_date']}, with high priority."
    ),
    paraphrases={
        "mild": (
            f"My roommate Chloe is taking charge of the Utilities section of our Todoist project '{PROJECT}'. Assign "
            "her each task in that section that isn't completed yet, and add a new task to that section titled "
            f"'{NEW_TASK['title']}', due {NEW_TASK['due_date']}, with high priority.",
        ),
        "medium": (
            f"In the Utilities section of our Todoist project '{PROJECT}', which my roommate Chloe is taking over, "
            "assign her every task that isn't completed yet; then add to that section a new task titled "
            f"'{NEW_TASK['title']}', due {NEW_TASK['due_date']}, with high priority.",
        ),
        "strong": (
            "Maya here. Chloe, who lives with me, now owns the Utilities part of our shared Todoist project "
            f"'{PROJECT}'. Hand her everything there that's still open, and put one more to-do in that part: "
            f"'{NEW_TASK['title']}', deadline {NEW_TASK['due_date']}, high priority.",
        ),
        "naturalistic": (
            f"my roommate Chloe is taking over the Utilities section in our Todoist project '{PROJECT}'. assign her "
            f"all the unfinished tasks there + add a new task in that section '{NEW_TASK['title']}' due "
            f"{NEW_TASK['due_date']}, high priority",
        ),
    },
    required_apps=("todoist",),
    seed_task=seed_apartment_move,
    private_data={"assigned_titles": UTILITIES_OPEN, "assignee_email": "chloe.nguyen@gmail.com",
                  "project": PROJECT, "new_task": NEW_TASK},
    solution=solution(LOGIN, '''
    project = apis.todoist.show_project(project_id=project_id, access_token=token)
    section_id = [section["id"] for section in project["sections"] if section["name"] == "Utilities"][0]
    chloe_email = [person["email"] for person in project["collaborators"] if person["name"].startswith("Chloe")][0]
    listing = apis.todoist.show_tasks(project_id=project_id, section_id=section_id, is_completed=False,
                                      access_token=token)
    open_tasks = [task for section in listing["sections"] for task in section["tasks"]]
    for task in open_tasks:
        apis.todoist.assign_or_unassign_task(task_id=task["task_id"], assignee_email=chloe_email, access_token=token)
    apis.todoist.create_task(
        project_id=project_id, section_id=section_id, title="Read the water meter on moving day",
        due_date="2023-05-31", priority="high", access_token=token,
    )
    apis.supervisor.complete_task()
'''),
    **action_checks(check("no_op_fail", """
        assert exactly the open Utilities tasks (private_data.assigned_titles) changed assignee among the
        existing tasks, each now assigned to Chloe.
    """, '''
        added, updated, removed = models.changed_records("todoist.Task")
        originals = {task.id: task for task in models.start.todoist.Task.all()}
        reassigned = [task for task in updated if task.assignee_id != originals[task.id].assignee_id]
        chloe = models.end.todoist.User.find_one(email=private_data.assignee_email)
        test.case(sorted(task.title for task in reassigned), "==", private_data.assigned_titles)
        test.case({task.assignee_id for task in reassigned}, "==", {chloe.id})
    '''), check("no_op_fail", """
        assert exactly one task was added, in the Utilities section of 'Apartment Move', with the requested
        title, due date and high priority, not completed.
    """, '''
        added, updated, removed = models.changed_records("todoist.Task")
        test.case(len(added), "==", 1)
        new = added[0]
        project = models.end.todoist.Project.find_one(id=new.project_id)
        section = models.end.todoist.Section.find_one(id=new.section_id)
        test.case(project.name, "==", private_data.project)
        test.case(section.name if section else None, "==", private_data.new_task["section"])
        test.case(new.title, "==", private_data.new_task["title"], normalize_text=True)
        test.case(new.due_date.strftime("%Y-%m-%d"), "==", private_data.new_task["due_date"])
        test.case(new.priority, "==", private_data.new_task["priority"])
        test.case(new.is_completed, "==", False)
    '''), check("no_op_pass", """
        assert no task was removed, no existing task changed its title, due date, priority, completion,
        project or section, and nothing outside todoist tasks and notifications changed.
    """, '''
        added, updated, removed = models.changed_records("todoist.Task")
        test.case(len(removed), "==", 0)
        originals = {task.id: task for task in models.start.todoist.Task.all()}
        fields = ("title", "due_date", "priority", "is_completed", "project_id", "section_id")
        for task in updated:
            before = originals[task.id]
            test.case([getattr(task, name) for name in fields], "==", [getattr(before, name) for name in fields])
        test.case(models.changed_model_names() - {"todoist.Task", "todoist.Notification"}, "is_falsy")
    ''')),
)

SCENARIO = ScenarioDef(
    scenario_id="f0d4f04",
    title="Apartment move in Todoist",
    split="train",
    apps=("todoist",),
    tasks=(COUNT_OVERDUE, RESCHEDULE, HAND_OVER),
)
