"""Scenario f0b8d08 (dev): the 'Tahoe Cabin Weekend' Splitwise group.

Seeds (every variant's own world, via `seed_task`): a group of Maya, Emma, Farid, Kira and Isabel with
ten expenses split equally five ways (two pages of `show_group_expenses` at the default page size,
newest first; Kira's one big expense is on page 1, so page 0 alone makes Farid look like the top
payer), a $100 payment from Farid to Maya inside the group, and a $30 non-group expense Farid owes Maya.
Variants: what Farid owes me in the group (question), record an expense split five ways, who paid the
most for the group's expenses (question, paginated).
"""

from __future__ import annotations

from pack.snippets import (
    NULL_ANSWER_CHECK, added_only_check, block, check, checks, login_preamble, page_loop, question_checks, solution,
)
from pack.types import ScenarioDef, SeedContext, TaskDef

GROUP = "Tahoe Cabin Weekend"
MEMBERS = ("maya", "emma", "farid", "kira", "isabel")
MEMBER_EMAILS = {"maya": "maya.castillo@gmail.com", "emma": "emma.schultz@gmail.com",
                 "farid": "farid.haddad@gmail.com", "kira": "kira.petrov@gmail.com",
                 "isabel": "isabel.moreau@gmail.com"}
# (description, amount, payer, created_at): every expense is split equally among the five members.
EXPENSES = (
    ("Cabin rental", 900.0, "maya", "2023-02-10T18:00:00"),
    ("Ski lift tickets", 475.0, "kira", "2023-02-17T08:30:00"),
    ("Gas to Tahoe", 85.0, "farid", "2023-02-17T11:00:00"),
    ("Groceries", 142.5, "emma", "2023-02-17T17:45:00"),
    ("Snowshoe rental", 120.0, "maya", "2023-02-18T09:15:00"),
    ("Dinner at Base Camp", 210.0, "farid", "2023-02-18T20:30:00"),
    ("Firewood", 32.5, "isabel", "2023-02-18T21:10:00"),
    ("Brunch", 96.0, "farid", "2023-02-19T11:20:00"),
    ("Hot tub cleaning fee", 60.0, "emma", "2023-02-19T16:00:00"),
    ("Parking", 45.0, "isabel", "2023-02-20T10:00:00"),
)
FARID_PAYMENT = (100.0, "Venmo for the cabin", "2023-02-25T19:00:00")
SHARE_COUNT = len(MEMBERS)


def _farid_owes_maya() -> float:
    owed = sum(amount / SHARE_COUNT for _, amount, payer, _ in EXPENSES if payer == "maya")
    owed -= sum(amount / SHARE_COUNT for _, amount, payer, _ in EXPENSES if payer == "farid")
    return round(owed - FARID_PAYMENT[0], 2)


def _top_payer() -> str:
    totals: dict[str, float] = {}
    for _, amount, payer, _ in EXPENSES:
        if payer != "maya":
            totals[payer] = totals.get(payer, 0.0) + amount
    return max(totals, key=totals.__getitem__)


FARID_OWES = _farid_owes_maya()
TOP_PAYER_NAME = {"kira": "Kira Petrov", "farid": "Farid Haddad", "emma": "Emma Schultz",
                  "isabel": "Isabel Moreau"}[_top_payer()]
NEW_EXPENSE = {"description": "Safeway groceries", "amount": 186.0, "share": round(186.0 / SHARE_COUNT, 2)}


