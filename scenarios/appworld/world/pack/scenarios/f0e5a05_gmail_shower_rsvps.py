"""Scenario f0e5a05 (dev): RSVPs for Kira's bridal shower in Maya's Gmail.

Seeds (per task): Maya's save-the-date email to seven friends, their seven RSVP emails (four coming,
three not), all with the subject 'RSVP: Kira's bridal shower' and newer than the base threads;
Grace's email with the venue's reservation code plus a quote email without one; distractors: two
RSVPs to Ben's housewarming and Isabel's cabin booking with another code. The inbox lists newest
first, five per page by default: the RSVPs span the first two pages (three on page 0), and a search
for them also returns five per page.
Variants: find the venue's reservation code (question), label the RSVP threads (action), reply to
the friends who are coming (action, needs each RSVP's body).
"""

from __future__ import annotations

from pack.snippets import (
    action_checks, block, check, kept_rows_check, login_preamble, paginate, question_checks, solution,
)
from pack.types import ScenarioDef, SeedContext, TaskDef

SUBJECT = "RSVP: Kira's bridal shower"
RESERVATION_CODE = "LKL-4821"
REPLY = "Thanks for confirming! See you on June 10."
LABEL = "Shower RSVPs"
# (friend, coming, when, body line)
RSVPS = (
    ("chloe", True, "2023-05-02T19:20:00", "Yes, I'll be there! Happy to bring a dessert."),
    ("farid", False, "2023-05-03T08:45:00", "Sorry, I can't make it, I'll be out of town that weekend."),
    ("emma", True, "2023-05-05T12:10:00", "Count me in, I'll be there. Can't wait!"),
    ("isabel", False, "2023-05-08T21:00:00", "Unfortunately I can't come, I have a work trip that week."),
    ("grace", True, "2023-05-09T07:30:00", "Yes, I'm coming! I'll get there early to help set up."),
    ("jamal", False, "2023-05-11T18:15:00", "I won't be able to make it, sorry. Have a great time!"),
    ("priya", True, "2023-05-14T10:05:00", "Yes, I'll be there with a gift."),
)
COMING = sorted(f"{key}" for key, coming, _, _ in RSVPS if coming)
EMAILS = {
    "chloe": "chloe.nguyen@gmail.com", "farid": "farid.haddad@gmail.com", "emma": "emma.schultz@gmail.com",
    "isabel": "isabel.moreau@gmail.com", "grace": "grace.kim@gmail.com", "jamal": "jamal.carter@gmail.com",
    "priya": "priya.shah@gmail.com",
}
# (sender, subject, when, body) of the other seeded threads sent to Maya.
OTHER_THREADS = (
    ("grace", "Lakeshore Loft quote", "2023-04-28T11:00:00",
     "They quoted $450 for the afternoon. I'll book it once we agree on the date."),
    ("grace", "Venue for Kira's shower", "2023-05-04T16:00:00",
     f"I booked the Lakeshore Loft for Saturday June 10, 2-6pm. The reservation code is {RESERVATION_CODE}; "
     "they'll ask for it at check-in."),
    ("tom", "RSVP: Ben's housewarming", "2023-05-06T09:40:00", "Yes, I'll be there! Bringing snacks."),
    ("isabel", "Cabin booking", "2023-05-10T14:25:00",
     "The cabin for July is booked, confirmation number CBN-7730. Let me know if the dates still work."),
    ("hiro", "RSVP: Ben's housewarming", "2023-05-12T17:50:00", "Yes, I'm coming, see you there."),
)


