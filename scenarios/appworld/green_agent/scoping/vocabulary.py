"""Word lists of the lexical predictor: tokenising, stemming, app cues and query expansion.

General English-to-AppWorld vocabulary only (how people name the apps and their objects); nothing
here is specific to a task of any split.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[a-z0-9]+")

STOPWORDS = frozenset(
    "a an the and or of to in on at for from by with as is are was were be been being it its this that these "
    "those i me my mine we our you your he she they them their his her all any each every some there here "
    "what which who whom whose how do does did done have has had can could should would will shall may "
    "might must please also just only then than so if into out up down over under about after before "
    "again both but not no nor own same too very s t don now one two".split()
)

APP_CUES: dict[str, dict[str, float]] = {
    "amazon": {"amazon": 3, "cart": 2, "wish list": 2, "wishlist": 2, "prime": 1, "order": 1, "orders": 1,
               "product": 1, "products": 1, "buy": 1, "purchase": 1, "purchased": 1, "bought": 1},
    "file_system": {"file system": 3, "filesystem": 3, "file": 2, "files": 2, "folder": 2, "directory": 2,
                    "directories": 2, "folders": 2},
    "gmail": {"gmail": 3, "email": 2, "emails": 2, "e-mail": 2, "inbox": 2, "mail": 1},
    "phone": {"phone": 3, "text message": 2, "text messages": 2, "sms": 2, "texted": 2, "text": 1,
              "contact": 2, "contacts": 2, "alarm": 2, "alarms": 2, "voice message": 2, "voicemail": 2},
    "simple_note": {"simple note": 3, "simplenote": 3, "simple_note": 3, "note": 2, "notes": 2},
    "splitwise": {"splitwise": 3, "expense": 2, "expenses": 2, "owe": 1, "owes": 1, "split": 1},
    "spotify": {"spotify": 3, "song": 2, "songs": 2, "playlist": 2, "playlists": 2, "album": 2, "albums": 2,
                "artist": 2, "artists": 2, "music": 2, "track": 1, "tracks": 1},
    "todoist": {"todoist": 3, "to-do": 2, "todo": 2, "to do list": 2, "project": 1, "projects": 1},
    "venmo": {"venmo": 3, "payment request": 2, "payment requests": 2, "send money": 2, "transaction": 1,
              "transactions": 1, "paid": 1, "pay": 1},
}
"""Phrases that point at an app, with weights: 3 = the app's name, 2 = its core objects, 1 = a hint."""

APP_SELECT_THRESHOLD = 2.0
"""An app is in scope when its cue weight reaches this (a name or a core object)."""

RELATIONSHIP_WORDS = frozenset(
    "roommate roommates coworker coworkers colleague colleagues sibling siblings brother sister brothers "
    "sisters mother father mom dad parent parents partner wife husband boss manager friend friends family "
    "cousin cousins son daughter children kids".split()
)
"""People described by relation; AppWorld keeps relationships in the phone app's contacts."""

EXPANSIONS: dict[str, tuple[str, ...]] = {
    "how": ("search", "show"), "many": ("search", "show"), "count": ("search", "show"),
    "total": ("search", "show"), "list": ("search", "show"), "find": ("search", "show"),
    "which": ("search", "show"), "most": ("search", "show"), "least": ("search", "show"),
    "new": ("create", "add"), "make": ("create",), "write": ("create",), "start": ("create",),
    "remove": ("delete",), "erase": ("delete",), "cancel": ("delete",), "clear": ("delete",),
    "change": ("update",), "rename": ("update",), "edit": ("update",), "modify": ("update",),
    "set": ("update",), "move": ("update",), "tag": ("label", "tag"), "tagged": ("label", "tag"),
    "pay": ("transaction", "payment"), "paid": ("transaction", "payment"), "send": ("send", "create"),
    "sent": ("send", "transaction"), "request": ("payment", "request"), "requested": ("payment", "request"),
    "money": ("transaction", "payment"), "owe": ("balance", "expense"), "owed": ("balance", "expense"),
    "text": ("send", "text", "message"), "texted": ("text", "message"), "email": ("send",), "reply": ("reply", "email"),
    "play": ("play", "music"), "listen": ("play", "song"), "favorite": ("like",), "favourite": ("like",),
    "liked": ("like",), "follow": ("follow", "artist"), "buy": ("order", "cart", "product"),
    "bought": ("order", "product"), "purchase": ("order", "product"), "purchased": ("order", "product"),
    "my": ("library",), "due": ("task",), "complete": ("update", "task"), "done": ("update", "task"),
}
"""Query words whose API-side vocabulary differs; each adds the listed (unstemmed) terms."""

READ_VERBS = frozenset("show search get".split())
"""First words of API names that only read; every solution reads before it acts."""

MUTATING_VERB_PENALTY = 0.4
"""Score factor for an API whose first word is an action the instruction never asks for."""

TEMPORAL_WORDS = frozenset(
    "today yesterday tomorrow tonight now current currently week month year weekend ago recent recently "
    "last past this next".split()
)
"""Words that make a solution read the current date (the phone app's clock API)."""

CLOCK_API = "phone.get_current_date_and_time"


def stem(word: str) -> str:
    """A tiny suffix stripper: enough to equate `notes/note`, `liked/like/likes`, `creating/create`."""
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: len(word) - len(suffix)] + keep
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def tokens(text: str, drop_stopwords: bool = True) -> list[str]:
    """Lowercase word tokens (underscores split), stopwords dropped, stemmed."""
    words = _TOKEN.findall(text.lower().replace("_", " "))
    return [stem(w) for w in words if not (drop_stopwords and w in STOPWORDS)]
