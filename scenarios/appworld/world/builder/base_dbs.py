"""Step 2: the 12 base DBs: people and accounts, base content, scenario `seed_base` rows, API docs."""

from __future__ import annotations

import os
import shutil
from typing import Any

from appworld.apps import get_all_apps
from appworld.apps.model_lib import CachedDBHandler, get_db_home_path
from appworld.collections.models import ModelCollection

from builder.context import BuildContext, frozen_time, seed_global_random
from pack import PackError, world
from pack.types import Person, ScenarioDef


def build_base_dbs(scenarios: list[ScenarioDef], api_doc_rows: list[dict[str, Any]]) -> None:
    """Create `<data>/base_dbs/*.db` from scratch (the data dir comes from `APPWORLD_ROOT`)."""
    base = get_db_home_path(storage_type="disk", type="base")
    # Rows go into in-memory DBs first, copied to disk once at the end with SQLite's backup API:
    # one commit per row on disk (each an fsync) would make the build several times slower.
    memory = get_db_home_path(storage_type="memory", type="base")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    seed_global_random("base-world")
    with frozen_time(world.WORLD_DATETIME):
        models = ModelCollection.load(to_db_home_path=memory, from_db_home_path=memory, load_apps=get_all_apps(), create_db=True)
        try:
            for person in world.PEOPLE:
                _create_accounts(models, person)
            world.seed_world(BuildContext(models, "base-world"))
            for scenario in scenarios:
                if scenario.seed_base is not None:
                    run_seed(scenario.seed_base, BuildContext(models, f"{scenario.scenario_id}:base"),
                             where=f"scenario {scenario.scenario_id} ({scenario.source})", field="seed_base")
            for row in api_doc_rows:
                models.api_docs.ApiDoc.create_save(**row)
            models.save(db_home_path=base, format="full", delete_if_exists=True)
        finally:
            models.close()
            CachedDBHandler.reset()


def run_seed(seed: Any, ctx: BuildContext, where: str, field: str) -> None:
    """Run an author's seed function; any failure is a definition error naming where and which field."""
    try:
        seed(ctx)
    except Exception as exc:  # the author's code may raise anything; report it as theirs
        raise PackError(f"{where}: field {field}: seed failed: {type(exc).__name__}: {exc}") from exc


def _create_accounts(models: Any, person: Person) -> None:
    """`admin.MainUser` + one verified account per app (with the rows each app's signup would add)."""
    main_user = models.admin.MainUser.create_save(**person.as_main_user())
    for app in world.APPS:
        secret = world.password(person.key, app)
        models.admin.AccountPassword.create_save(main_user_id=main_user.id, account_name=app, password=secret)
        user_model = models[app].User
        fields = {"first_name": person.first_name, "last_name": person.last_name, "password": secret}
        field_names = user_model.field_names()
        if "email" in field_names:
            fields["email"] = person.email
        if "phone_number" in field_names:
            fields["phone_number"] = person.phone_number
        if "verified" in field_names:
            fields["verified"] = True
        user = user_model.create_save(**fields)
        if app == "todoist":  # todoist's signup API creates the Inbox project; its APIs expect it
            inbox = models.todoist.Project.create_save(name="Inbox", user_id=user.id, is_inbox=True)
            models.todoist.ProjectCollaboratorLink.create_save(project_id=inbox.id, user_id=user.id)
