"""Step 3: every task in AppWorld's native format (`Task.save` for specs + DB changes, ground truth by hand)."""

from __future__ import annotations

import json
import os

from appworld.apps import get_all_apps
from appworld.apps.admin.models import MainUserMunch
from appworld.apps.model_lib import CachedDBHandler, get_db_home_path
from appworld.collections.models import ModelCollection
from appworld.common.constants import CANARY_STRING, DB_VERSION
from appworld.task import Task

from builder.base_dbs import run_seed
from builder.context import BuildContext, frozen_time, parse_datetime, seed_global_random
from builder.files import write_json, write_text
from builder.validate import apps_of, gold_apis, requirements_of, source_of
from pack import world
from pack.types import DEFAULT_TASK_DATETIME, ScenarioDef, TaskDef

CANARY_LINE = f"# Canary String: {CANARY_STRING}\n"


def build_task(data_dir: str, scenario: ScenarioDef, task: TaskDef) -> str:
    """Write `<data>/tasks/<task_id>/` (specs.json, dbs/, ground_truth/) and return the task id."""
    task_id = scenario.task_id(task)
    _save_task_world(scenario, task, task_id)
    _write_ground_truth(os.path.join(data_dir, "tasks", task_id, "ground_truth"), task)
    return task_id


def _save_task_world(scenario: ScenarioDef, task: TaskDef, task_id: str) -> None:
    """Supervisor rows + task seed rows on top of the base DBs, saved as AppWorld change logs."""
    base = get_db_home_path(storage_type="disk", type="base")
    memory = get_db_home_path(storage_type="memory", type="task_input", task_id=task_id)
    seed_global_random(task_id)
    with frozen_time(DEFAULT_TASK_DATETIME):
        models = ModelCollection.load(to_db_home_path=memory, from_db_home_path=base, load_apps=get_all_apps())
        try:
            ctx = BuildContext(models, f"{task_id}:task")
            _add_supervisor(models, ctx, task.instruction)
            if task.seed_task is not None:
                run_seed(task.seed_task, ctx, where=f"{task_id} ({scenario.source})", field="seed_task")
            supervisor = ctx.supervisor
            saved = Task(
                id=task_id, instruction=task.instruction,
                supervisor=MainUserMunch(
                    first_name=supervisor.first_name, last_name=supervisor.last_name, email=supervisor.email,
                    phone_number=supervisor.phone_number, birthday=supervisor.birthday,
                    account_passwords={}, addresses={}, payment_cards={},
                ),
                datetime=parse_datetime(DEFAULT_TASK_DATETIME), allowed_apps=get_all_apps(skip_admin=True),
                model_collection=models, db_version=DB_VERSION,
            )
            saved.save(save_ground_truth=False, save_model_collection=True, model_collection_format="changes",
                       delete_if_exists=True)
        finally:
            models.close()
            CachedDBHandler.reset()


def _add_supervisor(models: object, ctx: BuildContext, instruction: str) -> None:
    person = ctx.supervisor
    supervisor = models.supervisor.Supervisor.create_save(**person.as_main_user())
    models.supervisor.Task.create_save(supervisor_id=supervisor.id, instruction=instruction)
    for app in world.APPS:
        models.supervisor.AccountPassword.create_save(
            supervisor_id=supervisor.id, account_name=app, password=world.password(person.key, app)
        )
    for address in world.SUPERVISOR_ADDRESSES:
        models.supervisor.Address.create_save(supervisor_id=supervisor.id, **address)
    for card in world.SUPERVISOR_CARDS:
        models.supervisor.PaymentCard.create_save(supervisor_id=supervisor.id, owner_name=person.full_name, **card)


def _write_ground_truth(directory: str, task: TaskDef) -> None:
    """The ground-truth files, written directly (`GroundTruth.save()` would shell out to `ruff`)."""
    solution = source_of(task.solution)
    evaluation = source_of(task.evaluation)
    apis = gold_apis(task.solution)
    write_text(os.path.join(directory, "solution.py"), CANARY_LINE + solution)
    write_text(os.path.join(directory, "compiled_solution.py"), CANARY_LINE + solution)
    write_text(os.path.join(directory, "evaluation.py"), CANARY_LINE + evaluation)
    write_text(os.path.join(directory, "answer.json"), json.dumps(task.answer) + "\n")
    write_json(os.path.join(directory, "test_data.json"), [
        {"requirement": requirement, "label": label}
        for requirement, label in zip(requirements_of(task.evaluation), task.test_labels, strict=True)
    ])
    write_json(os.path.join(directory, "public_data.json"), task.public_data)
    write_json(os.path.join(directory, "private_data.json"), task.private_data)
    write_json(os.path.join(directory, "required_apps.json"), apps_of(task.solution))
    write_json(os.path.join(directory, "required_apis.json"), apis)
    write_json(os.path.join(directory, "metadata.json"), {
        "mode": "full",
        "difficulty": task.difficulty,
        "num_apps": len(apps_of(task.solution)),
        "num_apis": len(apis),
        # present so AppWorld does not compute it by formatting the code with `black`
        "num_solution_code_lines": len([line for line in solution.splitlines() if line.strip()]) - 1,
    })
