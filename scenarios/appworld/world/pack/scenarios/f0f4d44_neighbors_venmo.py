"""Scenario f0f4d44 (test): money with the neighbours across phone, Venmo and Gmail.

Seeds (shared base world): eight May payments from Maya to her neighbours Jamal and Oscar (two pages
of `show_transactions` at the default page size), with distractors: a May payment to Ben, an April
payment to Oscar, a May payment from Jamal to Maya. Seeds (variant 2 only): Oscar's email with the
hedge-trimming amount and Jamal's email with another amount.
Variants: total paid to the neighbours in May (question; phone + venmo), pay the amount Oscar
emailed (gmail + venmo; paying anyone else is collateral damage), request money from each
neighbour (phone + venmo; a request to anyone else is collateral damage).
"""

from __future__ import annotations

from pack.snippets import (
    NULL_ANSWER_CHECK, action_checks, block, check, checks, login, login_preamble, paginate, question_checks, solution,
)
from pack.types import ScenarioDef, SeedContext, TaskDef

# (receiver, amount, when, description): Maya's May payments to the neighbours.
NEIGHBOR_PAYMENTS = (
    ("jamal", 12.5, "2023-05-02T10:00:00", "Hedge clippers"), ("oscar", 30.0, "2023-05-03T10:00:00", "Mulch"),
    ("jamal", 8.75, "2023-05-05T10:00:00", "Coffee"), ("oscar", 22.4, "2023-05-07T10:00:00", "Fence paint"),
    ("jamal", 15.0, "2023-05-09T10:00:00", "Garden hose"), ("oscar", 9.6, "2023-05-11T10:00:00", "Seeds"),
    ("jamal", 40.0, "2023-05-13T10:00:00", "Ladder rental"), ("oscar", 18.25, "2023-05-15T10:00:00", "Compost"),
)
MAY_TOTAL = round(sum(amount for _, amount, _, _ in NEIGHBOR_PAYMENTS), 2)
NEIGHBORS = ["jamal.carter@gmail.com", "oscar.lindqvist@gmail.com"]
HEDGE_AMOUNT = 37.5
REQUEST_AMOUNT = 25.0
REQUEST_DESCRIPTION = "Block party supplies"


def seed_base(ctx: SeedContext) -> None:
    venmo = ctx.models.venmo
    maya = ctx.user("venmo", ctx.supervisor.key)
    rows = [(maya, ctx.user("venmo", key), amount, when, text) for key, amount, when, text in NEIGHBOR_PAYMENTS]
    rows += [(maya, ctx.user("venmo", "ben"), 19.0, "2023-05-06T10:00:00", "Team gift"),
             (maya, ctx.user("venmo", "oscar"), 50.0, "2023-04-27T10:00:00", "Tree removal"),
             (ctx.user("venmo", "jamal"), maya, 11.0, "2023-05-10T10:00:00", "Pizza")]
    for sender, receiver, amount, when, text in rows:
        venmo.Transaction.create_save(sender_id=sender.id, receiver_id=receiver.id, amount=amount,
                                      description=text, created_at=ctx.at(when))


def seed_emails(ctx: SeedContext) -> None:
    gmail = ctx.models.gmail
    maya = ctx.user("gmail", ctx.supervisor.key)
    for key, subject, body, when in (
        ("oscar", "Hedge trimming", f"Hi Maya,\n\nThe gardener came today. Your share of the hedge trimming is "
                                    f"${HEDGE_AMOUNT:.2f}.\n\nOscar", "2023-05-16T18:00:00"),
        ("jamal", "Gutter cleaning", "Hi Maya,\n\nYour share of the gutter cleaning is $22.00.\n\nJamal",
         "2023-05-17T18:00:00"),
    ):
        sender = ctx.user("gmail", key)
        email = gmail.Email.create_save(sender_id=sender.id, recipient_ids=[maya.id], subject=subject, body=body,
                                        created_at=ctx.at(when))
        thread = gmail.GlobalEmailThread.create_save(email_ids=[email.id], created_at=ctx.at(when),
                                                     updated_at=ctx.at(when))
        for owner in (sender, maya):
            gmail.UserEmailThread.create_save(
                global_email_thread_id=thread.id, user_id=owner.id, email_ids=[email.id], incoming=owner is maya,
                outgoing=owner is sender, read=owner is sender, created_at=ctx.at(when), updated_at=ctx.at(when),
                sender_email_addresses=[ctx.people[key].email], sender_names=[ctx.people[key].full_name],
                recipient_email_addresses=[ctx.supervisor.email], recipient_names=[ctx.supervisor.full_name])


