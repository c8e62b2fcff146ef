"""The shared base world: the people, their accounts, and everyday content in every app.

Every task of every scenario starts from this world (plus its scenario's `seed_base` rows and its
own `seed_task` rows). The supervisor of all tasks is `SUPERVISOR_KEY`. Each person has a verified
account in all nine apps; passwords come from `password()` and are stored in `admin.AccountPassword`
(the supervisor's also in the task's `supervisor.AccountPassword`).

Content here is deliberately generic and plentiful so that a task cannot be solved by guessing.
Scenario-specific facts belong in scenario modules, never here. Plain data + seed code, no AppWorld
import: seed functions receive a `SeedContext` (see `pack/types.py`).
"""

from __future__ import annotations

import hashlib

from pack.types import Person, SeedContext

APPS = ("amazon", "phone", "file_system", "spotify", "venmo", "gmail", "splitwise", "simple_note", "todoist")
"""The nine apps every person has an account in."""

SUPERVISOR_KEY = "maya"
WORLD_DATETIME = "2023-05-10T09:00:00"
"""When base-world rows without an explicit date are created."""

PEOPLE: tuple[Person, ...] = (
    Person("maya", "Maya", "Castillo", "maya.castillo@gmail.com", "4155550101", "1991-03-14", "female"),
    Person("ben", "Ben", "Okafor", "ben.okafor@gmail.com", "4155550102", "1988-11-02", "male"),
    Person("chloe", "Chloe", "Nguyen", "chloe.nguyen@gmail.com", "4155550103", "1993-07-21", "female"),
    Person("diego", "Diego", "Ramirez", "diego.ramirez@gmail.com", "4155550104", "1986-01-30", "male"),
    Person("emma", "Emma", "Schultz", "emma.schultz@gmail.com", "4155550105", "1992-09-09", "female"),
    Person("farid", "Farid", "Haddad", "farid.haddad@gmail.com", "4155550106", "1990-05-17", "male"),
    Person("grace", "Grace", "Kim", "grace.kim@gmail.com", "4155550107", "1989-12-01", "female"),
    Person("hiro", "Hiro", "Tanaka", "hiro.tanaka@gmail.com", "4155550108", "1994-02-11", "male"),
    Person("isabel", "Isabel", "Moreau", "isabel.moreau@gmail.com", "4155550109", "1987-08-25", "female"),
    Person("jamal", "Jamal", "Carter", "jamal.carter@gmail.com", "4155550110", "1995-04-03", "male"),
    Person("kira", "Kira", "Petrov", "kira.petrov@gmail.com", "4155550111", "1991-10-19", "female"),
    Person("liam", "Liam", "Castillo", "liam.castillo@gmail.com", "4155550112", "1996-06-28", "male"),
    Person("nadia", "Nadia", "Castillo", "nadia.castillo@gmail.com", "4155550113", "1962-02-14", "female"),
    Person("oscar", "Oscar", "Lindqvist", "oscar.lindqvist@gmail.com", "4155550114", "1985-03-07", "male"),
    Person("priya", "Priya", "Shah", "priya.shah@gmail.com", "4155550115", "1993-12-12", "female"),
    Person("tom", "Tom", "Becker", "tom.becker@gmail.com", "4155550116", "1984-07-04", "male"),
)

SUPERVISOR_RELATIONSHIPS: dict[str, list[str]] = {
    "ben": ["coworker"], "chloe": ["roommate", "friend"], "diego": ["coworker"], "emma": ["friend"],
    "farid": ["friend"], "grace": ["coworker", "friend"], "hiro": ["coworker"], "isabel": ["friend"],
    "jamal": ["neighbor"], "kira": ["friend"], "liam": ["sibling"], "nadia": ["parent"],
    "oscar": ["neighbor"], "priya": ["roommate"], "tom": ["coworker"],
}
"""How the supervisor's phone contacts are labelled (phone `Contact.relationships`)."""

