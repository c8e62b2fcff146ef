"""The leaderboard repository kit (`leaderboard/`): read its files, merge shard results, run its queries.

What agentbeats.dev and the leaderboard template (RDI-Foundation/agentbeats-leaderboard-template,
May 2026) do with a listed green, reproduced here so it can be checked before anyone lists us:
- `load_scenario(path)`: `scenario.json5`, checked for the template's shape (components `gateway`
  with `assessment_config` + `participant_roles`, bindings to `#gateway.green` / `#gateway.purple1`,
  `exports.results`, `metadata.agentbeats_ids`);
- `merge_shards(paths, participants)`: the workflow's merge, `jq -s --argjson participants ... '{status:
  (all completed: completed; any completed: partial; else failed), participants, results: [.[].results[]]}'`;
  a shard file that is missing or not JSON stops it with the shard's name (the workflow also stops);
- `load_queries(path)` / `run_queries(queries, results_dir)`: the leaderboard's DuckDB queries, a JSON
  list of `{"name", "query"}` read over `results/*.json` (relative to the results directory's parent).
Bad input raises `BadInputError` with one sentence naming the file and where.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from kernel.errors import BadInputError

RESULTS_GLOB = "results/*.json"


class Query(BaseModel):
    name: str = Field(min_length=1)
    query: str = Field(min_length=1)


class QueryOutput(BaseModel):
    name: str
    columns: list[str]
    rows: list[tuple[Any, ...]]


def load_json5(path: Path) -> Any:
    import json5

    try:
        text = path.read_text()
    except OSError as exc:
        raise BadInputError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return json5.loads(text)
    except ValueError as exc:
        raise BadInputError(f"{path} is not valid JSON5: {exc}") from None


def load_scenario(path: Path) -> dict[str, Any]:
    """scenario.json5, checked for the template's shape; BadInputError naming the first thing missing."""
    data = load_json5(path)
    problems = _scenario_problems(data)
    if problems:
        raise BadInputError(f"{path}: {problems[0]}")
    return data


def _scenario_problems(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return ["the scenario is not an object"]
    components = data.get("components")
    gateway = components.get("gateway") if isinstance(components, dict) else None
    config = gateway.get("config") if isinstance(gateway, dict) else None
    if not isinstance(config, dict):
        return ["components.gateway.config is missing"]
    problems = [f"components.gateway.config.{key} is missing or not an object"
                for key in ("assessment_config", "participant_roles") if not isinstance(config.get(key), dict)]
    targets = {b.get("to") for b in data.get("bindings") or [] if isinstance(b, dict)}
    problems += [f"no binding to {slot}" for slot in ("#gateway.green", "#gateway.purple1") if slot not in targets]
    if not isinstance(data.get("exports"), dict) or "results" not in data["exports"]:
        problems.append("exports.results is missing")
    ids = (data.get("metadata") or {}).get("agentbeats_ids") if isinstance(data.get("metadata"), dict) else None
    if not isinstance(ids, dict):
        problems.append("metadata.agentbeats_ids is missing")
    return problems


def merge_shards(paths: list[Path], participants: dict[str, Any]) -> dict[str, Any]:
    """The template's merge of the shards' gateway results files, in order (see the module docstring)."""
    shards = []
    for index, path in enumerate(paths):
        if not path.is_file():
            raise BadInputError(f"missing results for shard {index}: {path} does not exist (every shard of a "
                                "run must be present; the template's workflow stops here too)")
        try:
            shard = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise BadInputError(f"results of shard {index} ({path}) are not JSON: {exc}") from None
        if not isinstance(shard, dict) or not isinstance(shard.get("results"), list):
            raise BadInputError(f"results of shard {index} ({path}) have no `results` list")
        shards.append(shard)
    statuses = [s.get("status") for s in shards]
    status = ("completed" if all(s == "completed" for s in statuses)
              else "partial" if any(s == "completed" for s in statuses) else "failed")
    return {"status": status, "participants": participants, "results": [r for s in shards for r in s["results"]]}


def load_queries(path: Path) -> list[Query]:
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise BadInputError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise BadInputError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, list) or not data:
        raise BadInputError(f"{path}: the queries must be a non-empty JSON list of {{\"name\", \"query\"}}")
    queries = []
    for index, item in enumerate(data):
        try:
            queries.append(Query.model_validate(item))
        except ValidationError as exc:
            error = exc.errors()[0]
            raise BadInputError(f"{path}: query {index}: {'.'.join(map(str, error['loc'])) or 'item'}: "
                                f"{error['msg']}") from None
        if RESULTS_GLOB not in item["query"]:
            raise BadInputError(f"{path}: query {index} ({item['name']!r}) does not read '{RESULTS_GLOB}'")
    return queries


def run_queries(queries: list[Query], root: Path) -> list[QueryOutput]:
    """Every query with DuckDB over `root/results/*.json`; the first column must be `id`."""
    import duckdb

    outputs = []
    with duckdb.connect(":memory:") as db:
        db.execute("SET file_search_path = ?", [str(root)])
        for query in queries:
            try:
                cursor = db.execute(query.query)
            except duckdb.Error as exc:
                raise BadInputError(f"query {query.name!r} failed: {str(exc).splitlines()[0]}") from None
            columns = [d[0] for d in cursor.description]
            if columns[0] != "id":
                raise BadInputError(f"query {query.name!r}: the first column is {columns[0]!r}, not `id`")
            outputs.append(QueryOutput(name=query.name, columns=columns, rows=cursor.fetchall()))
    return outputs