def seed_trip(ctx: SeedContext) -> None:
    splitwise = ctx.models.splitwise
    users = {key: ctx.user("splitwise", key) for key in MEMBERS}
    group = splitwise.Group.create_save(user_id=users["maya"].id, name=GROUP, description="Presidents' Day ski trip",
                                        created_at=ctx.at("2023-02-05T12:00:00"))
    for key in MEMBERS:
        splitwise.GroupMember.create_save(group_id=group.id, user_id=users[key].id,
                                          joined_at=ctx.at("2023-02-05T12:00:00"))
    for description, amount, payer_key, when in EXPENSES:
        payer = users[payer_key]
        debtors = [users[key] for key in MEMBERS if key != payer_key]
        expense = splitwise.Expense.create_save(
            user_id=payer.id, payer_id=payer.id, amount=amount, group_id=group.id, description=description,
            participant_ids=[payer.id] + [d.id for d in debtors], debtor_ids=[d.id for d in debtors],
            created_at=ctx.at(when),
        )
        for debtor in debtors:
            splitwise.ExpenseShare.create_save(expense_id=expense.id, debtor_id=debtor.id,
                                               share_amount=round(amount / SHARE_COUNT, 2), created_at=ctx.at(when))
    amount, description, when = FARID_PAYMENT
    splitwise.Payment.create_save(group_id=group.id, user_id=users["farid"].id, payer_id=users["farid"].id,
                                  receiver_id=users["maya"].id, amount=amount, description=description,
                                  created_at=ctx.at(when))
    concert = splitwise.Expense.create_save(
        user_id=users["maya"].id, payer_id=users["maya"].id, amount=60.0, group_id=None,
        description="Concert tickets", participant_ids=[users["maya"].id, users["farid"].id],
        debtor_ids=[users["farid"].id], created_at=ctx.at("2023-04-12T21:00:00"),
    )
    splitwise.ExpenseShare.create_save(expense_id=concert.id, debtor_id=users["farid"].id, share_amount=30.0,
                                       created_at=ctx.at("2023-04-12T21:00:00"))


LOGIN = block(login_preamble("splitwise"), f'''
    groups = apis.splitwise.show_groups(page_limit=20, access_token=token)
    group = [g for g in groups if g["name"] == "{GROUP}"][0]
''')

FARID_BALANCE = TaskDef(
    variant=1,
    difficulty=1,
    instruction=f"How much does Farid Haddad owe me in our Splitwise group '{GROUP}'?",
    paraphrases={
        "mild": (f"What does Farid Haddad owe me in our Splitwise group '{GROUP}'?",),
        "medium": (f"In our Splitwise group '{GROUP}', how much does Farid Haddad owe me?",),
        "strong": (
            f"It's Maya, settling up after the trip. Looking at the '{GROUP}' group on Splitwise, what is Farid "
            "Haddad's outstanding balance toward me?",
        ),
        "naturalistic": (f"how much does Farid Haddad owe me in the Splitwise group '{GROUP}'??",),
    },
    answer=FARID_OWES,
    required_apps=("splitwise",),
    seed_task=seed_trip,
    solution=solution(LOGIN, '''
    balance = apis.splitwise.show_group_balance(group_id=group["group_id"], email=email, access_token=token)[0]
    owed = [b["amount"] for b in balance["targets_owe_to_source"]["breakdown"]
            if b["email"] == "farid.haddad@gmail.com"]
    apis.supervisor.complete_task(answer=round(owed[0], 2))
'''),
    **question_checks(
        f"what Farid Haddad owes the user within '{GROUP}' (his shares of the user's expenses, "
        "minus the user's shares of his, minus his payment to the user)"
    ),
)