SUPERVISOR_ADDRESSES = (
    {"name": "Home", "street_address": "218 Alder Street Suite 4", "city": "Oakland", "state": "California",
     "country": "United States", "zip_code": 94607},
    {"name": "Work", "street_address": "500 Howard Street Floor 7", "city": "San Francisco", "state": "California",
     "country": "United States", "zip_code": 94105},
)
SUPERVISOR_CARDS = (
    {"card_name": "Visa", "card_number": 4716203941188305, "expiry_year": 2026, "expiry_month": 8, "cvv_number": 412},
    {"card_name": "Chase", "card_number": 5425233430109903, "expiry_year": 2025, "expiry_month": 3, "cvv_number": 877},
)
"""The supervisor's `supervisor.Address` / `supervisor.PaymentCard` rows (owner name added by the builder)."""


def password(person_key: str, app: str) -> str:
    """The person's password in an app: stable, unguessable-looking, unique per person and app."""
    return hashlib.sha256(f"appworld-green:{person_key}:{app}".encode()).hexdigest()[:12]


def seed_world(ctx: SeedContext) -> None:
    """Add the everyday content of every app (accounts already exist when this runs)."""
    for seed in (_notes, _todoist, _spotify, _venmo, _phone, _gmail, _file_system, _splitwise, _amazon):
        seed(ctx)


_NOTE_TOPICS = (
    ("Packing list", "passport, charger, sunglasses, rain jacket", ["travel"]),
    ("Book ideas", "Read more essays; try a graphic novel this month.", ["books"]),
    ("Quarterly goals", "Finish the onboarding revamp and mentor one new hire.", ["work"]),
    ("Standup notes", "Blocked on API review; follow up next Tuesday.", ["work", "meetings"]),
    ("Gym plan", "Mon/Wed/Fri strength, Tue/Thu cardio, Sunday rest.", ["health"]),
    ("Gift ideas", "Ceramic mug, plant stand, concert tickets.", ["personal"]),
    ("Movie watchlist", "Past Lives; Aftersun; The Fabelmans.", ["movies"]),
    ("Car maintenance", "Oil change at 45k miles, rotate tires.", ["errands"]),
    ("Garden plan", "Tomatoes along the fence, basil in pots.", ["home"]),
    ("Podcast notes", "Episode on sleep hygiene was worth it.", ["health"]),
    ("Budget May", "Rent 1450, groceries 380, transport 90.", ["finance"]),
    ("Wifi password", "Ask the landlord for the new router password.", ["home"]),
    ("Retro notes", "Keep: pairing. Drop: long standups. Try: demo Fridays.", ["work", "meetings"]),
    ("Language practice", "20 minutes of Spanish vocabulary every evening.", ["learning"]),
    ("Birthday party", "Book the venue, order cake, send invitations.", ["personal"]),
    ("Conference talk", "Outline: problem, approach, results, lessons.", ["work"]),
    ("Hiking trails", "Mount Tam loop, Point Reyes coast trail.", ["travel", "health"]),
    ("Apartment repairs", "Leaky faucet, squeaky door, broken blind.", ["home"]),
)


def _notes(ctx: SeedContext) -> None:
    for person in ctx.people.values():
        user = ctx.user("simple_note", person.key)
        count = len(_NOTE_TOPICS) if person.key == SUPERVISOR_KEY else ctx.rng.randint(3, 6)
        for title, content, tags in ctx.rng.sample(_NOTE_TOPICS, count):
            ctx.models.simple_note.Note.create_save(
                user_id=user.id, title=title, content=content, tags=tags, pinned=ctx.rng.random() < 0.15,
                created_at=ctx.at(f"2023-0{ctx.rng.randint(1, 4)}-{ctx.rng.randint(10, 28)}T08:30:00"),
            )


_TODO_PROJECTS = {
    "Work": ["Review pull requests", "Prepare sprint demo", "Update roadmap doc", "Write design review",
             "Book meeting room", "Reply to recruiter"],
    "Home": ["Pay electricity bill", "Fix the leaking tap", "Buy light bulbs", "Clean the balcony",
             "Call the landlord"],
    "Fitness": ["Renew gym membership", "Plan 10k training", "Buy running shoes"],
}


