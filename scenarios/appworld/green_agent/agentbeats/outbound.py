"""What leaves the Green for the AgentBeats backend, made fit to publish: one function, `prepare`.

Every event the Green posts passes through `prepare(event)` (in `BackendReporter._post`), which
1. replaces secrets with `[REDACTED]` (the redaction module's registered values);
2. replaces absolute paths of the Green's machine: a path under a registered root becomes
   `<label>/rest` (e.g. `<runs>/<battle>/result.json`), any other absolute path under a common
   filesystem root (`/tmp`, `/home`, `/work`, `/usr`, ...) becomes `<local>/<its last part>`;
   URLs (`http://host:port/a/b`) are left alone;
3. replaces the scheme and host of every URL on this machine or its private network (loopback,
   `localhost`, `0.0.0.0`, 10/8, 172.16/12, 192.168/16, `*.local`) by `<local:PORT>`, keeping the
   path: the port is what a fix-it names, the address is nobody's business on a public page;
4. masks the per-battle capability token in gateway URLs (`/b/<token>/mcp` -> `/b/[REDACTED]/mcp`):
   it is the Blue's key to its battle, and the page is public;
5. rewrites the CLI's fix-its for the AgentBeats path, where settings are keys of the
   `[appworld]` table of scenario.toml, not command-line flags (`--env-url` -> `env_url`).
The full record, with its paths, stays in the run directory on disk.

Escaping (`kernel.untrusted`) hides a secret or a path from these scrubs (`sk\-…`), so the renderers
escape values that were prepared first: `prepare_result(result)` for the final result, `prepare` on the
Blue's calls before the feed renders them; `prepare` on the whole event then runs as a second pass.
"""

from __future__ import annotations

import re
import tempfile
import threading
from pathlib import Path
from typing import Any

from green_agent.models.result import BattleResult
from kernel.scrubber import scrub_data

FS_ROOTS = ("tmp", "home", "work", "root", "usr", "var", "opt", "etc", "srv", "mnt", "media", "run", "private",
            "Users", "data", "proc", "dev", "lib", "bin", "nix", "snap", "scratch")
_GENERIC_PATH = re.compile(r"(?<![\w.:/~\-<>])/(?:%s)(?:/[\w.@+~%%=,\-]+)+/?" % "|".join(FS_ROOTS))
SCENARIO_KEYS = {"--env-url": "env_url", "--apis-url": "apis_url", "--gateway-url": "gateway_url",
                 "--predictor": "predictor", "--scope-policy": "scope_policy", "--deadline": "deadline_s",
                 "--split": "split"}
_FLAG_WITH_VALUE = re.compile(r"(?<![\w-])(--predictor|--scope-policy|--split)\s+([A-Za-z0-9_]+)")
_FLAG = re.compile(r"(?<![\w-])(%s)(?![\w-])" % "|".join(map(re.escape, SCENARIO_KEYS)))
_WHERE = "in the [appworld] table of scenario.toml"
_LOCAL_URL = re.compile(
    r"\b(?:https?|wss?)://(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\]|10(?:\.\d{1,3}){3}"
    r"|172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2}|192\.168(?:\.\d{1,3}){2}|[\w-]+\.local)(?::(\d{1,5}))?(?![\w.-])",
    re.IGNORECASE)
_GATEWAY_TOKEN = re.compile(r"(/b/)[A-Za-z0-9_\-]{8,}(?=/|$)")
_ROOTS: dict[str, str] = {}
_LOCK = threading.Lock()


def register_local_root(path: str | Path, label: str) -> None:
    """Publish paths under `path` as `<label>/...` (longer roots win over the roots holding them)."""
    text = str(Path(path).expanduser().resolve())
    if text != "/":
        with _LOCK:
            _ROOTS[text] = label


def register_default_roots() -> None:
    """The temporary directory and the home directory of this process."""
    register_local_root(tempfile.gettempdir(), "tmp")
    register_local_root(Path.home(), "home")


def scrub_paths(text: str) -> str:
    """`text` with every absolute local path replaced (see the module docstring)."""
    with _LOCK:
        roots = sorted(_ROOTS.items(), key=lambda item: -len(item[0]))
    for root, label in roots:
        text = re.sub(r"(?<![\w.:/~\-])" + re.escape(root) + r"(?=/|\b|$)", f"<{label}>", text)
    return _GENERIC_PATH.sub(lambda m: "<local>/" + m.group(0).rstrip("/").rsplit("/", 1)[-1], text)


def scrub_local_urls(text: str) -> str:
    """`text` with each local URL's scheme and host replaced by `<local:PORT>` (`<local>` without a port)."""
    return _LOCAL_URL.sub(lambda m: f"<local:{m.group(1)}>" if m.group(1) else "<local>", text)


def scenario_fixits(text: str) -> str:
    """The CLI's `--flag [value]` fix-its as `key [= "value"]` of scenario.toml's [appworld] table."""
    text = _FLAG_WITH_VALUE.sub(lambda m: f'`{SCENARIO_KEYS[m.group(1)]} = "{m.group(2)}"` {_WHERE}', text)
    return _FLAG.sub(lambda m: f"`{SCENARIO_KEYS[m.group(1)]}` {_WHERE}", text)


def _texts(value: Any) -> Any:
    if isinstance(value, str):
        return scenario_fixits(scrub_local_urls(_GATEWAY_TOKEN.sub(r"\1[REDACTED]", scrub_paths(value))))
    if isinstance(value, dict):
        return {_texts(k) if isinstance(k, str) else k: _texts(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_texts(v) for v in value]
    return value


def prepare(event: dict[str, Any]) -> dict[str, Any]:
    """The event as it may be posted: secrets and battle tokens redacted, local paths and URLs replaced, scenario.toml
    fix-its."""
    return _texts(scrub_data(event))


def prepare_result(result: BattleResult) -> BattleResult:
    """A copy of `result` with every string prepared as `prepare` does (render from this, then escape)."""
    return BattleResult.model_validate(prepare(result.model_dump(mode="json")))