RECORD_GROCERIES = TaskDef(
    variant=2,
    difficulty=2,
    instruction=(
        f"I paid ${NEW_EXPENSE['amount']:.2f} for groceries at Safeway for the trip. Add it as an expense in my "
        f"Splitwise group '{GROUP}' with the description '{NEW_EXPENSE['description']}', paid by me and split "
        "equally among all the group's members, me included."
    ),
    paraphrases={
        "mild": (
            f"I spent ${NEW_EXPENSE['amount']:.2f} on groceries at Safeway for the trip. Record it as an expense in my "
            f"Splitwise group '{GROUP}' with the description '{NEW_EXPENSE['description']}', paid by me and split "
            "equally among all the group's members, including me.",
        ),
        "medium": (
            f"Add an expense to my Splitwise group '{GROUP}': I paid ${NEW_EXPENSE['amount']:.2f} for groceries at "
            f"Safeway for the trip. Use the description '{NEW_EXPENSE['description']}', mark me as the payer, and "
            "split it equally among all the group's members, me included.",
        ),
        "strong": (
            f"Maya here, back from the store. The trip's food run at Safeway came to ${NEW_EXPENSE['amount']:.2f} and "
            f"it was my card. Log that on Splitwise under '{GROUP}' as '{NEW_EXPENSE['description']}', with me as the "
            "one who paid and everybody in the group, myself too, owing an even share.",
        ),
        "naturalistic": (
            f"paid ${NEW_EXPENSE['amount']:.2f} at Safeway for groceries for the trip. pls add it to my Splitwise "
            f"group '{GROUP}', description '{NEW_EXPENSE['description']}', paid by me, split evenly w/ everyone in the "
            "group incl me",
        ),
    },
    required_apps=("splitwise",),
    seed_task=seed_trip,
    private_data={"group": GROUP, "others": [MEMBER_EMAILS[key] for key in MEMBERS if key != "maya"], **NEW_EXPENSE},
    solution=solution(LOGIN, f'''
    members = [member["email"] for member in group["members"]]
    apis.splitwise.record_expense(
        description="{NEW_EXPENSE['description']}", paid_amount={NEW_EXPENSE['amount']}, payer_email=email,
        debtor_emails=members, group_id=group["group_id"], access_token=token,
    )
    apis.supervisor.complete_task()
'''),
    **checks('''
    maya = models.end.splitwise.User.find_from(main_user)
    group = models.end.splitwise.Group.find_one(user_id=maya.id, name=private_data.group)
''', NULL_ANSWER_CHECK, check("no_op_fail", """
        assert exactly one expense was added, in the group, paid by the user, for the stated amount and
        with the stated description.
    """, '''
        added = models.changed_records("splitwise.Expense")[0]
        test.case(len(added), "==", 1)
        expense = added[0]
        test.case(expense.group_id, "==", group.id)
        test.case(expense.payer_id, "==", maya.id)
        test.case(round(expense.amount, 2), "==", private_data.amount)
        test.case(expense.description, "==", private_data.description, normalize_text=True)
    '''), check("no_op_fail", """
        assert each of the four other members owes an equal fifth of the expense (private_data.share), and the
        user's own share, if recorded, is that fifth too.
    """, '''
        shares = {models.end.splitwise.User.find_one(id=share.debtor_id).email: round(share.share_amount, 2)
                  for share in models.end.splitwise.ExpenseShare.find_all(expense_id=expense.id)}
        others = {email: amount for email, amount in shares.items() if email != maya.email}
        test.case(others, "==", {email: private_data.share for email in private_data.others})
        test.case(shares.get(maya.email, private_data.share), "==", private_data.share)
    '''), added_only_check("""
        assert no existing expense or payment was changed or removed, and only expense records (and
        Splitwise notifications) changed.
    """, "splitwise.Expense", "splitwise.ExpenseShare", "splitwise.Notification")),
)

TOP_PAYER = TaskDef(
    variant=3,
    difficulty=3,
    instruction=(
        f"Besides me, which member of my Splitwise group '{GROUP}' has paid the most money in total for the "
        "group's expenses? Tell me their full name."
    ),
    paraphrases={
        "mild": (
            f"Apart from me, which member of my Splitwise group '{GROUP}' has paid the most money in total for the "
            "group's expenses? Give me their full name.",
        ),
        "medium": (
            f"Which member of my Splitwise group '{GROUP}', besides me, has paid the most money in total for the "
            "group's expenses? Tell me their full name.",
        ),
        "strong": (
            f"It's Maya. Leaving myself out of it, who in the '{GROUP}' group on Splitwise has covered the biggest "
            "share of the shared costs overall? First and last name, please.",
        ),
        "naturalistic": (
            f"not counting me, who in my Splitwise group '{GROUP}' paid the most in total for group expenses? full "
            "name pls",
        ),
    },
    answer=TOP_PAYER_NAME,
    required_apps=("splitwise",),
    seed_task=seed_trip,
    solution=solution(LOGIN, block('''
    totals = {}
    names = {}
''', page_loop("splitwise.show_group_expenses", 'group_id=group["group_id"]', body='''
    for expense in page:
        payer = expense["payer"]
        if payer["email"] != email:
            totals[payer["email"]] = totals.get(payer["email"], 0.0) + expense["paid_amount"]
            names[payer["email"]] = payer["name"]
'''), '''
    top = max(totals, key=lambda payer_email: totals[payer_email])
    apis.supervisor.complete_task(answer=names[top])
''')),
    **question_checks(
        f"the full name of the member of '{GROUP}', other than the user, whose paid expenses in the group "
        "add up to the most"
    ),
)

SCENARIO = ScenarioDef(
    scenario_id="f0b8d08",
    title="Splitwise: the Tahoe cabin weekend",
    split="dev",
    apps=("splitwise",),
    tasks=(FARID_BALANCE, RECORD_GROCERIES, TOP_PAYER),
)
