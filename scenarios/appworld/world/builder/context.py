"""The `SeedContext` handed to seed functions, plus the frozen-clock helper (imports AppWorld)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from appworld.apps.api_lib import set_local_date_and_time, unset_local_date_and_time
from appworld.common.datetime import DateTime

from pack import world
from pack.types import Person


def parse_datetime(iso: str) -> DateTime:
    """`"YYYY-MM-DDTHH:MM:SS"` (or a bare date) as AppWorld's `DateTime`."""
    date, _, time = iso.partition("T")
    year, month, day = (int(part) for part in date.split("-"))
    hour, minute, second = (int(part) for part in (time or "00:00:00").split(":"))
    return DateTime(year, month, day, hour, minute, second)


def seed_global_random(name: str) -> None:
    """Seed Python's global `random`: AppWorld's default factories (invite codes...) draw from it."""
    random.seed(f"appworld-green:{name}")


@contextmanager
def frozen_time(iso: str) -> Iterator[None]:
    """Freeze AppWorld's clock (every `created_at` default) at `iso` for the block."""
    freezer = set_local_date_and_time(parse_datetime(iso))
    try:
        yield
    finally:
        unset_local_date_and_time(freezer)


class BuildContext:
    """Implements `pack.types.SeedContext` over a loaded `ModelCollection`."""

    def __init__(self, models: Any, seed_name: str) -> None:
        self.models = models
        self.people: dict[str, Person] = {person.key: person for person in world.PEOPLE}
        self.supervisor: Person = self.people[world.SUPERVISOR_KEY]
        self.rng = random.Random(f"appworld-green:{seed_name}")
        self._users: dict[tuple[str, str], Any] = {}

    def user(self, app: str, person_key: str) -> Any:
        key = (app, person_key)
        if key not in self._users:
            person = self.people.get(person_key)
            if person is None:
                raise KeyError(f"unknown person {person_key!r}; people: {', '.join(self.people)}")
            user_model = self.models[app].User
            if app == "phone":
                row = user_model.find_one(phone_number=person.phone_number)
            else:
                row = user_model.find_one(email=person.email)
            if row is None:
                raise KeyError(f"{person_key!r} has no {app} account")
            self._users[key] = row
        return self._users[key]

    def at(self, iso: str) -> DateTime:
        return parse_datetime(iso)

    def password(self, person_key: str, app: str) -> str:
        return world.password(person_key, app)