def _todoist(ctx: SeedContext) -> None:
    for person in ctx.people.values():
        user = ctx.user("todoist", person.key)
        names = list(_TODO_PROJECTS) if person.key == SUPERVISOR_KEY else ctx.rng.sample(list(_TODO_PROJECTS), 1)
        for name in names:
            project = ctx.models.todoist.Project.create_save(user_id=user.id, name=name, color="blue")
            ctx.models.todoist.ProjectCollaboratorLink.create_save(project_id=project.id, user_id=user.id)
            for index, title in enumerate(_TODO_PROJECTS[name]):
                ctx.models.todoist.Task.create_save(
                    project_id=project.id, user_id=user.id, title=title, order_index=index,
                    priority=ctx.rng.choice(["high", "medium", "low"]), is_completed=ctx.rng.random() < 0.3,
                    due_date=ctx.at(f"2023-05-{ctx.rng.randint(11, 31)}T17:00:00"),
                )


_ARTISTS = (("Lumen Drive", "pop"), ("The Quiet Harbors", "indie"), ("Marisol Vega", "latin"),
            ("Cobalt Theory", "rock"), ("DJ Kestrel", "electronic"), ("Nora Blackwood", "folk"),
            ("Velvet Static", "rock"), ("Amani Brooks", "r&b"), ("Polar Echo", "electronic"), ("Sunday Atlas", "jazz"))
_SONG_WORDS = ("Midnight", "Paper", "Golden", "River", "Neon", "Echo", "Silver", "Summer", "Glass", "Wild",
               "Quiet", "Northern", "Electric", "Velvet", "Falling", "Hollow")
_SONG_NOUNS = ("Lights", "Hearts", "Skyline", "Letters", "Roads", "Tides", "Dreams", "Mornings", "Signals", "Fires")


def _spotify(ctx: SeedContext) -> None:
    spotify = ctx.models.spotify
    artists = [spotify.Artist.create_save(name=name, genre=genre) for name, genre in _ARTISTS]
    titles = sorted({f"{w} {n}" for w in _SONG_WORDS for n in _SONG_NOUNS})
    ctx.rng.shuffle(titles)
    songs = []
    for index, artist in enumerate(artists):
        album = spotify.Album.create_save(
            title=f"{titles.pop()} (Album)", artist_ids=[artist.id], genre=artist.genre,
            release_date=ctx.at(f"20{ctx.rng.randint(15, 22)}-0{ctx.rng.randint(1, 9)}-15T00:00:00"),
        )
        for _ in range(6):
            songs.append(spotify.Song.create_save(
                title=titles.pop(), artist_ids=[artist.id], album_id=album.id, genre=artist.genre,
                duration=ctx.rng.randint(150, 320), release_date=album.release_date,
                play_count=ctx.rng.randint(100, 90000), rating=round(ctx.rng.uniform(2.5, 5.0), 1),
            ))
    for person in ctx.people.values():
        user = ctx.user("spotify", person.key)
        for song in ctx.rng.sample(songs, 8):
            spotify.UserLibrarySong.create_save(user_id=user.id, song_id=song.id)
        playlist = spotify.Playlist.create_save(title=f"{person.first_name}'s Mix", user_id=user.id, is_public=True)
        for song in ctx.rng.sample(songs, 6):
            spotify.PlaylistSong.create_save(playlist_id=playlist.id, song_id=song.id)