def _thread(ctx: SeedContext, sender_key: str, recipient_keys: list[str], subject: str, body: str,
            when: str) -> None:
    """One email in its own thread, visible to the sender and every recipient (world.py's pattern)."""
    gmail = ctx.models.gmail
    sender = ctx.user("gmail", sender_key)
    recipients = [ctx.user("gmail", key) for key in recipient_keys]
    at = ctx.at(when)
    email = gmail.Email.create_save(sender_id=sender.id, recipient_ids=[user.id for user in recipients],
                                    subject=subject, body=body, created_at=at)
    thread = gmail.GlobalEmailThread.create_save(email_ids=[email.id], created_at=at, updated_at=at)
    for owner in [sender, *recipients]:
        gmail.UserEmailThread.create_save(
            global_email_thread_id=thread.id, user_id=owner.id, email_ids=[email.id], incoming=owner is not sender,
            outgoing=owner is sender, read=owner is sender or when < "2023-05-09", created_at=at, updated_at=at,
        )


def seed_shower(ctx: SeedContext) -> None:
    """Seeded per task (all three variants)."""
    friends = [key for key, _, _, _ in RSVPS]
    _thread(ctx, ctx.supervisor.key, friends, "Save the date: Kira's bridal shower", (
        "Hi all,\n\nKira's bridal shower is on Saturday June 10 in the afternoon. Please reply with the subject "
        f"'{SUBJECT}' and tell me if you can come.\n\nMaya"), "2023-04-25T20:00:00")
    for key, _, when, line in RSVPS:
        first_name = ctx.people[key].first_name
        _thread(ctx, key, [ctx.supervisor.key], SUBJECT, f"Hi Maya,\n\n{line}\n\n{first_name}", when)
    for key, subject, when, line in OTHER_THREADS:
        _thread(ctx, key, [ctx.supervisor.key], subject, f"Hi Maya,\n\n{line}\n\n{ctx.people[key].first_name}", when)


LOGIN = login_preamble("gmail")
RSVP_THREADS = block(paginate("threads", "gmail.show_inbox_threads"), '''
    rsvps = [thread for thread in threads if thread["subject"] == "RSVP: Kira's bridal shower"]
''')


VENUE_CODE = TaskDef(
    variant=1,
    difficulty=1,
    instruction=(
        "Grace Kim emailed me the reservation code of the venue she booked for Kira's bridal shower. "
        "What is that code?"
    ),
    paraphrases={
        "mild": (
            "Grace Kim sent me an email with the reservation code of the venue she booked for Kira's bridal shower. "
            "What's that code?",
        ),
        "medium": (
            "What is the reservation code of the venue Grace Kim booked for Kira's bridal shower? She emailed it to "
            "me.",
        ),
        "strong": (
            "It's Maya, and I've lost a detail. The place Grace Kim reserved for the bridal shower of Kira came with a "
            "booking code, which she mailed me. Which code is it?",
        ),
        "naturalistic": (
            "Grace Kim emailed me the reservation code for the venue she booked for Kira's bridal shower - whats the "
            "code?",
        ),
    },
    answer=RESERVATION_CODE,
    required_apps=("gmail",),
    seed_task=seed_shower,
    solution=solution(LOGIN, block(
        paginate("threads", "gmail.show_inbox_threads", 'from_email="grace.kim@gmail.com"'), '''
    code = None
    for thread in threads:
        details = apis.gmail.show_thread(email_thread_id=thread["email_thread_id"], access_token=token)
        for email in details["emails"]:
            if "reservation code is " in email["body"]:
                code = email["body"].split("reservation code is ")[1].split(";")[0].strip()
    apis.supervisor.complete_task(answer=code)
''')),
    **question_checks("the venue's reservation code from Grace's email", verb="is"),
)

