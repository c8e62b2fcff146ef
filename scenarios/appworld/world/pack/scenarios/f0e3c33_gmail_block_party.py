"""Scenario f0e3c33 (test): a long Gmail thread and newsletters in Maya's inbox.

Seeds (per task): the thread 'Block party planning' (six emails between Oscar, Jamal and Maya,
May 1-12), seven 'Newsletter:' threads and six newer ordinary threads, so the block-party thread and
several newsletters are beyond the first page of `show_inbox_threads` (newest first, five per page).
Variants: count the emails of the thread (question, needs `show_thread`), reply to its latest email
(action), archive the newsletters (action: archiving anything else is collateral damage).
"""

from __future__ import annotations

from pack.snippets import (
    action_checks, added_only_check, check, kept_rows_check, login_preamble, paginate, question_checks, solution,
)
from pack.types import ScenarioDef, SeedContext, TaskDef

SUBJECT = "Block party planning"
REPLY = "Count me in for the grill."
# (sender, when, line) of the block-party thread; recipients are the two others.
PARTY = (
    ("oscar", "2023-05-01T09:00:00", "Shall we hold the block party on June 3?"),
    ("jamal", "2023-05-02T10:30:00", "June 3 works. I can bring tables."),
    ("maya", "2023-05-03T20:15:00", "Great, I'll ask the neighbours about music."),
    ("oscar", "2023-05-06T08:40:00", "The city approved the street closure."),
    ("jamal", "2023-05-09T19:05:00", "Who takes care of the grill?"),
    ("oscar", "2023-05-12T07:50:00", "We still need someone for the grill. Any volunteers?"),
)
NEWSLETTERS = (("kira", "Newsletter: Oakland Runners May", "2023-05-04T06:00:00"),
               ("tom", "Newsletter: Design Weekly", "2023-05-07T06:00:00"),
               ("hiro", "Newsletter: Jazz Nights", "2023-05-10T06:00:00"),
               ("emma", "Newsletter: Garden Club", "2023-05-13T06:00:00"),
               ("kira", "Newsletter: Oakland Runners update", "2023-05-15T06:00:00"),
               ("tom", "Newsletter: Design Weekly #20", "2023-05-16T06:00:00"),
               ("hiro", "Newsletter: Jazz Nights June", "2023-05-17T09:00:00"))
OTHERS = (("ben", "Lunch next week", "2023-05-13T12:00:00"), ("grace", "Slides for Monday", "2023-05-14T12:00:00"),
          ("isabel", "Re: cabin dates", "2023-05-15T12:00:00"), ("liam", "Game tickets", "2023-05-16T12:00:00"),
          ("priya", "Plant watering", "2023-05-17T12:00:00"), ("diego", "About the newsletter idea",
                                                                  "2023-05-17T15:00:00"))


def _thread(ctx: SeedContext, emails: list[tuple[str, list[str], str, str, str]]) -> None:
    """One thread of `emails` (sender, recipients, subject, body, when) visible to every participant."""
    gmail = ctx.models.gmail
    rows = []
    for sender_key, recipient_keys, subject, body, when in emails:
        rows.append(gmail.Email.create_save(
            sender_id=ctx.user("gmail", sender_key).id, subject=subject, body=body, created_at=ctx.at(when),
            recipient_ids=[ctx.user("gmail", key).id for key in recipient_keys]))
    first, last = ctx.at(emails[0][4]), ctx.at(emails[-1][4])
    thread = gmail.GlobalEmailThread.create_save(email_ids=[r.id for r in rows], created_at=first, updated_at=last)
    keys = sorted({emails[0][0], *emails[0][1]})
    for key in keys:
        person = ctx.people[key]
        sent = any(sender == key for sender, *_ in emails)
        received = any(key in recipients for _, recipients, *_ in emails)
        senders = sorted({ctx.people[s].email for s, *_ in emails})
        gmail.UserEmailThread.create_save(
            global_email_thread_id=thread.id, user_id=ctx.user("gmail", key).id, email_ids=[r.id for r in rows],
            incoming=received, outgoing=sent, read=True, created_at=first, updated_at=last,
            sender_email_addresses=senders, sender_names=[], recipient_email_addresses=[person.email],
            recipient_names=[])


def seed_inbox(ctx: SeedContext) -> None:
    """Seeded per task (all three variants)."""
    people = ("oscar", "jamal", "maya")
    _thread(ctx, [(sender, [p for p in people if p != sender], SUBJECT,
                   f"Hi,\n\n{line}\n\n{ctx.people[sender].first_name}", when) for sender, when, line in PARTY])
    for sender, subject, when in NEWSLETTERS + OTHERS:
        _thread(ctx, [(sender, ["maya"], subject, f"Hi Maya,\n\nSee below.\n\n{ctx.people[sender].first_name}", when)])


LOGIN = login_preamble("gmail") + paginate("threads", "gmail.show_inbox_threads")
PARTY_THREAD = '''
    party = [t for t in threads if t["subject"] == "Block party planning"][0]
    details = apis.gmail.show_thread(email_thread_id=party["email_thread_id"], access_token=token)
'''

COUNT_EMAILS = TaskDef(
    variant=1,
    difficulty=1,
    instruction=f"How many emails are there in my Gmail thread with the subject '{SUBJECT}'?",
    paraphrases={
        "mild": (f"How many emails does my Gmail thread with the subject '{SUBJECT}' contain?",),
        "medium": (f"In my Gmail, the thread with the subject '{SUBJECT}': how many emails are in it?",),
        "strong": (
            "Maya here; the neighbourhood chatter never stops. What count of messages has the Gmail conversation "
            f"titled '{SUBJECT}' reached?",
        ),
        "naturalistic": (f"how many emails r in my Gmail thread '{SUBJECT}'?",),
    },
    answer=len(PARTY),
    required_apps=("gmail",),
    seed_task=seed_inbox,
    solution=solution(LOGIN, PARTY_THREAD, '''
    apis.supervisor.complete_task(answer=len(details["emails"]))
'''),
    **question_checks("the number of emails in the block party thread"),
)

