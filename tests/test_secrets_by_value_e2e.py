"""Secrets by value, end to end (issue 50): an agent that prints the passwords it read, bare, leaves them in no file.

A hostile agent reads the supervisor's account passwords (`supervisor__show_account_passwords`), logs in with
one, and shows the passwords and the access token AppWorld issued it as bare values (never under a `password`
or `access_token` key, where redaction by key would find them): in a tool call's arguments, in its messages,
printed by its code. Through both doors and in both modes, with the real servers, gateway, sandbox and bridge:
- the MCP door (`appworld-green eval` with `tests/trace_blue.py` in mode `leak` / `leak_code`): every file of
  the run folder (results, each battle's trace, page, result, call log, archived AppWorld logs and
  `environment_io.md`, the slot's logs: the gateway's call and trace logs, the servers' logs), the
  Inspect export and the OTLP export (`export --format otlp`: every span's attributes and events) written into it
  hold none of the values, raw or JSON- or HTML-escaped;
- the A2A door (`serve`, `tests/a2a_purples.py` in mode `leak` / `leak_code`, through the in-band bridge): the
  same for the assessment's run folder, the bridge's trace log and its OTLP export included.
The story stays readable: the calls and messages are there with `[REDACTED]` where a value was, and
`"token_type": "Bearer"` (no secret) is shown as AppWorld sent it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from a2a_purples import HostilePurple
from a2a_support import assess, env, first, green  # noqa: F401 - fixtures
from faults_support import answers, wait_until
from green_agent.models.eval_run import EvalResults
from green_agent.trace.reader import read_trace
from kernel.ports import free_port
from leak_support import assert_absent
from test_batch_e2e import CLI, assert_nothing_left, cli_env, slot_ports

pytestmark = pytest.mark.e2e
TRACE_BLUE = Path(__file__).resolve().parent / "trace_blue.py"
TASK = "f0a1c01_1"


@contextmanager
def leaking_blue(mode: str, seen: Path) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, str(TRACE_BLUE), "--port", str(port), "--mode", mode,
                                "--seen", str(seen)], start_new_session=True)
    try:
        wait_until(lambda: answers(f"http://127.0.0.1:{port}/.well-known/agent-card.json"), 20, "leaking blue up")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.kill()
        process.wait(timeout=10)


def export_inspect(out: Path, root: Path, tmp: Path) -> None:
    """The run as an Inspect log, written into the run folder (JSON, so the scan reads its text)."""
    done = subprocess.run([CLI, "export", str(out), "--format", "inspect", "--out", str(out / "inspect.json")],
                          capture_output=True, text=True, timeout=300, env=cli_env(root, tmp))
    assert done.returncode == 0, done.stderr[-2000:]


def export_otlp(path: Path, root: Path, tmp: Path) -> str:
    """The run's (or a battle folder's) OpenTelemetry spans as OTLP/JSON, written into it; the file's text."""
    out = path / "otlp.jsonl"
    done = subprocess.run([CLI, "export", str(path), "--format", "otlp", "--out", str(out)],
                          capture_output=True, text=True, timeout=300, env=cli_env(root, tmp))
    assert done.returncode == 0, done.stderr[-2000:]
    text = out.read_text()
    assert "[REDACTED]" in text and "gen_ai.tool.call.result" in text, "the spans tell the story, secrets redacted"
    return text


@contextmanager
def otlp_sink(folder: Path) -> Iterator[str]:
    """A stand-in OTLP/HTTP collector on loopback that keeps each request's body (protobuf, uncompressed: strings
    as UTF-8 bytes, so the scan reads them) as a file in `folder` and answers 200, as a collector does."""
    folder.mkdir(parents=True, exist_ok=True)

    class Sink(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            (folder / f"{len(list(folder.iterdir()))}.pb").write_bytes(body)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Sink)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("interaction", ["tools", "code"])
