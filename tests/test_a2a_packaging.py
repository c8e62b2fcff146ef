"""The platform packaging, as far as it can be checked without Docker or a registry.

The image cannot be built here (no registry, no Docker): the Dockerfile's ENTRYPOINT + CMD command line
is run outside a container (the image's /app/.venv/bin/appworld-green replaced by this checkout's CLI)
and must answer a valid card at the --card-url it was given; the Amber manifest is parsed (a JSON5
subset: comments, bare keys, trailing commas) and checked against what the platform needs.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import httpx
import pytest

from green_agent.a2a.request import AGENT_ROLE, AssessmentConfig
from green_agent.runtime.processes import ManagedProcess
from kernel.ports import free_port
from kernel.settings import REPO_ROOT

CLI = str(Path(sys.executable).parent / "appworld-green")


def read_json5(text: str) -> object:
    """The JSON5 subset our manifest uses -> Python (line comments, bare keys, trailing commas)."""
    text = re.sub(r'("(?:[^"\\]|\\.)*")|//[^\n]*', lambda m: m.group(1) or "", text)
    text = re.sub(r'("(?:[^"\\]|\\.)*")|([A-Za-z_][A-Za-z0-9_]*)(\s*:)', lambda m: m.group(1) or f'"{m.group(2)}"{m.group(3)}',
                  text)
    text = re.sub(r",(\s*[}\]])", r"\1", text)
    return json.loads(text)


def test_the_manifest_has_what_the_platform_needs() -> None:
    manifest = read_json5((REPO_ROOT / "amber-manifest.json5").read_text())
    program = manifest["program"]
    assert program["network"]["endpoints"] == [{"name": "a2a_endpoint", "port": 9009}]
    assert manifest["provides"]["a2a"] == {"kind": "a2a", "endpoint": "a2a_endpoint"}
    assert manifest["slots"]["proxy"] == {"kind": "a2a"}
    assert any("${slots.proxy.url}" in value for value in program["env"].values())
    assert "--port 9009" in program["entrypoint"] and "serve" in program["entrypoint"]
    assert manifest["metadata"]["participant_roles"] == [AGENT_ROLE]
    AssessmentConfig.model_validate(manifest["metadata"]["assessment_config"])  # only keys the Green accepts


def test_the_json5_reader_is_strict_enough_to_fail() -> None:
    assert read_json5('{a: "x // not a comment", b: [1, 2,], // c\n}') == {"a": "x // not a comment", "b": [1, 2]}
    with pytest.raises(ValueError):
        read_json5("{a: }")


@pytest.mark.e2e
def test_the_images_entrypoint_command_line_serves_the_card_at_the_card_url(tmp_path: Path) -> None:
    text = (REPO_ROOT / "Dockerfile").read_text()
    entrypoint = json.loads(re.search(r"^ENTRYPOINT (\[.*\])$", text, re.MULTILINE).group(1))
    cmd = json.loads(re.search(r"^CMD (\[.*\])$", text, re.MULTILINE).group(1))
    assert entrypoint[0] == "/app/.venv/bin/appworld-green" and cmd[cmd.index("--port") + 1] == "9009"
    port = free_port()
    args = [*entrypoint[1:], *cmd]
    args[args.index("--port") + 1] = str(port)
    args[args.index("--host") + 1] = "127.0.0.1"  # loopback only here; the image binds 0.0.0.0
    card_url = f"http://green.example:{port}/"
    process = ManagedProcess("green", [CLI, *args, "--card-url", card_url], tmp_path / "green.log",
                             env={**os.environ, "RUNS_DIR": str(tmp_path / "runs")})
    started = time.monotonic()
    process.start()
    try:
        process.wait_ready(f"http://127.0.0.1:{port}/.well-known/agent-card.json", timeout_s=30)
        took = time.monotonic() - started
        card = httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json").json()
    finally:
        process.stop()
    assert card["url"] == card_url and card["capabilities"]["streaming"] is True
    assert took < 10.0, f"the card answered {took:.1f} s after the process started (the gateway waits ~30 s)"
