"""Read a Phoenix project's spans with Phoenix's own client and print them as JSON (run by .venv-phoenix's Python).

`phoenix_spans.py BASE_URL PROJECT` prints a list of spans: name, span_kind (Phoenix's: AGENT, TOOL, ...),
span_id, trace_id, parent_id, status_code, attributes (flattened back to dotted keys: Phoenix's dataframe nests
them one level per dot) and events. Used by tests/test_trace_otlp_phoenix.py, whose virtualenv has no Phoenix.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from phoenix.client import Client


def flat(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            flat(f"{prefix}.{key}", inner, out)
    elif value is not None and not (isinstance(value, float) and math.isnan(value)):
        out[prefix] = value


def main(base_url: str, project: str) -> None:
    frame = Client(base_url=base_url).spans.get_spans_dataframe(project_identifier=project, limit=100_000)
    spans = []
    for span_id, row in frame.iterrows():
        attributes: dict[str, Any] = {}
        for column, value in row.items():
            if str(column).startswith("attributes."):
                flat(str(column)[len("attributes."):], value, attributes)
        parent = row.get("parent_id")
        spans.append({"name": row["name"], "span_kind": row["span_kind"], "span_id": span_id,
                      "trace_id": row["context.trace_id"], "parent_id": parent if isinstance(parent, str) else None,
                      "status_code": row["status_code"], "attributes": attributes,
                      "events": list(row["events"]) if row.get("events") is not None else []})
    print(json.dumps(spans, default=str))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