LABEL_RSVPS = TaskDef(
    variant=2,
    difficulty=2,
    instruction=f"In Gmail, label every email thread in my inbox with the subject '{SUBJECT}' as '{LABEL}'.",
    paraphrases={
        "mild": (f"In Gmail, put the label '{LABEL}' on each email thread in my inbox with the subject '{SUBJECT}'.",),
        "medium": (f"Every email thread in my Gmail inbox with the subject '{SUBJECT}' should be labelled '{LABEL}'.",),
        "strong": (
            "Maya here, keeping the shower organised. On Gmail, tag whatever conversation in the inbox is titled "
            f"'{SUBJECT}' with '{LABEL}'.",
        ),
        "naturalistic": (f"in Gmail pls label all the inbox threads w/ subject '{SUBJECT}' as '{LABEL}'",),
    },
    required_apps=("gmail",),
    seed_task=seed_shower,
    private_data={"label": LABEL, "subject": SUBJECT, "senders": sorted(EMAILS.values())},
    solution=solution(LOGIN, RSVP_THREADS, '''
    for thread in rsvps:
        apis.gmail.label_thread(email_thread_id=thread["email_thread_id"], label="Shower RSVPs", access_token=token)
    apis.supervisor.complete_task()
'''),
    **action_checks(check("no_op_fail", """
        assert exactly the user's seven RSVP threads (one per sender in private_data.senders, subject
        private_data.subject) were updated, each now labelled private_data.label.
    """, '''
        added, updated, removed = models.changed_records("gmail.UserEmailThread")
        maya = models.end.gmail.User.find_from(main_user)
        test.case({thread.user_id for thread in updated}, "==", {maya.id})
        subjects = {models.end.gmail.Email.find_one(id=thread.email_ids[0]).subject for thread in updated}
        test.case(subjects, "==", {private_data.subject})
        test.case(sorted(thread.sender_email_addresses[0] for thread in updated), "==", private_data.senders)
        for thread in updated:
            test.case(thread.label, "==", private_data.label, normalize_text=True)
    '''), check("no_op_pass", """
        assert the labelled threads kept their read, starred, archived and spam flags and emails.
    """, '''
        added, updated, removed = models.changed_records("gmail.UserEmailThread")
        originals = {thread.id: thread for thread in models.start.gmail.UserEmailThread.all()}
        fields = ("read", "starred", "archived", "spam", "email_ids")
        for thread in updated:
            before = originals[thread.id]
            test.case([getattr(thread, name) for name in fields], "==", [getattr(before, name) for name in fields])
    '''), kept_rows_check("""
        assert no thread was added or removed, no other thread was updated, and nothing outside
        gmail.UserEmailThread changed.
    """, "gmail.UserEmailThread", after='''
        others = [thread.id for thread in updated
                  if models.end.gmail.Email.find_one(id=thread.email_ids[0]).subject != private_data.subject]
        test.case(others, "is_falsy")
    ''')),
)

