"""Settings, read once at start-up from the environment (and `.env` when the CLI asks for it).

Every setting has a named default here; nothing else in the package reads `os.environ` for
configuration. `.env` is loaded only by entry points (`load_settings(env_file=...)`), never at import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


def _find_repo_root() -> Path:
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").is_file() and (parent / "scenarios").is_dir():
            return parent
    return Path.cwd()


REPO_ROOT = _find_repo_root()
SCENARIO_DIR = REPO_ROOT / "scenarios" / "appworld"

DEFAULT_APPWORLD_ROOT = REPO_ROOT / ".appworld"
DEFAULT_APPWORLD_PYTHON = REPO_ROOT / ".venv-appworld" / "bin" / "python"
DEFAULT_MCP_LOG_PATH = SCENARIO_DIR / "logs" / "mcp_tool_calls.jsonl"
DEFAULT_RUNS_DIR = REPO_ROOT / "runs"

DEFAULT_ENV_PORT = 8000
DEFAULT_APIS_PORT = 9000
DEFAULT_GATEWAY_PORT = 10000
SLOT_PORT_STRIDE = 10
"""Slot k listens on base port + k * stride (slot 0 uses the seed's 8000/9000/10000)."""
MAX_SLOTS = 8

DEFAULT_BACKEND_URL = "http://localhost:9002"
DEFAULT_BACKEND_MCP_PORT = 9001
DEFAULT_SCOPE_MODEL = "gpt-5-2025-08-07"
DEFAULT_MAX_PREDICTED_APIS = 20
DEFAULT_COMPLETION_DEADLINE_S = 20 * 60.0
DEFAULT_SPLIT = "dev"
ScopePolicy = Literal["advise", "enforce"]
"""How the gateway treats APIs outside a battle's scope: advise (callable, logged) | enforce (refused)."""
DEFAULT_SCOPE_POLICY: ScopePolicy = "advise"
Interaction = Literal["tools", "code"]
"""How the agent under test acts: tools (one MCP tool per API) | code (Python against `apis` in a sandboxed REPL,
the gateway's one `execute` tool)."""
DEFAULT_INTERACTION: Interaction = "tools"
SandboxChoice = Literal["auto", "bubblewrap", "landlock"]
"""Which sandbox code mode runs agent code in: auto (bubblewrap where it can make its namespaces, else the
landlock fallback) | bubblewrap | landlock (forced: for tests and diagnosis; refused if it cannot run here)."""
DEFAULT_CONFIDENCE_LEVEL = 0.95
DEFAULT_CODE_SPARES = 2
MAX_CODE_SPARES = 8


class Settings(BaseSettings):
    """All configuration of the Green Agent, its gateway and its CLI."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", case_sensitive=False)

    openai_api_key: SecretStr | None = Field(default=None, description="Enables the LLM scope predictor and LLM agents.")
    openai_base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint; unset means api.openai.com.")
    appworld_root: Path = Field(default=DEFAULT_APPWORLD_ROOT, description="AppWorld root; data is read from <root>/data.")
    appworld_python: Path = Field(default=DEFAULT_APPWORLD_PYTHON, description="Python of the AppWorld virtualenv.")
    agentbeats_mcp_log_path: Path = Field(default=DEFAULT_MCP_LOG_PATH, description="JSONL call log of the MCP gateway.")
    appworld_env_url: str = Field(default=f"http://127.0.0.1:{DEFAULT_ENV_PORT}", description="AppWorld environment server.")
    appworld_apis_url: str = Field(default=f"http://127.0.0.1:{DEFAULT_APIS_PORT}", description="AppWorld APIs server.")
    appworld_mcp_url: str = Field(default=f"http://127.0.0.1:{DEFAULT_GATEWAY_PORT}", description="Our AppWorld MCP gateway.")
    agentbeats_backend_url: str = Field(default=DEFAULT_BACKEND_URL, description="AgentBeats backend REST URL.")
    scope_predictor: str = Field(default="auto", description="auto | llm | lexical | ground_truth | all | none | upstream_first20 | appworld_agents (all, none: no scoping).")
    scope_policy: ScopePolicy = Field(default=DEFAULT_SCOPE_POLICY, description=(
        "advise: the scope is guidance (out-of-scope APIs stay callable, logged in_scope false); "
        "enforce: the gateway refuses APIs outside the scope."))
    interaction: Interaction = Field(default=DEFAULT_INTERACTION, description=(
        "tools: one MCP tool per API; code: the agent writes Python against `apis` in a sandboxed REPL "
        "(the gateway's `execute` tool)."))
    unsafe_code_in_process: bool = Field(default=False, description=(
        "UNSAFE: in code mode, run agent code as a plain process when no sandbox (bubblewrap) can run here; "
        "the agent can then read the task's answers. Recorded in every result."))
    code_sandbox: SandboxChoice = Field(default="auto", description=(
        "Code mode's sandbox: auto (bubblewrap, else the landlock fallback: an unprivileged uid + Landlock + "
        "seccomp + rlimits, for containers without namespaces) | bubblewrap | landlock (forced)."))
    code_spares: int = Field(default=DEFAULT_CODE_SPARES, ge=0, le=MAX_CODE_SPARES, description=(
        "Code mode: spare REPLs each gateway keeps importing for its next battles (~95 MiB each). 2: a battle's "
        "first execution finds its REPL ready even when battles follow each other within a second; 0: a battle's "
        "REPL starts importing as the battle starts (~1.5 CPU-s), ready before an agent that thinks for seconds "
        "first calls `execute`; the memory a code slot needs falls by a spare's share (docs/eval.md)."))
    scope_model: str = Field(default=DEFAULT_SCOPE_MODEL, description="Model of the LLM scope predictor.")
    max_predicted_apis: int = Field(default=DEFAULT_MAX_PREDICTED_APIS, ge=1, le=457, description="Scope size cap.")
    completion_deadline_s: float = Field(default=DEFAULT_COMPLETION_DEADLINE_S, gt=0, description="How long Blue may work.")
    default_split: str = Field(default=DEFAULT_SPLIT, description="Split used when a battle names a task by index.")
    runs_dir: Path = Field(default=DEFAULT_RUNS_DIR, description="Where battle and eval outputs go by default.")
    appworld_server_launch: Literal["fork", "exec"] = Field(default="fork", description=(
        "fork: AppWorld servers are forked from one warm process (a slot starts in ~2 s after the first); "
        "exec: each server is a fresh process (~10 CPU-s of imports each)."))
    confidence_level: float = Field(default=DEFAULT_CONFIDENCE_LEVEL, ge=0.5, lt=1, description=(
        "Level of every confidence interval in eval, report and compare outputs (--confidence overrides it)."))
    appworld_green_image_digest: str | None = Field(default=None, description=(
        "The container image's digest or revision; our Dockerfile sets it (build arg IMAGE_DIGEST). Recorded in "
        "every run's provenance; unset outside the image."))
    reference_blue_think_s: float = Field(default=0.0, ge=0, le=60, description=(
        "Benchmarks only: the reference Blue waits this long before each tool call, standing in for an "
        "LLM agent's model latency. 0 (no wait) everywhere else."))

    @property
    def appworld_data(self) -> Path:
        """`<appworld_root>/data`, the folder AppWorld serves."""
        return self.appworld_root / "data"


def load_settings(env_file: str | Path | None = None, **overrides: object) -> Settings:
    """Read settings from the environment, optionally a `.env` file, then explicit overrides."""
    if env_file is not None and Path(env_file).is_file():
        base = Settings(_env_file=str(env_file))  # type: ignore[call-arg]
    else:
        base = Settings()
    return base.model_copy(update={k: v for k, v in overrides.items() if v is not None})
