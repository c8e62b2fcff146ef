"""`appworld-green trace BATTLE_DIR` and `appworld-green export RUN --format inspect|otlp --out FILE`.

`trace` prints a battle's trace (`<dir>/trace.jsonl`, docs/trace.md) with rich, verdict first, and says
where its page is; the file is found and its size checked by the run-folder reader (`green_agent.runfolder`).
`export` writes a run's battles as an Inspect AI eval log (`green_agent.trace.inspect_export`,
with inspect_ai's own models and writer: an optional extra, `make inspect`), or a run's or a battle's battles as
OpenTelemetry GenAI spans in OTLP/JSON, one trace per battle (`green_agent.trace.otel.export`); `--send` also
sends them to `OTEL_EXPORTER_OTLP_ENDPOINT` (`green_agent.trace.otel.live`). Exit codes: 0, or 2 for a
missing or unreadable input, or a run folder that breaks a reader's rule (the message says what to give).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from green_agent.runfolder.limits import TRACE
from green_agent.runfolder.reader import RunFolder
from green_agent.trace.reader import read_trace
from kernel.errors import BadInputError
from kernel.settings import Settings
from kernel.trace_record import TRACE_FILE


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("trace", help="print one battle's story (its trace.jsonl), verdict first")
    parser.add_argument("battle_dir", type=Path, help="a battle's folder (holding trace.jsonl), or the file")
    parser.set_defaults(func=run_trace)
    export = subparsers.add_parser("export", help="write a run's battles in another tool's format (inspect, otlp)")
    export.add_argument("run", type=Path, help="an eval run directory (holding results.json); otlp: or a battle's "
                        "folder")
    export.add_argument("--format", choices=("inspect", "otlp"), default="inspect",
                        help="inspect: an Inspect AI eval log; otlp: OpenTelemetry spans as OTLP/JSON lines")
    export.add_argument("--out", type=Path, required=True, help="the file to write (inspect: .eval or .json; "
                        "otlp: .jsonl)")
    export.add_argument("--send", action="store_true", help="otlp: also send the spans to "
                        "OTEL_EXPORTER_OTLP_ENDPOINT (OTLP/HTTP; OTEL_EXPORTER_OTLP_HEADERS honoured)")
    export.set_defaults(func=run_export)


def trace_file(path: Path) -> Path:
    """The trace file of a battle's folder (or the file itself), inside it and within its size limit."""
    file = path / TRACE_FILE if path.is_dir() else path
    found = RunFolder(file.parent).file(file, TRACE) if file.parent.is_dir() else None
    if found is None:
        raise BadInputError(f"{file} does not exist: give a battle's folder (it holds result.json and trace.jsonl)")
    return found


def run_trace(args: argparse.Namespace, settings: Settings) -> int:
    from green_agent.trace.terminal import print_trace

    file = trace_file(args.battle_dir)
    page = file.with_name("trace.html")
    print_trace(read_trace(file), page=str(page.resolve()) if page.is_file() else None)
    return 0


def run_export(args: argparse.Namespace, settings: Settings) -> int:
    if args.out.is_dir():
        raise BadInputError(f"--out {args.out} is a directory: give a file name (e.g. run.eval)")
    if args.format == "otlp":
        return run_export_otlp(args)
    if args.send:
        raise BadInputError("--send goes with --format otlp")
    from green_agent.trace.inspect_export import export_run

    samples = export_run(args.run, args.out)
    out = args.out.resolve()
    print(f"wrote an Inspect eval log of {samples} sample(s): {out}\n"
          f"view it: inspect view --log-dir {shlex.quote(str(out.parent))}  (then http://127.0.0.1:7575)",
          file=sys.stdout)
    return 0


def run_export_otlp(args: argparse.Namespace) -> int:
    from green_agent.trace.otel.export import export_otlp

    counts = export_otlp(args.run, args.out)
    print(f"wrote {counts.spans} span(s) of {counts.battles} battle(s) as OTLP/JSON: {args.out.resolve()}",
          file=sys.stdout)
    if args.send:
        from green_agent.trace.otel.live import send_file

        sent = send_file(args.out)
        print(f"sent {sent.sent} span(s) to {sent.endpoint}; {sent.dropped} dropped", file=sys.stdout)
        return 0 if sent.dropped == 0 else 3
    return 0
