"""Read-only access to an AppWorld data folder (`<APPWORLD_ROOT>/data`) from the agents' venv.

The Green never imports `appworld`; it reads the files AppWorld's own format defines:
splits, task specs, ground truth and API docs.
"""

from __future__ import annotations

import json
import re
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from kernel.errors import BadInputError, InfrastructureError, UnknownTaskError
from kernel import api_names

_GOLD_API_PATTERN = re.compile(r"apis\.(\w+\.\w+)")
_CANARY_PREFIX = "# Canary String:"
DocsVersion = tuple[tuple[Path, int, int], ...]
"""Each standard docs file with its mtime and size (`WorldData.docs_version`)."""


class ApiDoc(BaseModel):
    """One API of AppWorld's standard docs (the fields we use)."""

    app_name: str
    api_name: str
    path: str
    method: str
    description: str = ""
    parameters: list[dict[str, Any]] = Field(default_factory=list)
    response_schemas: dict[str, Any] = Field(default_factory=dict)

    @property
    def dotted(self) -> str:
        """`app.api`, the predictor's and gold sets' form."""
        return f"{self.app_name}.{self.api_name}"

    @property
    def tool_name(self) -> str:
        """`app__api`, the MCP tool name."""
        return api_names.tool_name(self.dotted)

    @property
    def answers_list(self) -> bool:
        """Its docs' success answer is a list (a page of results)."""
        return isinstance(self.response_schemas.get("success"), list)

    @property
    def is_paginated(self) -> bool:
        return any(p.get("name") == "page_index" for p in self.parameters)


class TaskSpec(BaseModel):
    """What a task's files say about it (ground truth included where present)."""

    task_id: str
    instruction: str
    supervisor: dict[str, Any]
    datetime: str
    difficulty: int | None = None
    gold_apis: list[str] = Field(default_factory=list, description="Sorted `app.api` names the solution calls.")
    num_tests: int | None = None


class TaskGroundTruth(BaseModel):
    """What a task's ground truth says it depends on (whatever of it the world ships; the real dataset's
    held-out splits have little)."""

    answer: Any = Field(default=None, description="`answer.json` (None: an action task, or not shipped).")
    private_data: dict[str, Any] = Field(default_factory=dict, description="`private_data.json` ({} when absent).")
    public_data: dict[str, Any] = Field(default_factory=dict, description="`public_data.json` ({} when absent).")
    required_apps: list[str] = Field(default_factory=list, description="`required_apps.json` ([] when absent).")
    solution: str = Field(default="", description="The reference solution's source ('' when not shipped).")


