"""Step 1: API docs generated from the installed apps (`data/api_docs/{standard,function_calling}`)."""

from __future__ import annotations

import os
from typing import Any

from appworld.apps import get_all_apps
from appworld.collections.api_docs import ApiDocCollection
from appworld.common.constants import CANARY_STRING

from builder.files import write_json


def build_api_docs(data_dir: str) -> ApiDocCollection:
    """Write both doc formats for every app but `admin` and return the collection.

    Writes the files directly: `ApiDocCollection.save()` would also need `openapi-spec-validator`.
    """
    collection = ApiDocCollection.build(load_apps=tuple(get_all_apps(skip_admin=True)), include_response_schemas=True)
    docs_dir = os.path.join(data_dir, "api_docs")
    for app_name, name_to_doc in collection.items():
        standard = {name: dict(doc, canary_string=CANARY_STRING) for name, doc in name_to_doc.items()}
        write_json(os.path.join(docs_dir, "standard", f"{app_name}.json"), standard)
        function_calling = collection.copy().keep_apps([app_name]).function_calling()
        write_json(os.path.join(docs_dir, "function_calling", f"{app_name}.json"), function_calling)
    return collection


def api_doc_rows(collection: ApiDocCollection) -> list[dict[str, Any]]:
    """One `api_docs.ApiDoc` row per API (the `api_docs` app serves docs from this table)."""
    return [
        {
            "app_name_": app_name, "api_name": api_name, "path": doc["path"], "method": doc["method"],
            "description": doc["description"], "parameters": doc["parameters"],
            "response_schemas": doc["response_schemas"],
        }
        for app_name, name_to_doc in collection.items()
        for api_name, doc in name_to_doc.items()
    ]