def _venmo(ctx: SeedContext) -> None:
    venmo = ctx.models.venmo
    keys = list(ctx.people)
    for key in keys:
        user = ctx.user("venmo", key)
        user.venmo_balance = 1500.0 if key == SUPERVISOR_KEY else float(ctx.rng.randint(50, 900))
        user.save()
    supervisor = ctx.user("venmo", SUPERVISOR_KEY)
    for key in ("ben", "chloe", "emma", "farid", "grace", "isabel", "kira", "liam", "priya"):
        friend = ctx.user("venmo", key)
        venmo.Friendship.create_save(user_id=supervisor.id, friend_id=friend.id)
        venmo.Friendship.create_save(user_id=friend.id, friend_id=supervisor.id)
    venmo.PaymentCard.create_save(user_id=supervisor.id, owner_name=ctx.supervisor.full_name, **SUPERVISOR_CARDS[0])
    reasons = ("coffee", "lunch", "movie tickets", "groceries", "cab ride", "concert", "pizza night", "gas", "brunch")
    for _ in range(45):
        sender, receiver = ctx.rng.sample(keys, 2)
        venmo.Transaction.create_save(
            sender_id=ctx.user("venmo", sender).id, receiver_id=ctx.user("venmo", receiver).id,
            amount=float(ctx.rng.randint(5, 80)), description=ctx.rng.choice(reasons),
            created_at=ctx.at(f"2023-0{ctx.rng.randint(1, 3)}-{ctx.rng.randint(10, 28)}T19:00:00"),
        )


def _phone(ctx: SeedContext) -> None:
    phone = ctx.models.phone
    supervisor = ctx.user("phone", SUPERVISOR_KEY)
    for key, relationships in SUPERVISOR_RELATIONSHIPS.items():
        person = ctx.people[key]
        phone.Contact.create_save(
            user_id=supervisor.id, first_name=person.first_name, last_name=person.last_name, email=person.email,
            phone_number=person.phone_number, relationships=relationships, birthday=person.birthday,
        )
    lines = ("Running 10 min late!", "Are we still on for tonight?", "Thanks for yesterday :)",
             "Can you send me the address?", "Call me when you're free.", "Happy Friday!")
    for key in ("ben", "chloe", "liam", "nadia", "grace", "priya"):
        other = ctx.user("phone", key)
        for index in range(3):
            sender, receiver = (supervisor, other) if index % 2 else (other, supervisor)
            message = phone.GlobalTextMessage.create_save(
                sender_id=sender.id, receiver_id=receiver.id, message=ctx.rng.choice(lines),
                created_at=ctx.at(f"2023-05-0{index + 1}T1{ctx.rng.randint(0, 9)}:15:00"),
            )
            for owner in (sender, receiver):
                phone.UserTextMessage.create_save(global_text_message_id=message.id, user_id=owner.id)
    phone.Alarm.create_save(user_id=supervisor.id, time="06:45", enabled=True, label="Wake up",
                            repeat_days=["monday", "tuesday", "wednesday", "thursday", "friday"])


def _gmail(ctx: SeedContext) -> None:
    gmail = ctx.models.gmail
    subjects = ("Lunch on Thursday?", "Photos from the trip", "Quarterly report draft", "Re: apartment viewing",
                "Book club pick", "Invoice #2231", "Weekend plans", "Your feedback please")
    keys = [key for key in ctx.people if key != SUPERVISOR_KEY]
    for index in range(14):
        other = ctx.people[ctx.rng.choice(keys)]
        outgoing = index % 3 == 0
        sender, recipient = (ctx.supervisor, other) if outgoing else (other, ctx.supervisor)
        sender_user, recipient_user = ctx.user("gmail", sender.key), ctx.user("gmail", recipient.key)
        when = ctx.at(f"2023-04-{10 + index}T09:{10 + index}:00")
        email = gmail.Email.create_save(
            sender_id=sender_user.id, recipient_ids=[recipient_user.id], subject=subjects[index % len(subjects)],
            body=f"Hi {recipient.first_name},\n\n{ctx.rng.choice(_NOTE_TOPICS)[1]}\n\nBest,\n{sender.first_name}",
            created_at=when,
        )
        thread = gmail.GlobalEmailThread.create_save(email_ids=[email.id], created_at=when, updated_at=when)
        for owner, is_sender in ((sender_user, True), (recipient_user, False)):
            gmail.UserEmailThread.create_save(
                global_email_thread_id=thread.id, user_id=owner.id, email_ids=[email.id],
                incoming=not is_sender, outgoing=is_sender, read=is_sender or ctx.rng.random() < 0.5,
                sender_email_addresses=[sender.email], sender_names=[sender.full_name],
                recipient_email_addresses=[recipient.email], recipient_names=[recipient.full_name],
                created_at=when, updated_at=when,
            )


