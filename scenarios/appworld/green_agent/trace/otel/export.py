"""`appworld-green export --format otlp`: a battle folder or a whole run as OTLP/JSON, one trace per battle.

`folder_spans(path)` reads one battle folder (`result.json` and `trace.jsonl`, through the run-folder reader:
sizes checked, nothing outside the folder read) and returns its spans (`battle_spans`), every string scrubbed
again of the secrets this process knows for the battle (`kernel.scrubber`, as every run file is; the trace and
result were scrubbed when they were written). `run_battles(path)` is every battle of a run (results.json's rows)
or the one battle of a battle folder. `export_otlp(path, out)` writes them as JSON Lines, one OTLP/JSON request
a battle (`otlp_json`), and returns the counts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from green_agent.runfolder.layout import RESULT_FILE, RESULTS_FILE
from green_agent.runfolder.limits import RESULT, TRACE
from green_agent.runfolder.reader import RunFolder, read_eval_results, read_json
from green_agent.trace.otel.battle_spans import battle_spans
from green_agent.trace.otel.otlp_json import request
from green_agent.trace.otel.spans import AttributeValue, Span
from green_agent.trace.reader import read_trace
from kernel.atomic import atomic_write_text
from kernel.errors import BadInputError, RunFolderError
from kernel.scrubber import scrub_data
from kernel.trace_record import TRACE_FILE


class ExportCounts(NamedTuple):
    """What an export wrote."""

    battles: int
    spans: int


def _texts(span: Span) -> list[str]:
    """Every text of a span that came from the battle (its name, status, string attributes and event attributes),
    in a fixed order: the ids, times, numbers and our own attribute names are left out."""
    texts = [span.name, span.status_message or ""]
    texts += [v for v in span.attributes.values() if isinstance(v, str)]
    for event in span.events:
        texts += [v for v in event.attributes.values() if isinstance(v, str)]
    return texts


def _with_texts(span: Span, clean: Iterator[str]) -> Span:
    """`span` with its texts (in `_texts`'s order) taken from `clean`."""
    def attrs(values: dict[str, AttributeValue]) -> dict[str, AttributeValue]:
        return {k: next(clean) if isinstance(v, str) else v for k, v in values.items()}

    name, status = next(clean), next(clean)
    return span.model_copy(update={
        "name": name, "status_message": status or None, "attributes": attrs(span.attributes),
        "events": [e.model_copy(update={"attributes": attrs(e.attributes)}) for e in span.events]})


def scrubbed_spans(spans: list[Span], battle_id: str) -> list[Span]:
    """`spans` with every secret value known for the battle (and this process) replaced in every text, ids and
    times kept (one `scrub_data` over all the battle's texts: the known values are looked for once)."""
    clean = iter(scrub_data([t for s in spans for t in _texts(s)], battle_id))
    return [_with_texts(s, clean) for s in spans]


def _paraphrase(path: Path) -> object:
    """result.json's `paraphrase` (a field of newer results; None when it is absent or unreadable)."""
    try:
        data = read_json(path, RESULT)
    except (OSError, RunFolderError):
        return None
    return data.get("paraphrase") if isinstance(data, dict) else None


def folder_spans(battle_dir: Path, run: RunFolder | None = None) -> list[Span]:
    """One battle folder's spans, scrubbed (see the module docstring). BadInputError if it holds no battle."""
    run = run or RunFolder(battle_dir)
    result = run.result_at(battle_dir / RESULT_FILE).result
    trace = run.file(battle_dir / TRACE_FILE, TRACE)
    records = read_trace(trace) if trace is not None else []
    if result is None and not records:
        raise BadInputError(f"{battle_dir} holds no battle (no readable result.json or trace.jsonl)")
    battle_id = result.battle_id if result else records[0].battle_id
    paraphrase = getattr(result, "paraphrase", None) if hasattr(result, "paraphrase") else _paraphrase(
        battle_dir / RESULT_FILE)  # a result model without the field yet: read it from the file
    spans = battle_spans(result, records, battle_id, paraphrase)
    return scrubbed_spans(spans, battle_id)


def run_battles(path: Path) -> list[list[Span]]:
    """Each battle's spans: the battle folder `path`, or every battle of the run `path` (its results.json)."""
    path = Path(path)
    if path.is_dir() and (path / RESULT_FILE).is_file() and not (path / RESULTS_FILE).is_file():
        return [folder_spans(path)]
    results = read_eval_results(path)
    run = RunFolder(path if path.is_dir() else path.parent)
    return [folder_spans((run.path / row.result_path).parent, run) for row in results.rows]


def export_otlp(path: Path, out: Path) -> ExportCounts:
    """Write `path`'s battles to `out` as OTLP/JSON Lines (one trace, one line, per battle)."""
    battles = run_battles(path)
    lines = [json.dumps(request(spans), ensure_ascii=False) for spans in battles]
    atomic_write_text(Path(out), "".join(line + "\n" for line in lines))
    return ExportCounts(len(battles), sum(len(s) for s in battles))
