"""Scenario f0c1a11 (test): texts and alarms on Maya's phone.

Seeds (shared base world): texts between Maya and her mother Nadia from May 12 to 17 (7 from Nadia,
3 from Maya: two pages of `show_text_message_window` at the default page size), plus distractors
(Nadia's texts on May 11 and 18, Liam's texts in the window). Seeds (variant 3 only): six more
alarms, one of them 'Wake up weekend'.
Variants: count the mother's texts in a date window (question), text the mother (action), switch
off one alarm and create another (action).
"""

from __future__ import annotations

from pack.snippets import action_checks, block, check, login_preamble, paginate, question_checks, solution
from pack.types import ScenarioDef, SeedContext, TaskDef

# (from_nadia, when, message)
NADIA_TEXTS = (
    (True, "2023-05-11T19:00:00", "Did you get the package?"),
    (True, "2023-05-12T08:10:00", "Good morning sweetie"),
    (False, "2023-05-12T08:30:00", "Morning mom!"),
    (True, "2023-05-13T12:00:00", "Grandma says hi"),
    (True, "2023-05-14T09:45:00", "Happy Mother's Day brunch was lovely"),
    (False, "2023-05-14T10:00:00", "Love you!"),
    (True, "2023-05-15T18:20:00", "Can you bring the cake on Saturday?"),
    (True, "2023-05-16T07:05:00", "Don't forget your umbrella"),
    (False, "2023-05-16T07:30:00", "Thanks mom"),
    (True, "2023-05-17T21:40:00", "Call me tomorrow"),
    (True, "2023-05-18T08:00:00", "Morning!"),
)
WINDOW = ("2023-05-12", "2023-05-17")
FROM_NADIA_IN_WINDOW = sum(1 for mine, when, _ in NADIA_TEXTS if mine and WINDOW[0] <= when[:10] <= WINDOW[1])
MESSAGE = "I will pick up the cake on Saturday."
EXTRA_ALARMS = (("08:30", "Wake up weekend", ["saturday", "sunday"]), ("12:30", "Lunch", None),
                ("15:00", "Stretch", ["monday", "friday"]), ("18:00", "Dinner prep", None),
                ("21:30", "Read", None), ("22:45", "Sleep", None))


def _text(ctx: SeedContext, sender_key: str, receiver_key: str, message: str, when: str) -> None:
    """One text visible to both sides (world.py's pattern), dated `when` on both rows."""
    phone = ctx.models.phone
    sender, receiver = ctx.user("phone", sender_key), ctx.user("phone", receiver_key)
    row = phone.GlobalTextMessage.create_save(sender_id=sender.id, receiver_id=receiver.id, message=message,
                                              created_at=ctx.at(when))
    for owner in (sender, receiver):
        phone.UserTextMessage.create_save(global_text_message_id=row.id, user_id=owner.id, created_at=ctx.at(when))


def seed_base(ctx: SeedContext) -> None:
    maya = ctx.supervisor.key
    for from_nadia, when, message in NADIA_TEXTS:
        sender, receiver = ("nadia", maya) if from_nadia else (maya, "nadia")
        _text(ctx, sender, receiver, message, when)
    for day in (13, 15, 16, 17):
        _text(ctx, "liam", maya, "Are you coming to the game?", f"2023-05-{day}T17:00:00")


def seed_alarms(ctx: SeedContext) -> None:
    maya = ctx.user("phone", ctx.supervisor.key)
    for time, label, days in EXTRA_ALARMS:
        ctx.models.phone.Alarm.create_save(user_id=maya.id, time=time, label=label, enabled=True, repeat_days=days)


LOGIN = login_preamble("phone")
MOTHER = '''
    mother = apis.phone.search_contacts(relationship="parent", access_token=token)[0]
'''

COUNT_TEXTS = TaskDef(
    variant=1,
    difficulty=2,
    instruction=("How many text messages did my mother send me on my phone between May 12 and May 17, 2023, "
                 "both days included? My phone contacts say who she is."),
    paraphrases={
        "mild": (
            "How many texts did my mother send me on my phone between May 12 and May 17, 2023, including both days? My "
            "phone contacts show who she is.",
        ),
        "medium": (
            "Between May 12 and May 17, 2023, both days included, how many text messages did my mother send me on my "
            "phone? Who she is is in my phone contacts.",
        ),
        "strong": (
            "Maya here. Mom has been messaging a lot lately; from May 12 through May 17, 2023, counting both ends, how "
            "many of her texts arrived on my phone? My phone's address book tells you which contact she is.",
        ),
        "naturalistic": (
            "how many texts did my mom send me on my phone from May 12 to May 17, 2023 (both days incl)? shes in my "
            "phone contacts",
        ),
    },
    answer=FROM_NADIA_IN_WINDOW,
    required_apps=("phone",),
    solution=solution(LOGIN, MOTHER, block(paginate(
        "messages", "phone.show_text_message_window", 'phone_number=mother["phone_number"]'), '''
    count = sum(1 for message in messages if message["sender"]["phone_number"] == mother["phone_number"]
                and "2023-05-12" <= message["sent_at"][:10] <= "2023-05-17")
    apis.supervisor.complete_task(answer=count)
''')),
    **question_checks("the number of texts the user's mother sent from May 12 to May 17"),
)

