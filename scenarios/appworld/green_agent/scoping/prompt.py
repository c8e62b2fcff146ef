"""The LLM predictor's prompt: app-wise API descriptions, few-shot demonstrations, the request.

Message layout (our own wording, following upstream's structure): a system message with the task of
choosing APIs and the API descriptions as YAML
`{app: {api: description}}` for every app except `api_docs`; an assistant acknowledgement; per
demonstration a user turn with its instruction and the assistant's answer (its gold APIs, sorted,
one per line); finally the user turn for the task at hand. Demonstrations come from the `train`
split; the task being predicted is never its own demonstration.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, Field

from kernel.errors import UnknownTaskError
from kernel.world_data import WorldData

PROMPT_VERSION = "scope-v1"
DEMO_SPLIT = "train"
SKIP_APPS = ("api_docs",)

SYSTEM_TEXT = (
    "You pick the APIs an assistant will need to carry out a user's request on their phone apps. "
    "The apps and their APIs are listed below as YAML, app -> API name -> description.\n"
    "Every task needs supervisor.complete_task (to finish), usually supervisor.show_account_passwords "
    "and supervisor.show_profile, and the login API of each app it uses.\n\n"
)
ACK_TEXT = "Understood. Send me a request and I will list the APIs it needs."
REQUEST_TEXT = (
    "Request: {instruction}\n\n"
    "List the APIs needed to complete this request, one per line, written as <app>.<api>, with no other "
    "text. When unsure whether an API is needed, include it, but leave out APIs that are clearly "
    "unrelated. At most {cap} APIs."
)


class Demonstration(BaseModel):
    """One few-shot example: an instruction and its gold APIs."""

    task_id: str = Field(description="The train task it comes from.")
    instruction: str = Field(description="The task's instruction.")
    apis: list[str] = Field(description="Its gold `app.api` names, sorted.")


def api_descriptions(world: WorldData) -> dict[str, dict[str, str]]:
    """`{app: {api: description}}` for every app except `api_docs`."""
    return {app: {name: doc.description for name, doc in apis.items()}
            for app, apis in world.api_docs.items() if app not in SKIP_APPS}


def descriptions_yaml(descriptions: dict[str, dict[str, str]]) -> str:
    """YAML text of the descriptions (JSON-quoted scalars, which YAML reads as plain strings)."""
    lines = []
    for app, apis in descriptions.items():
        lines.append(f"{app}:")
        lines.extend(f"  {name}: {json.dumps(text, ensure_ascii=False)}" for name, text in apis.items())
    return "\n".join(lines) + "\n"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_demonstrations(world: WorldData, exclude_task_id: str | None = None) -> list[Demonstration]:
    """The `train` split's tasks with gold APIs (none when the world has no train split)."""
    if DEMO_SPLIT not in world.splits():
        return []
    demos = []
    for task_id in world.split(DEMO_SPLIT):
        if task_id == exclude_task_id:
            continue
        try:
            spec = world.task(task_id)
        except UnknownTaskError:
            continue
        if spec.gold_apis:
            demos.append(Demonstration(task_id=task_id, instruction=spec.instruction, apis=sorted(spec.gold_apis)))
    return demos


def demonstrations_digest(demos: list[Demonstration]) -> str:
    return digest(json.dumps([d.model_dump() for d in demos], sort_keys=True))


def build_messages(instruction: str, docs_yaml: str, demos: list[Demonstration], cap: int) -> list[dict[str, str]]:
    """The chat messages for one prediction."""
    messages = [{"role": "system", "content": SYSTEM_TEXT + docs_yaml}, {"role": "assistant", "content": ACK_TEXT}]
    for demo in demos:
        messages.append({"role": "user", "content": REQUEST_TEXT.format(instruction=demo.instruction, cap=cap)})
        messages.append({"role": "assistant", "content": "\n".join(demo.apis[:cap])})
    messages.append({"role": "user", "content": REQUEST_TEXT.format(instruction=instruction, cap=cap)})
    return messages
