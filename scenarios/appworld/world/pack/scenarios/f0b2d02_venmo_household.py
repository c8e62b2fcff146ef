"""Scenario f0b2d02 (dev): settling up on Venmo with friends and roommates.

Seeds (shared base world): Farid's April payments to Maya (8, two pages at the default page size)
among distractors (other months, the other direction, Farid paying someone else), and eight pending
payment requests to Maya, three from her roommate Chloe, two of them beyond the first page (the API
lists newest first), plus already approved/denied ones.
Variants: sum Farid's April payments (question), approve Chloe's pending requests, pay the
roommates found in the phone's contacts.
"""

from __future__ import annotations

from pack.snippets import (
    action_checks, block, check, login, login_preamble, page_loop, paginate, question_checks, solution,
)
from pack.types import ScenarioDef, SeedContext, TaskDef

FARID_APRIL = (23.5, 41.25, 12.0, 67.8, 30.0, 18.45, 55.0, 9.99)
FARID_APRIL_TOTAL = round(sum(FARID_APRIL), 2)

# (requester key, description, amount, created_at, state)
REQUESTS = (
    ("ben", "Team lunch", 18.75, "2023-05-16T13:00:00", "pending"),
    ("chloe", "Internet May", 20.0, "2023-05-15T09:00:00", "pending"),
    ("kira", "Concert tickets", 85.0, "2023-05-12T20:00:00", "pending"),
    ("jamal", "Fence repair", 60.0, "2023-05-08T10:00:00", "pending"),
    ("isabel", "Birthday gift pool", 15.0, "2023-05-03T18:00:00", "pending"),
    ("emma", "Ski cabin deposit", 120.0, "2023-04-28T21:00:00", "pending"),
    ("chloe", "Groceries", 34.5, "2023-04-20T19:00:00", "pending"),
    ("chloe", "Cleaning supplies", 12.25, "2023-04-11T11:00:00", "pending"),
    ("chloe", "Internet April", 20.0, "2023-04-02T09:00:00", "approved"),
    ("chloe", "Movie night", 9.0, "2023-03-25T22:00:00", "denied"),
)
CHLOE_PENDING = sorted(d for who, d, _, _, state in REQUESTS if who == "chloe" and state == "pending")
ROOMMATE_SHARE = 45.5


def seed_base(ctx: SeedContext) -> None:
    venmo = ctx.models.venmo
    maya, farid = ctx.user("venmo", ctx.supervisor.key), ctx.user("venmo", "farid")
    for day, amount in enumerate(FARID_APRIL, start=3):
        venmo.Transaction.create_save(sender_id=farid.id, receiver_id=maya.id, amount=amount,
                                      description="thanks!", created_at=ctx.at(f"2023-04-{day:02d}T20:00:00"))
    for sender, receiver, amount, when in (
        (farid, maya, 14.0, "2023-03-30T20:00:00"), (farid, maya, 22.0, "2023-05-02T20:00:00"),
        (maya, farid, 16.0, "2023-04-14T12:00:00"), (maya, farid, 40.0, "2023-04-22T12:00:00"),
        (farid, ctx.user("venmo", "chloe"), 50.0, "2023-04-18T12:00:00"),
    ):
        venmo.Transaction.create_save(sender_id=sender.id, receiver_id=receiver.id, amount=amount,
                                      description="dinner", created_at=ctx.at(when))
    for who, description, amount, when, state in REQUESTS:
        venmo.PaymentRequest.create_save(
            sender_id=ctx.user("venmo", who).id, receiver_id=maya.id, amount=amount, description=description,
            created_at=ctx.at(when), updated_at=ctx.at(when),
            approved_at=ctx.at(when) if state == "approved" else None,
            denied_at=ctx.at(when) if state == "denied" else None,
        )
    venmo.PaymentRequest.create_save(sender_id=maya.id, receiver_id=ctx.user("venmo", "priya").id, amount=14.0,
                                     description="Plants", created_at=ctx.at("2023-05-01T10:00:00"))


VENMO_LOGIN = login_preamble("venmo")


