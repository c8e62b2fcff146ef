"""The LLM Blue's native tools, as plain functions (`tools.py` is only the AgentBeats adapter).

- `read_api_doc(app, api)`: the documentation of one AppWorld API from the world's API docs.
- `call_appworld_tool(tool_name, arguments_json, mcp_url)`: one call of a gateway tool over the MCP
  Streamable HTTP client, in-process, for runs where the gateway is not attached to the agent as an
  SSE MCP server. Credentials travel as placeholders (see `secret_vault`), never as plain arguments.

Errors go back to the model as text (it can correct itself); nothing here raises into the SDK.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from blue_agent.errors import GatewayCallError
from blue_agent.gateway_client import GatewaySession
from blue_agent.secret_vault import MissingSecretError, SecretVault
from kernel.task_message import validate_http_url
from kernel.errors import GreenError
from kernel.settings import Settings, load_settings
from kernel.world_data import WorldData

MAX_ARGUMENTS_CHARS = 20_000
MAX_RESULT_CHARS = 30_000
_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_TOOL_NAME = re.compile(r"([a-z][a-z0-9_]{0,63}?)__([a-z][a-z0-9_]{0,63})")

_sessions: dict[str, GatewaySession] = {}
_vaults: dict[str, SecretVault] = {}
_sessions_lock = threading.Lock()


@lru_cache(maxsize=1)
def _settings() -> Settings:
    return load_settings()


@lru_cache(maxsize=4)
def _raw_docs(docs_dir: str, app_name: str) -> dict[str, Any]:
    return json.loads((Path(docs_dir) / f"{app_name}.json").read_text())


def read_api_doc(app_name: str, api_name: str, world: WorldData | None = None) -> str:
    """The doc of `app_name.api_name` as JSON text (description, parameters, response schemas)."""
    world = world or WorldData(_settings().appworld_root)
    if not (_NAME.fullmatch(app_name) and _NAME.fullmatch(api_name)):
        return "error: app_name and api_name must be lower-case identifiers, e.g. read_api_doc('spotify', 'login')"
    try:
        apps = world.api_docs
    except GreenError as exc:
        return f"error: {exc}"
    if app_name not in apps:
        return f"error: unknown app {app_name!r}; apps: {', '.join(sorted(apps))}"
    if api_name not in apps[app_name]:
        return f"error: {app_name} has no API {api_name!r}; its APIs: {', '.join(apps[app_name])}"
    raw = _raw_docs(str(world.data / "api_docs" / "standard"), app_name).get(api_name, {})
    doc = apps[app_name][api_name]
    shown = {"tool_name": doc.tool_name, "method": doc.method, "path": doc.path, "description": doc.description,
             "parameters": doc.parameters, "response_schemas": raw.get("response_schemas", {})}
    return json.dumps(shown, indent=1)


def resolve_mcp_url(mcp_url: str) -> str:
    """The Streamable HTTP endpoint to use: `mcp_url` if given, else Settings.appworld_mcp_url; `/mcp` appended."""
    url = validate_http_url(mcp_url.strip() or _settings().appworld_mcp_url, "MCP endpoint")
    return url if url.endswith("/mcp") else url + "/mcp"


async def call_appworld_tool(tool_name: str, arguments_json: str = "{}", mcp_url: str = "") -> str:
    """Call one AppWorld gateway tool; return its `{"response": ...}` JSON (or an `error: ...` line)."""
    try:
        url = resolve_mcp_url(mcp_url)
        arguments = _parse_call(tool_name, arguments_json)
        session, vault = await _session_for(url)
        payload = await session.acall_tool(tool_name, vault.fill(arguments))
    except (GreenError, MissingSecretError, ValueError) as exc:
        if isinstance(exc, GatewayCallError):
            _drop_session(mcp_url)
        return f"error: {exc}"
    response = payload.get("response")
    if not (isinstance(response, dict) and response.get("is_error")):
        payload = {**payload, "response": vault.capture(tool_name, response)}
    text = json.dumps(payload)
    if len(text) > MAX_RESULT_CHARS:
        return text[:MAX_RESULT_CHARS] + f"... [truncated {len(text) - MAX_RESULT_CHARS} chars; use page_index/page_limit]"
    return text


def _parse_call(tool_name: str, arguments_json: str) -> dict[str, Any]:
    if not _TOOL_NAME.fullmatch(tool_name):
        raise ValueError(f"tool_name {tool_name[:80]!r} is not of the form <app>__<api>, e.g. spotify__login")
    if len(arguments_json) > MAX_ARGUMENTS_CHARS:
        raise ValueError(f"arguments_json is {len(arguments_json)} chars; the limit is {MAX_ARGUMENTS_CHARS}")
    arguments = json.loads(arguments_json or "{}")
    if not isinstance(arguments, dict):
        raise ValueError('arguments_json must be a JSON object, e.g. {"page_index": 0}')
    return arguments


async def _session_for(url: str) -> tuple[GatewaySession, SecretVault]:
    with _sessions_lock:
        session = _sessions.get(url)
        vault = _vaults.setdefault(url, SecretVault())
    if session is None:
        session = await asyncio.to_thread(GatewaySession(url).open)
        with _sessions_lock:
            existing = _sessions.setdefault(url, session)
        if existing is not session:
            session.close()
            session = existing
    return session, vault


def _drop_session(mcp_url: str) -> None:
    """Forget a broken session so the next call reconnects."""
    try:
        url = resolve_mcp_url(mcp_url)
    except GreenError:
        return
    with _sessions_lock:
        session = _sessions.pop(url, None)
    if session is not None:
        session.close()


def close_sessions() -> None:
    """Close every open gateway session (tests; the agent process just exits)."""
    with _sessions_lock:
        sessions = list(_sessions.values())
        _sessions.clear()
        _vaults.clear()
    for session in sessions:
        session.close()