REPLY_COMING = TaskDef(
    variant=3,
    difficulty=3,
    instruction=(
        f"Some friends answered my email about Kira's bridal shower (subject '{SUBJECT}'). Reply to each friend "
        f"who said they're coming, in their RSVP thread, with exactly: '{REPLY}' Don't reply to the ones who "
        "can't make it."
    ),
    paraphrases={
        "mild": (
            f"Some friends replied to my email about Kira's bridal shower (subject '{SUBJECT}'). Answer each friend "
            f"who said they're coming, in their RSVP thread, with exactly: '{REPLY}' Don't answer the ones who can't "
            "make it.",
        ),
        "medium": (
            "Each friend who said they're coming, in answer to my email about Kira's bridal shower (subject "
            f"'{SUBJECT}'), should get a reply in their RSVP thread with exactly: '{REPLY}' The ones who can't make it "
            "get no reply.",
        ),
        "strong": (
            f"It's Maya, and the replies for Kira's party are in, under '{SUBJECT}'. Whoever said yes gets, inside "
            f"that same RSVP conversation, exactly '{REPLY}' Whoever declined hears nothing from me.",
        ),
        "naturalistic": (
            f"some friends answered my email about Kira's shower (subject '{SUBJECT}'). reply to everyone who's "
            f"coming, in their RSVP thread, with exactly '{REPLY}' dont reply to the ppl who cant come",
        ),
    },
    required_apps=("gmail",),
    seed_task=seed_shower,
    private_data={"body": REPLY, "subject": SUBJECT, "coming": sorted(EMAILS[key] for key in COMING)},
    solution=solution(LOGIN, RSVP_THREADS, '''
    coming_words = ("I'll be there", "I'm coming")
    for thread in rsvps:
        details = apis.gmail.show_thread(email_thread_id=thread["email_thread_id"], access_token=token)
        rsvp = details["emails"][0]
        if any(words in rsvp["body"] for words in coming_words):
            apis.gmail.reply_to_email(
                email_thread_id=thread["email_thread_id"], email_id=rsvp["email_id"],
                body="Thanks for confirming! See you on June 10.", access_token=token,
            )
    apis.supervisor.complete_task()
'''),
    **action_checks(check("no_op_fail", """
        assert each friend who is coming (private_data.coming) got exactly one new email from the user, with the
        requested body.
    """, '''
        added, updated, removed = models.changed_records("gmail.Email")
        maya = models.end.gmail.User.find_from(main_user)
        for address in private_data.coming:
            friend = models.end.gmail.User.find_one(email=address)
            to_friend = [e for e in added if e.sender_id == maya.id and friend.id in e.recipient_ids]
            test.case(len(to_friend), "==", 1)
            test.case(to_friend[0].body, "==", private_data.body, normalize_text=True)
    '''), check("no_op_fail", """
        assert each new email to a friend who is coming is a reply to that friend's RSVP email (subject
        private_data.subject) and sits in the RSVP's thread.
    """, '''
        added, updated, removed = models.changed_records("gmail.Email")
        coming = {models.end.gmail.User.find_one(email=address).id for address in private_data.coming}
        replies = [email for email in added if set(email.recipient_ids) & coming]
        test.case(len(replies), ">", 0)
        for email in replies:
            original = models.end.gmail.Email.find_one(id=email.response_to_email_id)
            test.case(original is not None, "==", True)
            test.case(original.subject, "==", private_data.subject)
            test.case(original.sender_id, "==", email.recipient_ids[0])
            threads = models.end.gmail.GlobalEmailThread.all()
            test.case([t.id for t in threads if original.id in t.email_ids and email.id in t.email_ids], "is_truthy")
    '''), check("no_op_pass", """
        assert no new email went to anyone who is not coming, and each new email has that one friend as its only
        recipient.
    """, '''
        added, updated, removed = models.changed_records("gmail.Email")
        coming = {models.end.gmail.User.find_one(email=address).id for address in private_data.coming}
        test.case([email.id for email in added if len(email.recipient_ids) != 1], "is_falsy")
        test.case([email.id for email in added if not set(email.recipient_ids) <= coming], "is_falsy")
    '''), check("no_op_pass", """
        assert no existing email was changed or removed, no thread was removed or had its label, starred,
        archived or spam flag changed, and nothing outside gmail emails and threads changed.
    """, '''
        added, updated, removed = models.changed_records("gmail.Email")
        test.case(len(updated) + len(removed), "==", 0)
        added, updated, removed = models.changed_records("gmail.UserEmailThread")
        test.case(len(removed), "==", 0)
        originals = {thread.id: thread for thread in models.start.gmail.UserEmailThread.all()}
        fields = ("label", "starred", "archived", "spam")
        for thread in updated:
            before = originals[thread.id]
            test.case([getattr(thread, name) for name in fields], "==", [getattr(before, name) for name in fields])
        allowed = {"gmail.Email", "gmail.UserEmailThread", "gmail.GlobalEmailThread"}
        test.case(models.changed_model_names() - allowed, "is_falsy")
    ''')),
)

SCENARIO = ScenarioDef(
    scenario_id="f0e5a05",
    title="Bridal shower RSVPs in Gmail",
    split="dev",
    apps=("gmail",),
    tasks=(VENUE_CODE, LABEL_RSVPS, REPLY_COMING),
)