def test_a_bare_password_the_agent_showed_is_in_no_file_of_an_eval(interaction: str, tmp_path: Path,
                                                                   appworld_root: Path) -> None:
    out, seen, sent = tmp_path / "run", tmp_path / "seen.json", tmp_path / "otlp-live"
    ports_arg, ports = slot_ports(1)
    with leaking_blue("leak" if interaction == "tools" else "leak_code", seen) as url, otlp_sink(sent) as collector:
        done = subprocess.run([CLI, "eval", "--task-ids", TASK, "--blue", url, "--predictor", "ground_truth",
                               "--workers", "1", "--out", str(out), "--slot-ports", ports_arg, "--deadline", "120",
                               "--max-infra-retries", "0", "--interaction", interaction],
                              capture_output=True, text=True, timeout=600,
                              env={**cli_env(appworld_root, tmp_path), "OTEL_EXPORTER_OTLP_ENDPOINT": collector})
    assert done.returncode == 0, done.stderr[-3000:]
    assert_nothing_left(ports)
    values = json.loads(seen.read_text())
    assert len(values) >= 5 and values[0].startswith("eyJ"), values  # the token, then the passwords
    results = EvalResults.model_validate_json((out / "results.json").read_text())
    folder = out / Path(results.rows[0].result_path).parent
    records = read_trace(folder / "trace.jsonl")
    reply = next(r for r in records if r.kind == "agent_reply")
    assert reply.text.startswith("What I read: [REDACTED] [REDACTED]"), reply.text[:200]
    if interaction == "code":
        printed = next(r for r in records if r.kind == "execution")
        assert printed.result.startswith("[REDACTED]\n[REDACTED]\n"), printed.result[:200]
        assert "environment_io.md" in {p.name for p in folder.rglob("*")}
    else:
        login = next(r for r in records if r.tool == "simple_note__login")
        assert '"token_type": "Bearer"' in login.result and '"access_token": "[REDACTED]"' in login.result
        search = next(r for r in records if r.tool == "simple_note__search_notes")
        assert search.arguments["query"] == "[REDACTED]"
    logs = {p.name for p in (out / "logs").rglob("*") if p.is_file()}
    assert any(name.endswith(".trace.jsonl") for name in logs), logs  # the gateway's trace log is in the run
    export_inspect(out, appworld_root, tmp_path)
    export_otlp(out, appworld_root, tmp_path)
    assert [p.name for p in sent.iterdir()] == ["0.pb"], "the battle's spans were sent live, in one request"
    assert b"gen_ai.tool.call.result" in (sent / "0.pb").read_bytes()
    assert assert_absent(values, out, sent) > 10


@pytest.mark.parametrize("interaction", ["tools", "code"])
def test_a_bare_password_the_purple_showed_is_in_no_file_of_an_assessment(  # noqa: F811
        interaction: str, green, appworld_root: Path) -> None:  # noqa: ANN001, F811
    task = first(appworld_root, 1)[0]
    mode = "leak" if interaction == "tools" else "leak_code"
    with HostilePurple({task: mode}) as purple:
        outcome = assess(green.url, {"participants": {"agent": purple.url}, "config": {
            "task_ids": [task], "interaction": interaction, "predictor": "ground_truth", "max_steps": 8}})
    assert outcome.state == "completed" and outcome.data is not None, outcome.statuses
    values = purple.seen
    assert len(values) >= 5 and any(v.startswith("eyJ") for v in values), values
    run = Path(outcome.data["run_dir"])
    records = read_trace(run / "tasks" / task / "trace.jsonl")
    said = [r for r in records if r.kind == "agent_message"]
    assert len(said) >= 3 and any("[REDACTED]" in (r.text or "") for r in said), [r.text for r in said]
    sent = [r.text or "" for r in records if r.kind == "green_message"]
    if interaction == "code":
        assert any(t.startswith("Output:\n[REDACTED]\n[REDACTED]") for t in sent), sent
    else:
        assert any('"token_type": "Bearer"' in t for t in sent), sent
    assert any(p.name == "bridge.trace.jsonl" for p in run.rglob("*")), "the bridge's trace log is in the run"
    export_otlp(run / "tasks" / task, appworld_root, run)
    assert assert_absent(values, run) > 10