TEXT_MOTHER = TaskDef(
    variant=2,
    difficulty=1,
    instruction=f"Text my mother on my phone: '{MESSAGE}' My phone contacts say who she is.",
    paraphrases={
        "mild": (f"Send my mother a text on my phone: '{MESSAGE}' My phone contacts show who she is.",),
        "medium": (f"On my phone, text this to my mother: '{MESSAGE}' Who she is is in my phone contacts.",),
        "strong": (
            f"It's Maya; Mom is worried about the party. Message her from my phone with exactly '{MESSAGE}' and "
            "nothing else. My phone's address book says which contact is her.",
        ),
        "naturalistic": (f"pls text my mom on my phone: '{MESSAGE}' shes in my phone contacts",),
    },
    required_apps=("phone",),
    private_data={"receiver_phone": "4155550113", "message": MESSAGE},
    solution=solution(LOGIN, MOTHER, f'''
    apis.phone.send_text_message(phone_number=mother["phone_number"], message={MESSAGE!r}, access_token=token)
    apis.supervisor.complete_task()
'''),
    **action_checks(check("no_op_fail", """
        assert a new text from the user to the mother carries the requested message.
    """, '''
        added, updated, removed = models.changed_records("phone.GlobalTextMessage")
        maya = models.end.phone.User.find_from(main_user)
        mother = models.end.phone.User.find_one(phone_number=private_data.receiver_phone)
        to_mother = [t for t in added if t.sender_id == maya.id and t.receiver_id == mother.id]
        test.case(len(to_mother), "==", 1)
        test.case(to_mother[0].message, "==", private_data.message, normalize_text=True)
    '''), check("no_op_pass", """
        assert no text went to anyone but the mother and no text was changed or deleted.
    """, '''
        added, updated, removed = models.changed_records("phone.GlobalTextMessage")
        mother = models.end.phone.User.find_one(phone_number=private_data.receiver_phone)
        test.case([t.id for t in added if t.receiver_id != mother.id], "is_falsy")
        test.case(len(updated) + len(removed), "==", 0)
    '''), check("no_op_pass", """
        assert nothing outside the phone's text messages changed.
    """, '''
        test.case(models.changed_model_names() - {"phone.GlobalTextMessage", "phone.UserTextMessage"}, "is_falsy")
    ''')),
)

ALARMS = TaskDef(
    variant=3,
    difficulty=2,
    instruction=("On my phone, turn off my alarm labelled 'Wake up' (do not delete it) and create a new alarm at "
                 "07:30 labelled 'Gym' that repeats on Monday, Wednesday and Friday. Leave my other alarms alone."),
    paraphrases={
        "mild": (
            "On my phone, switch off my alarm labelled 'Wake up' (don't delete it) and set a new alarm at 07:30 "
            "labelled 'Gym' that repeats on Monday, Wednesday and Friday. Leave my other alarms as they are.",
        ),
        "medium": (
            "Create a new alarm on my phone at 07:30 labelled 'Gym' that repeats on Monday, Wednesday and Friday, and "
            "turn off (without deleting) my alarm labelled 'Wake up'. My other alarms stay alone.",
        ),
        "strong": (
            "Maya here, new routine. The phone alarm called 'Wake up' should stay but go quiet, not be removed. Then "
            "give me one at 07:30 called 'Gym' that goes off every Monday, Wednesday and Friday. Nothing else among my "
            "alarms changes.",
        ),
        "naturalistic": (
            "on my phone: turn off the 'Wake up' alarm (dont delete it!) and make a new one at 07:30 called 'Gym' "
            "repeating Monday, Wednesday and Friday. leave the other alarms alone",
        ),
    },
    required_apps=("phone",),
    seed_task=seed_alarms,
    private_data={"off_label": "Wake up", "time": "07:30", "label": "Gym", "days": ["friday", "monday", "wednesday"]},
    solution=solution(LOGIN, block(paginate("alarms", "phone.show_alarms"), '''
    for alarm in alarms:
        if alarm["label"] == "Wake up":
            apis.phone.update_alarm(alarm_id=alarm["alarm_id"], enabled=False, access_token=token)
    apis.phone.create_alarm(time="07:30", label="Gym", repeat_days=["monday", "wednesday", "friday"],
                            access_token=token)
    apis.supervisor.complete_task()
''')),
    **action_checks(check("no_op_fail", """
        assert the 'Wake up' alarm still exists and is now disabled.
    """, '''
        added, updated, removed = models.changed_records("phone.Alarm")
        switched = [a for a in updated if a.label == private_data.off_label]
        test.case(len(switched), "==", 1)
        test.case(switched[0].enabled, "is_falsy")
    '''), check("no_op_fail", """
        assert exactly one alarm was added: 07:30, labelled 'Gym', enabled, repeating Monday, Wednesday, Friday.
    """, '''
        added, updated, removed = models.changed_records("phone.Alarm")
        test.case(len(added), "==", 1)
        test.case(added[0].time, "==", private_data.time)
        test.case(added[0].label, "==", private_data.label, normalize_text=True)
        test.case(added[0].enabled, "is_truthy")
        test.case(sorted(added[0].repeat_days or []), "==", private_data.days)
    '''), check("no_op_pass", """
        assert no alarm was deleted, no alarm other than 'Wake up' was changed, and nothing outside phone.Alarm changed.
    """, '''
        added, updated, removed = models.changed_records("phone.Alarm")
        test.case(len(removed), "==", 0)
        test.case([a.label for a in updated if a.label != private_data.off_label], "is_falsy")
        test.case(models.changed_model_names() - {"phone.Alarm"}, "is_falsy")
    ''')),
)

SCENARIO = ScenarioDef(
    scenario_id="f0c1a11",
    title="Texts and alarms on the phone",
    split="test",
    apps=("phone",),
    seed_base=seed_base,
    tasks=(COUNT_TEXTS, TEXT_MOTHER, ALARMS),
)
