"""AppWorld API docs -> MCP tool specs (`app__api`, description, JSON Schema of the inputs).

Schemas come from AppWorld's STANDARD docs (`data/api_docs/standard/<app>.json`), whose parameters
are `{name, type, required, description, default, constraints}`. Types map to JSON Schema
(`list[string]` -> array of strings, `a | b` -> anyOf); the constraint strings AppWorld generates
(`value >= 1.0, <= 20.0`, `length >= 1`, `value in ['a', 'b']`) become `minimum`/`maximum`,
`minLength`/`minItems`, `enum`; the rest (`value is email address`) stay as text in the
description. Arguments the API does not take are dropped before forwarding, as AppWorld's own
requester does by default (`raise_on_extra_parameters=False`): an agent that passes `access_token`
to an API that needs none is not refused.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from kernel.errors import BadInputError
from kernel.world_data import ApiDoc, WorldData
from mcp_gateway.call_api import DOCS_TOOLS

EXCLUDED_DEFAULT_APPS = ("api_docs", "admin")
"""Apps left out when no `--app-names` are given (as upstream `appworld serve mcp`), except that
AppWorld's three API-docs tools (`call_api.DOCS_TOOLS`) are always added: an advised scope offers them."""

_SCALAR_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean",
                 "object": "object", "dict": "object", "any": None}
_BOUND = re.compile(r"(>=|<=|>|<)\s*(-?[0-9.eE+]+)")


class ToolSpec(BaseModel):
    """One MCP tool and how to forward it to the APIs server."""

    name: str = Field(description="`<app>__<api>`.")
    app_name: str = Field(description="AppWorld app.")
    api_name: str = Field(description="API name inside the app.")
    method: str = Field(description="HTTP method, upper case.")
    path: str = Field(description="Path on the APIs server, `/<app>/...`, with `{param}` placeholders.")
    description: str = Field(description="Tool description shown to the model.")
    input_schema: dict[str, Any] = Field(description="JSON Schema (object) of the arguments.")
    path_params: list[str] = Field(default_factory=list, description="Arguments substituted into the path.")
    required: list[str] = Field(default_factory=list, description="Required argument names.")
    answers_list: bool = Field(default=False, description="Its docs' success answer is a list (a page of results).")

    @property
    def is_login(self) -> bool:
        """Login (`POST /<app>/auth/token`) takes a form-encoded body, not JSON."""
        return self.method == "POST" and self.path.endswith("/auth/token")


def default_app_names(world: WorldData) -> list[str]:
    """Every app with standard docs except `api_docs` and `admin`, in name order."""
    return [app for app in world.api_docs if app not in EXCLUDED_DEFAULT_APPS]


def build_tool_specs(world: WorldData, app_names: Iterable[str] | None = None) -> dict[str, ToolSpec]:
    """`{tool_name: ToolSpec}` for the given apps (default: `default_app_names`) plus the API-docs tools.

    Raises:
        BadInputError: an app name has no docs in this world.
    """
    docs = world.api_docs
    names = list(app_names) if app_names else default_app_names(world)
    unknown = [app for app in names if app not in docs]
    if unknown:
        raise BadInputError(f"unknown app name(s) {', '.join(unknown)}; apps with docs: {', '.join(docs)}")
    specs: dict[str, ToolSpec] = {}
    for app in names:
        for doc in docs[app].values():
            spec = tool_spec(doc)
            specs[spec.name] = spec
    for doc in docs.get("api_docs", {}).values():
        if doc.tool_name in DOCS_TOOLS:
            specs.setdefault(doc.tool_name, tool_spec(doc))
    return specs


def tool_spec(doc: ApiDoc) -> ToolSpec:
    """The tool of one API doc."""
    placeholders = re.findall(r"{(\w+)}", doc.path)
    properties = {p["name"]: parameter_schema(p) for p in doc.parameters}
    required = [p["name"] for p in doc.parameters if p.get("required")]
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return ToolSpec(
        name=doc.tool_name, app_name=doc.app_name, api_name=doc.api_name, method=doc.method.upper(),
        path=doc.path, description=doc.description or doc.tool_name, input_schema=schema,
        path_params=[name for name in placeholders if name in properties], required=required,
        answers_list=doc.answers_list,
    )


def parameter_schema(param: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema of one standard-doc parameter."""
    schema = type_schema(str(param.get("type", "")))
    description = str(param.get("description") or "")
    leftovers = [c for c in param.get("constraints") or [] if not _apply_constraint(schema, c)]
    if leftovers:
        description = f"{description} Constraints: {'; '.join(leftovers)}.".strip()
    if description:
        schema["description"] = description
    if param.get("default") is not None:
        schema["default"] = param["default"]
    return schema


def type_schema(type_name: str) -> dict[str, Any]:
    """`string` -> {"type": "string"}, `list[number]` -> array, `a | b` -> anyOf; unknown -> {}."""
    type_name = type_name.strip()
    if "|" in type_name:
        return {"anyOf": [type_schema(part) for part in type_name.split("|")]}
    match = re.fullmatch(r"list\[(.+)\]", type_name)
    if match:
        return {"type": "array", "items": type_schema(match.group(1))}
    if type_name == "list":
        return {"type": "array"}
    json_type = _SCALAR_TYPES.get(type_name)
    return {"type": json_type} if json_type else {}


def _apply_constraint(schema: dict[str, Any], constraint: str) -> bool:
    """Fold one AppWorld constraint string into `schema`; False if it has no JSON Schema form."""
    text = constraint.strip()
    if text.startswith("value in "):
        try:
            options = ast.literal_eval(text[len("value in "):])
        except (ValueError, SyntaxError):
            return False
        if isinstance(options, (list, tuple)) and options:
            schema["enum"] = list(options)
            return True
        return False
    kind = "value" if text.startswith("value ") else "length" if text.startswith("length ") else None
    bounds = _BOUND.findall(text)
    if kind is None or not bounds:
        return False
    is_array = schema.get("type") == "array"
    keys = {
        "value": {">=": "minimum", "<=": "maximum", ">": "exclusiveMinimum", "<": "exclusiveMaximum"},
        "length": {">=": "minItems" if is_array else "minLength", "<=": "maxItems" if is_array else "maxLength"},
    }[kind]
    for operator, number in bounds:
        key = keys.get(operator)
        if key is None:
            return False
        value = float(number)
        schema[key] = int(value) if kind == "length" or value.is_integer() and abs(value) < 2**53 else value
    return True