VENMO_LOGIN = login_preamble("venmo", profile=True)
NEIGHBORS_FROM_PHONE = block(
    login("phone", 'profile["phone_number"]', token="phone_token"),
    paginate("neighbors", "phone.search_contacts", 'relationship="neighbor"', token="phone_token", align=True),
)

MAY_TO_NEIGHBORS = TaskDef(
    variant=1,
    difficulty=3,
    instruction=("How much money did I send in total on Venmo during May 2023 to my neighbors? My phone "
                 "contacts say who my neighbors are."),
    paraphrases={
        "mild": (
            "What is the total money I sent on Venmo to my neighbors during May 2023? My phone contacts show who my "
            "neighbors are.",
        ),
        "medium": (
            "During May 2023, how much money in total did I send to my neighbors on Venmo? Who my neighbors are is in "
            "my phone contacts.",
        ),
        "strong": (
            "Maya here. I've been generous with the people next door lately: over Venmo, what did I pay them "
            "altogether in May 2023? My phone's address book marks who lives nearby.",
        ),
        "naturalistic": (
            "how much did i send my neighbors on venmo in May 2023 total? my phone contacts say who the neighbors are",
        ),
    },
    answer=MAY_TOTAL,
    required_apps=("phone", "venmo"),
    # The loop is written out: page_loop(..., align=True) would wrap its call after `page_index=page_index,`.
    solution=solution(VENMO_LOGIN, NEIGHBORS_FROM_PHONE, '''
    total = 0.0
    for neighbor in neighbors:
        page_index = 0
        while True:
            page = apis.venmo.show_transactions(user_email=neighbor["email"], direction="sent",
                                                page_index=page_index, page_limit=20, access_token=token)
            if not page:
                break
            for transaction in page:
                if (transaction["receiver"]["email"] == neighbor["email"]
                        and transaction["created_at"].startswith("2023-05")):
                    total += transaction["amount"]
            page_index += 1
    apis.supervisor.complete_task(answer=round(total, 2))
'''),
    **question_checks("the total the user sent the neighbors on Venmo in May 2023"),
)

PAY_HEDGE = TaskDef(
    variant=2,
    difficulty=2,
    instruction=("Oscar Lindqvist emailed me how much I owe him for the hedge trimming. Pay him exactly that on "
                 "Venmo with the description 'Hedge trimming'."),
    paraphrases={
        "mild": (
            "Oscar Lindqvist sent me an email saying how much I owe him for the hedge trimming. Pay him exactly that "
            "amount on Venmo with the description 'Hedge trimming'.",
        ),
        "medium": (
            "On Venmo, pay Oscar Lindqvist exactly what I owe him for the hedge trimming, which he told me by email, "
            "with the description 'Hedge trimming'.",
        ),
        "strong": (
            "It's Maya; the garden looks great. Oscar Lindqvist mailed me his bill for the work on the hedges. Send "
            "him precisely that sum through Venmo, labelled 'Hedge trimming'.",
        ),
        "naturalistic": (
            "Oscar Lindqvist emailed me what i owe him for the hedge trimming, pls pay him exactly that on venmo w/ "
            "description 'Hedge trimming'",
        ),
    },
    required_apps=("gmail", "venmo"),
    seed_task=seed_emails,
    private_data={"receiver": "oscar.lindqvist@gmail.com", "amount": HEDGE_AMOUNT, "description": "Hedge trimming"},
    solution=solution(VENMO_LOGIN, '''
    gmail_token = apis.gmail.login(username=profile["email"], password=passwords["gmail"])["access_token"]
    threads = apis.gmail.show_inbox_threads(query="hedge trimming", page_limit=20, access_token=gmail_token)
    thread = [t for t in threads if t["subject"] == "Hedge trimming"][0]
    body = apis.gmail.show_thread(email_thread_id=thread["email_thread_id"], access_token=gmail_token)["emails"][0]["body"]
    amount = float(body.split("hedge trimming is $")[1].split(".\\n")[0].rstrip("."))
    apis.venmo.create_transaction(receiver_email="oscar.lindqvist@gmail.com", amount=amount,
                                  description="Hedge trimming", access_token=token)
    apis.supervisor.complete_task()
'''),
    **action_checks(check("no_op_fail", """
        assert exactly one new payment from the user went to Oscar, for the emailed amount, described 'Hedge trimming'.
    """, '''
        added, updated, removed = models.changed_records("venmo.Transaction")
        maya = models.end.venmo.User.find_from(main_user)
        oscar = models.end.venmo.User.find_one(email=private_data.receiver)
        to_oscar = [t for t in added if t.sender_id == maya.id and t.receiver_id == oscar.id]
        test.case(len(to_oscar), "==", 1)
        test.case(to_oscar[0].amount, "==", private_data.amount)
        test.case(to_oscar[0].description, "==", private_data.description, normalize_text=True)
    '''), check("no_op_pass", """
        assert no payment went to anyone but Oscar and no transaction was altered or removed.
    """, '''
        added, updated, removed = models.changed_records("venmo.Transaction")
        oscar = models.end.venmo.User.find_one(email=private_data.receiver)
        test.case([t.id for t in added if t.receiver_id != oscar.id], "is_falsy")
        test.case(len(updated) + len(removed), "==", 0)
    '''), check("no_op_pass", """
        assert nothing outside venmo's transactions, balances and notifications changed.
    """, '''
        allowed = {"venmo.Transaction", "venmo.User", "venmo.Notification"}
        test.case(models.changed_model_names() - allowed, "is_falsy")
    ''')),
)