class WorldData:
    """The task and API-doc files of one AppWorld root."""

    def __init__(self, appworld_root: Path) -> None:
        self.root = Path(appworld_root)
        self.data = self.root / "data"

    def require(self) -> "WorldData":
        if not (self.data / "tasks").is_dir():
            raise InfrastructureError(f"no AppWorld data at {self.data}: run `appworld-green world build` (or `make world`)")
        return self

    def splits(self) -> list[str]:
        return sorted(p.stem for p in (self.data / "datasets").glob("*.txt"))

    def split(self, name: str) -> list[str]:
        """Task ids of a split, in file order (an optional `:tag` suffix is dropped)."""
        path = self.data / "datasets" / f"{name}.txt"
        if not re.fullmatch(r"[A-Za-z0-9_\-]{1,64}", name) or not path.is_file():
            raise BadInputError(f"unknown split {name!r}; available: {', '.join(self.splits()) or 'none'}")
        return [line.split(":", 1)[0].strip() for line in path.read_text().splitlines() if line.strip()]

    def task_dir(self, task_id: str) -> Path:
        path = self.data / "tasks" / task_id
        if not (path / "specs.json").is_file():
            raise UnknownTaskError(f"unknown task id {task_id!r}: no such task under {self.data / 'tasks'}")
        return path

    def has_task(self, task_id: str) -> bool:
        return (self.data / "tasks" / task_id / "specs.json").is_file()

    def task(self, task_id: str) -> TaskSpec:
        directory = self.task_dir(task_id)
        specs = json.loads((directory / "specs.json").read_text())
        gt = directory / "ground_truth"
        metadata = _read_json(gt / "metadata.json", {})
        tests = _read_json(gt / "test_data.json", None)
        return TaskSpec(
            task_id=task_id, instruction=specs["instruction"], supervisor=specs.get("supervisor", {}),
            datetime=str(specs.get("datetime", "")), difficulty=metadata.get("difficulty"),
            gold_apis=self.gold_apis(task_id), num_tests=len(tests) if isinstance(tests, list) else None,
        )

    def gold_apis(self, task_id: str) -> list[str]:
        """Gold required APIs (`app.api`): `required_apis.json`, else the regex over the solution."""
        gt = self.task_dir(task_id) / "ground_truth"
        listed = _read_json(gt / "required_apis.json", None)
        if isinstance(listed, list):
            return sorted(set(listed))
        solution = gt / "compiled_solution.py"
        if solution.is_file():
            return sorted(set(_GOLD_API_PATTERN.findall(solution.read_text())))
        return []

    def ground_truth(self, task_id: str) -> TaskGroundTruth:
        """The task's ground-truth values (answer, private and public data, required apps, solution source)."""
        gt = self.task_dir(task_id) / "ground_truth"
        solution = gt / "solution.py"
        private, public = _read_json(gt / "private_data.json", {}), _read_json(gt / "public_data.json", {})
        return TaskGroundTruth(
            answer=_read_json(gt / "answer.json", None),
            private_data=private if isinstance(private, dict) else {"value": private},
            public_data=public if isinstance(public, dict) else {"value": public},
            required_apps=[str(app) for app in _read_json(gt / "required_apps.json", [])],
            solution=solution.read_text() if solution.is_file() else "",
        )

    def solution_source(self, task_id: str) -> str:
        """The reference solution (defines `solution(apis, requester)`), canary line removed."""
        path = self.task_dir(task_id) / "ground_truth" / "solution.py"
        if not path.is_file():
            raise BadInputError(f"task {task_id} has no reference solution (minimal ground truth only)")
        lines = path.read_text().splitlines()
        return "\n".join(line for line in lines if not line.startswith(_CANARY_PREFIX)) + "\n"

    @cached_property
    def docs_version(self) -> DocsVersion:
        """The standard docs' files with their mtime and size: the key of everything parsed or built from them
        (a rebuilt world has a new one; a battle's fresh `WorldData` of the same world, the same)."""
        directory = self.data / "api_docs" / "standard"
        if not directory.is_dir():
            raise InfrastructureError(f"no API docs at {directory}: run `appworld-green world build`")
        return tuple((path, path.stat().st_mtime_ns, path.stat().st_size) for path in sorted(directory.glob("*.json")))

    @cached_property
    def api_docs(self) -> dict[str, dict[str, ApiDoc]]:
        """`{app: {api: ApiDoc}}` for every app with standard docs (parsed once per process and docs version)."""
        return parse_api_docs(self.docs_version)

    def paginated_apis(self) -> list[str]:
        """`app.api` of every API with a `page_index` parameter (found once per docs version, not once per battle)."""
        return list(_paginated_apis(self.docs_version))

    def api_doc(self, dotted: str) -> ApiDoc | None:
        app, _, api = dotted.partition(".")
        return self.api_docs.get(app, {}).get(api)

    def all_apis(self, skip_apps: tuple[str, ...] = ("api_docs",)) -> list[str]:
        """Every `app.api` in doc order, apps in name order, `skip_apps` left out."""
        return [doc.dotted for app, apis in self.api_docs.items() if app not in skip_apps for doc in apis.values()]


@lru_cache(maxsize=4)
def _paginated_apis(files: DocsVersion) -> tuple[str, ...]:
    return tuple(doc.dotted for apis in parse_api_docs(files).values() for doc in apis.values() if doc.is_paginated)


@lru_cache(maxsize=4)
def parse_api_docs(files: DocsVersion) -> dict[str, dict[str, ApiDoc]]:
    """Parse the standard docs of `files` (a `WorldData.docs_version`); cached by it, so a rebuilt world is read again.

    A battle builds a fresh `WorldData`; parsing 457 docs each time cost 0.05-0.2 s of Green time.
    Callers must treat the result as read-only.
    """
    docs: dict[str, dict[str, ApiDoc]] = {}
    for path, _, _ in files:
        raw = json.loads(path.read_text())
        docs[path.stem] = {name: ApiDoc(**{**doc, "app_name": path.stem, "api_name": name}) for name, doc in raw.items()}
    return docs


def _read_json(path: Path, default: Any) -> Any:
    if not path.is_file():
        return default
    return json.loads(path.read_text())