FARID_TOTAL = TaskDef(
    variant=1,
    difficulty=1,
    instruction="How much money in total did Farid Haddad send me on Venmo during April 2023?",
    paraphrases={
        "mild": ("What is the total amount of money Farid Haddad sent me on Venmo during April 2023?",),
        "medium": ("During April 2023, Farid Haddad sent me money on Venmo: how much was it in total?",),
        "strong": (
            "Maya here, squaring accounts. Tally up every Venmo payment that reached me from Farid Haddad in April "
            "2023 and tell me the sum.",
        ),
        "naturalistic": ("how much $$ did Farid Haddad send me on venmo in april 2023 total?",),
    },
    answer=FARID_APRIL_TOTAL,
    required_apps=("venmo",),
    solution=solution(VENMO_LOGIN, block('''
    farid = apis.venmo.search_friends(query="Farid Haddad", access_token=token)[0]
    total = 0.0
''', page_loop("venmo.show_transactions", 'user_email=farid["email"], direction="received"', body='''
    for transaction in page:
        if transaction["sender"]["email"] == farid["email"] and transaction["created_at"].startswith("2023-04"):
            total += transaction["amount"]
'''), '''
    apis.supervisor.complete_task(answer=round(total, 2))
''')),
    **question_checks("the total Farid Haddad sent the user in April 2023"),
)

APPROVE_CHLOE = TaskDef(
    variant=2,
    difficulty=2,
    instruction=(
        "Approve all the pending Venmo payment requests that Chloe Nguyen sent me, paying from my Venmo balance. "
        "Leave every other payment request as it is."
    ),
    paraphrases={
        "mild": (
            "Approve every pending Venmo payment request that Chloe Nguyen sent me, paying from my Venmo balance. "
            "Leave all other payment requests as they are.",
        ),
        "medium": (
            "The pending Venmo payment requests Chloe Nguyen sent me should all be approved, paid from my Venmo "
            "balance. Every other payment request stays as it is.",
        ),
        "strong": (
            "It's Maya; I owe Chloe Nguyen for a few things. Whatever she has asked me for on Venmo that is still "
            "waiting, say yes to it using the money sitting in my Venmo account. Requests from anybody else, don't "
            "touch.",
        ),
        "naturalistic": (
            "pls approve all the pending venmo requests from Chloe Nguyen, pay from my venmo balance. dont touch any "
            "other requests",
        ),
    },
    required_apps=("venmo",),
    private_data={"requester_email": "chloe.nguyen@gmail.com", "descriptions": CHLOE_PENDING},
    solution=solution(VENMO_LOGIN, block(
        paginate("pending", "venmo.show_received_payment_requests", 'status="pending"'), '''
    for request in pending:
        if request["sender"]["email"] == "chloe.nguyen@gmail.com":
            apis.venmo.approve_payment_request(payment_request_id=request["payment_request_id"], access_token=token)
    apis.supervisor.complete_task()
''')),
    **action_checks(check("no_op_fail", """
        assert exactly Chloe's pending requests (private_data.descriptions) are now approved and not denied.
    """, '''
        added, updated, removed = models.changed_records("venmo.PaymentRequest")
        test.case(sorted(request.description for request in updated), "==", private_data.descriptions)
        for request in updated:
            test.case(request.approved_at, "is not", None)
            test.case(request.denied_at, "is", None)
    '''), check("no_op_fail", """
        assert one payment per approved request went from the user to Chloe, for the requested amount.
    """, '''
        added, updated, removed = models.changed_records("venmo.Transaction")
        maya = models.end.venmo.User.find_from(main_user)
        chloe = models.end.venmo.User.find_one(email=private_data.requester_email)
        requests = models.changed_records("venmo.PaymentRequest")[1]
        to_chloe = [t for t in added if (t.sender_id, t.receiver_id) == (maya.id, chloe.id)]
        test.case(len(to_chloe), "==", len(private_data.descriptions))
        test.case(sorted(t.amount for t in to_chloe), "==", sorted(r.amount for r in requests))
    '''), check("no_op_pass", """
        assert no payment went to or from anyone but the user and Chloe.
    """, '''
        added, updated, removed = models.changed_records("venmo.Transaction")
        maya = models.end.venmo.User.find_from(main_user)
        chloe = models.end.venmo.User.find_one(email=private_data.requester_email)
        test.case([t.id for t in added if (t.sender_id, t.receiver_id) != (maya.id, chloe.id)], "is_falsy")
    '''), check("no_op_pass", """
        assert no payment request was added or removed and none from anyone else was changed.
    """, '''
        added, updated, removed = models.changed_records("venmo.PaymentRequest")
        chloe = models.end.venmo.User.find_one(email=private_data.requester_email)
        test.case(len(added) + len(removed), "==", 0)
        test.case([r.id for r in updated if r.sender_id != chloe.id], "is_falsy")
    '''), check("no_op_pass", """
        assert nothing outside venmo changed.
    """, '''
        test.case({name for name in models.changed_model_names() if not name.startswith("venmo.")}, "is_falsy")
    ''')),
)