def _file_system(ctx: SeedContext) -> None:
    fs = ctx.models.file_system
    for person in ctx.people.values():
        user = ctx.user("file_system", person.key)
        home = f"/home/{person.first_name.lower()}/"
        for sub in ("", "documents/", "photos/", "downloads/"):
            fs.Directory.create_save(path=home + sub, user_id=user.id)
        fs.File.create_save(path=f"{home}documents/todo.txt", user_id=user.id, content="call the bank\nwater plants\n")
        fs.File.create_save(path=f"{home}downloads/boarding_pass.pdf", user_id=user.id, content="BOARDING PASS SFO-JFK")


def _splitwise(ctx: SeedContext) -> None:
    splitwise = ctx.models.splitwise
    supervisor = ctx.user("splitwise", SUPERVISOR_KEY)
    group = splitwise.Group.create_save(user_id=supervisor.id, name="Alder Street Flat", description="rent and bills")
    members = [supervisor] + [ctx.user("splitwise", key) for key in ("chloe", "priya")]
    for member in members:
        splitwise.GroupMember.create_save(group_id=group.id, user_id=member.id)
    for description, amount, payer in (("Internet March", 60.0, 0), ("Cleaning supplies", 27.0, 1), ("Water bill", 45.0, 2)):
        expense = splitwise.Expense.create_save(
            user_id=members[payer].id, payer_id=members[payer].id, amount=amount, group_id=group.id,
            description=description, participant_ids=[m.id for m in members],
            debtor_ids=[m.id for i, m in enumerate(members) if i != payer],
        )
        for index, member in enumerate(members):
            if index != payer:
                splitwise.ExpenseShare.create_save(expense_id=expense.id, debtor_id=member.id, share_amount=amount / 3)


_PRODUCTS = (("Stainless Steel Water Bottle", "kitchen", 24.99), ("Wireless Earbuds", "electronics", 59.0),
             ("Yoga Mat", "sports", 31.5), ("Cast Iron Skillet", "kitchen", 38.0), ("LED Desk Lamp", "home", 27.99),
             ("Trail Running Shoes", "sports", 89.0), ("Noise Cancelling Headphones", "electronics", 199.0),
             ("French Press", "kitchen", 22.0), ("Throw Blanket", "home", 34.5), ("Backpack 25L", "outdoors", 64.0),
             ("Phone Stand", "electronics", 12.99), ("Ceramic Planter", "home", 18.0))


def _amazon(ctx: SeedContext) -> None:
    amazon = ctx.models.amazon
    sellers = [amazon.Seller.create_save(name=name) for name in ("HomeGoods Co", "Peak Outfitters", "TechNest")]
    for index, (name, product_type, price) in enumerate(_PRODUCTS):
        amazon.Product.create_save(
            name=name, product_type=product_type, description=f"{name}: durable, well reviewed, ships fast.",
            seller_id=sellers[index % len(sellers)].id, price=price, delivery_days=ctx.rng.randint(1, 6),
            weight=round(ctx.rng.uniform(0.2, 3.0), 2), length=20.0, width=10.0, height=8.0,
            inventory_quantity=ctx.rng.randint(5, 100),
        )
    supervisor = ctx.user("amazon", SUPERVISOR_KEY)
    for address in SUPERVISOR_ADDRESSES:
        amazon.Address.create_save(user_id=supervisor.id, **address)
    amazon.PaymentCard.create_save(user_id=supervisor.id, owner_name=ctx.supervisor.full_name, **SUPERVISOR_CARDS[0])