REQUEST_NEIGHBORS = TaskDef(
    variant=3,
    difficulty=2,
    instruction=(f"Send each of my neighbors a Venmo payment request for ${REQUEST_AMOUNT:.2f} with the description "
                 f"'{REQUEST_DESCRIPTION}'. My phone contacts say who my neighbors are."),
    paraphrases={
        "mild": (
            f"Send a Venmo payment request for ${REQUEST_AMOUNT:.2f} with the description '{REQUEST_DESCRIPTION}' to "
            "each of my neighbors. My phone contacts show who my neighbors are.",
        ),
        "medium": (
            f"Each of my neighbors should get a Venmo payment request for ${REQUEST_AMOUNT:.2f} with the description "
            f"'{REQUEST_DESCRIPTION}'. Who my neighbors are is in my phone contacts.",
        ),
        "strong": (
            "Maya here, collecting for the party. Ask everybody who lives next door (my phone's address book marks "
            f"them) for ${REQUEST_AMOUNT:.2f} through Venmo, labelled '{REQUEST_DESCRIPTION}'.",
        ),
        "naturalistic": (
            f"pls send all my neighbors a venmo request for ${REQUEST_AMOUNT:.2f}, description "
            f"'{REQUEST_DESCRIPTION}'. my phone contacts say who the neighbors are",
        ),
    },
    required_apps=("phone", "venmo"),
    private_data={"receivers": NEIGHBORS, "amount": REQUEST_AMOUNT, "description": REQUEST_DESCRIPTION},
    solution=solution(VENMO_LOGIN, NEIGHBORS_FROM_PHONE, f'''
    for neighbor in neighbors:
        apis.venmo.create_payment_request(user_email=neighbor["email"], amount={REQUEST_AMOUNT!r},
                                          description={REQUEST_DESCRIPTION!r}, access_token=token)
    apis.supervisor.complete_task()
'''),
    **checks(check("no_op_fail", """
        assert each neighbor (private_data.receivers) got exactly one new request from the user, for the amount
        and with the description asked.
    """, '''
        added, updated, removed = models.changed_records("venmo.PaymentRequest")
        maya = models.end.venmo.User.find_from(main_user)
        for email in private_data.receivers:
            neighbor = models.end.venmo.User.find_one(email=email)
            mine = [r for r in added if r.sender_id == maya.id and r.receiver_id == neighbor.id]
            test.case(len(mine), "==", 1)
            test.case(mine[0].amount, "==", private_data.amount)
            test.case(mine[0].description, "==", private_data.description, normalize_text=True)
    '''), check("no_op_pass", """
        assert no request went to anyone who is not a neighbor and no existing request was changed or removed.
    """, '''
        added, updated, removed = models.changed_records("venmo.PaymentRequest")
        ids = {models.end.venmo.User.find_one(email=email).id for email in private_data.receivers}
        test.case([r.id for r in added if r.receiver_id not in ids], "is_falsy")
        test.case(len(updated) + len(removed), "==", 0)
    '''), check("no_op_pass", """
        assert nothing outside venmo's payment requests and notifications changed.
    """, '''
        test.case(models.changed_model_names() - {"venmo.PaymentRequest", "venmo.Notification"}, "is_falsy")
    '''), NULL_ANSWER_CHECK),
)

SCENARIO = ScenarioDef(
    scenario_id="f0f4d44",
    title="Money with the neighbours",
    split="test",
    apps=("phone", "venmo", "gmail"),
    seed_base=seed_base,
    tasks=(MAY_TO_NEIGHBORS, PAY_HEDGE, REQUEST_NEIGHBORS),
)