REPLY_LATEST = TaskDef(
    variant=2,
    difficulty=2,
    instruction=f"In Gmail, reply to the most recent email of my thread '{SUBJECT}' with the message '{REPLY}'",
    paraphrases={
        "mild": (f"In Gmail, answer the latest email of my thread '{SUBJECT}' with the message '{REPLY}'",),
        "medium": (f"Reply with the message '{REPLY}' to the most recent email of my Gmail thread '{SUBJECT}'.",),
        "strong": (
            f"It's Maya, volunteering. On Gmail, respond to the newest message in the conversation titled '{SUBJECT}' "
            f"with just '{REPLY}'",
        ),
        "naturalistic": (f"reply to the latest email in my Gmail thread '{SUBJECT}' with '{REPLY}' thx",),
    },
    required_apps=("gmail",),
    seed_task=seed_inbox,
    private_data={"subject": SUBJECT, "body": REPLY, "latest_sender": "oscar.lindqvist@gmail.com"},
    solution=solution(LOGIN, PARTY_THREAD, f'''
    latest = sorted(details["emails"], key=lambda e: e["created_at"])[-1]
    apis.gmail.reply_to_email(email_thread_id=party["email_thread_id"], email_id=latest["email_id"],
                              body={REPLY!r}, access_token=token)
    apis.supervisor.complete_task()
'''),
    **action_checks(check("no_op_fail", """
        assert exactly one new email from the user, in the block party thread, carries the reply and reaches the
        sender of its latest email.
    """, '''
        added, updated, removed = models.changed_records("gmail.Email")
        maya = models.end.gmail.User.find_from(main_user)
        oscar = models.end.gmail.User.find_one(email=private_data.latest_sender)
        party_ids = {e.id for e in models.start.gmail.Email.all() if e.subject == private_data.subject}
        thread = [t for t in models.end.gmail.GlobalEmailThread.all() if party_ids & set(t.email_ids)][0]
        test.case(len(added), "==", 1)
        test.case(added[0].sender_id, "==", maya.id)
        test.case(added[0].id, "in", thread.email_ids)
        test.case(added[0].body, "==", private_data.body, normalize_text=True)
        test.case(oscar.id, "in", added[0].recipient_ids)
    '''), added_only_check("""
        assert no email was deleted or edited and nothing outside gmail's emails and threads changed.
    """, "gmail.Email", "gmail.GlobalEmailThread", "gmail.UserEmailThread")),
)

ARCHIVE_NEWSLETTERS = TaskDef(
    variant=3,
    difficulty=3,
    instruction="In Gmail, archive every thread in my inbox whose subject starts with 'Newsletter:'. Leave the rest.",
    paraphrases={
        "mild": (
            "In Gmail, archive each thread in my inbox whose subject begins with 'Newsletter:'. Leave the others.",
        ),
        "medium": (
            "Every thread in my Gmail inbox whose subject starts with 'Newsletter:' should be archived; the rest stay.",
        ),
        "strong": (
            "Maya here, tidying up my mail. On Gmail, whatever conversation in the inbox has a subject opening with "
            "'Newsletter:' goes to the archive; nothing else moves.",
        ),
        "naturalistic": (
            "pls archive every thread in my Gmail inbox w/ a subject starting with 'Newsletter:'. leave the rest",
        ),
    },
    required_apps=("gmail",),
    seed_task=seed_inbox,
    private_data={"subjects": sorted(subject for _, subject, _ in NEWSLETTERS)},
    solution=solution(LOGIN, '''
    for thread in threads:
        if thread["subject"].startswith("Newsletter:"):
            apis.gmail.mark_thread_archived(email_thread_id=thread["email_thread_id"], access_token=token)
    apis.supervisor.complete_task()
'''),
    **action_checks(check("no_op_fail", """
        assert every newsletter thread of the user (private_data.subjects) is now archived.
    """, '''
        maya = models.end.gmail.User.find_from(main_user)
        subjects = {e.id: e.subject for e in models.end.gmail.Email.all()}
        archived = {subjects[t.email_ids[0]] for t in models.end.gmail.UserEmailThread.find_all(user_id=maya.id)
                    if t.archived}
        test.case(sorted(archived & set(private_data.subjects)), "==", private_data.subjects)
    '''), kept_rows_check("""
        assert no other thread was archived, none was deleted, and nothing outside gmail.UserEmailThread changed.
    """, "gmail.UserEmailThread", before='''
        maya = models.end.gmail.User.find_from(main_user)
        subjects = {e.id: e.subject for e in models.end.gmail.Email.all()}
        before = {t.id for t in models.start.gmail.UserEmailThread.find_all(user_id=maya.id) if t.archived}
        newly = [subjects[t.email_ids[0]] for t in models.end.gmail.UserEmailThread.find_all(user_id=maya.id)
                 if t.archived and t.id not in before]
        test.case(set(newly) - set(private_data.subjects), "is_falsy")
    ''')),
)

SCENARIO = ScenarioDef(
    scenario_id="f0e3c33",
    title="A long thread and newsletters in Gmail",
    split="test",
    apps=("gmail",),
    tasks=(COUNT_EMAILS, REPLY_LATEST, ARCHIVE_NEWSLETTERS),
)