PAY_ROOMMATES = TaskDef(
    variant=3,
    difficulty=3,
    instruction=(
        f"Send each of my roommates ${ROOMMATE_SHARE:.2f} on Venmo with the description 'May utilities'. "
        "My phone contacts say who my roommates are."
    ),
    paraphrases={
        "mild": (
            f"Send ${ROOMMATE_SHARE:.2f} on Venmo to each of my roommates, with the description 'May utilities'. My "
            "phone contacts show who my roommates are.",
        ),
        "medium": (
            f"With the description 'May utilities', send each of my roommates ${ROOMMATE_SHARE:.2f} on Venmo. Who my "
            "roommates are is in my phone contacts.",
        ),
        "strong": (
            "Maya here, splitting the bills. Everybody I share the flat with (my phone's address book marks them) gets "
            f"${ROOMMATE_SHARE:.2f} from me through Venmo, labelled 'May utilities'.",
        ),
        "naturalistic": (
            f"venmo each of my roomates ${ROOMMATE_SHARE:.2f}, description 'May utilities'. check my phone contacts "
            "for who the roommates are",
        ),
    },
    required_apps=("phone", "venmo"),
    private_data={"receivers": ["chloe.nguyen@gmail.com", "priya.shah@gmail.com"], "amount": ROOMMATE_SHARE,
                  "description": "May utilities"},
    solution=solution(VENMO_LOGIN, block(
        '    phone_number = apis.supervisor.show_profile()["phone_number"]',
        login("phone", "phone_number", token="phone_token"),
        paginate("roommates", "phone.search_contacts", 'relationship="roommate"', token="phone_token"), '''
    for roommate in roommates:
        apis.venmo.create_transaction(
            receiver_email=roommate["email"], amount=45.5, description="May utilities", access_token=token
        )
    apis.supervisor.complete_task()
''')),
    **action_checks(check("no_op_fail", """
        assert each roommate (private_data.receivers) got exactly one new Venmo payment from the user.
    """, '''
        added, updated, removed = models.changed_records("venmo.Transaction")
        maya = models.end.venmo.User.find_from(main_user)
        roommates = [models.end.venmo.User.find_one(email=email).id for email in private_data.receivers]
        to_roommates = [t for t in added if t.sender_id == maya.id and t.receiver_id in roommates]
        test.case(sorted(t.receiver_id for t in to_roommates), "==", sorted(roommates))
    '''), check("no_op_fail", """
        assert every new payment to a roommate is for the requested amount with the description 'May utilities'.
    """, '''
        test.case(len(to_roommates), ">", 0)
        for transaction in to_roommates:
            test.case(transaction.amount, "==", private_data.amount)
            test.case(transaction.description, "==", private_data.description, normalize_text=True)
    '''), check("no_op_pass", """
        assert no new payment went to anyone who is not a roommate.
    """, '''
        added, updated, removed = models.changed_records("venmo.Transaction")
        roommates = {models.end.venmo.User.find_one(email=email).id for email in private_data.receivers}
        test.case([t.id for t in added if t.receiver_id not in roommates], "is_falsy")
    '''), check("no_op_pass", """
        assert no payment request, phone contact or other app data changed, and no transaction was altered.
    """, '''
        allowed = {"venmo.Transaction", "venmo.User", "venmo.Notification"}
        test.case(models.changed_model_names() - allowed, "is_falsy")
        added, updated, removed = models.changed_records("venmo.Transaction")
        test.case(len(updated) + len(removed), "==", 0)
    ''')),
)

SCENARIO = ScenarioDef(
    scenario_id="f0b2d02",
    title="Settling up on Venmo",
    split="dev",
    apps=("venmo", "phone"),
    seed_base=seed_base,
    tasks=(FARID_TOTAL, APPROVE_CHLOE, PAY_ROOMMATES),
)
