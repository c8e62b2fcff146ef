"""The secrets of one world slot, held by the Green's side only (never by the agent under test).

- `guard`: AppWorld's two servers answer only requests that carry it (`world/serve.py`'s guard):
  the Green's and the gateway's requests send it as the `X-AppWorld-Guard` header; the env server's
  own calls to the APIs server carry it as the path prefix of the `remote_apis_url` it is given.
- `control_secret`: the bearer secret of the MCP gateway's control listener (set/clear the battle,
  completion), which is a listener apart from the Blue-facing one; `control_port` is where it
  listens, written by the gateway once it has bound it.

They live in one JSON file per slot, keyed by the APIs server's port, in a directory only this OS
user can enter (`0700`, the file `0600`), so every Green process of the user (a CLI battle, `eval`,
the AgentBeats Green, a `world up` slot started earlier) finds them, and nothing is ever passed in
argv (which every local user can list). A Blue running as the same OS user can read them: that is
outside what this protects against (docs/security.md).
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr

from kernel.atomic import atomic_write_text
from kernel.errors import InfrastructureError
from kernel.scrubber import register_secrets

PRIVATE_DIR = Path(tempfile.gettempdir()) / f"appworld-green-{os.getuid()}"
"""Per OS user; also holds the machine-wide slot locks."""
CREDENTIALS_DIR = PRIVATE_DIR / "slots"
GUARD_HEADER = "X-AppWorld-Guard"
GUARD_PATH_PREFIX = "/_guard/"
CONTROL_AUTH_HEADER = "Authorization"


def new_secret() -> str:
    """An unguessable token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


class SlotCredentials(BaseModel):
    """What one slot's Green-side processes share (see the module docstring)."""

    guard: SecretStr = Field(default_factory=lambda: SecretStr(new_secret()), description="AppWorld servers' secret.")
    control_secret: SecretStr = Field(default_factory=lambda: SecretStr(new_secret()),
                                      description="Bearer secret of the gateway's control listener.")
    control_port: int | None = Field(default=None, description="The gateway's control listener (127.0.0.1).")

    def guard_headers(self) -> dict[str, str]:
        return {GUARD_HEADER: self.guard.get_secret_value()}

    def guarded_url(self, base_url: str) -> str:
        """`base_url` with the guard as a path prefix (for clients that cannot send a header)."""
        return base_url.rstrip("/") + GUARD_PATH_PREFIX + self.guard.get_secret_value()

    def control_headers(self) -> dict[str, str]:
        return {CONTROL_AUTH_HEADER: f"Bearer {self.control_secret.get_secret_value()}"}

    @property
    def control_url(self) -> str | None:
        return f"http://127.0.0.1:{self.control_port}" if self.control_port else None

    def values(self) -> list[str]:
        """The secret values, for scrubbing."""
        return [self.guard.get_secret_value(), self.control_secret.get_secret_value()]

    def model_post_init(self, __context: object) -> None:
        register_secrets(self.values())  # whoever holds them never prints or writes them


def credentials_path(apis_port: int) -> Path:
    return CREDENTIALS_DIR / f"apis-{int(apis_port)}.json"


def port_of(url: str) -> int:
    port = urlsplit(url).port
    if port is None:
        raise InfrastructureError(f"{url} names no port; AppWorld servers of a slot listen on explicit ports")
    return port


def save_credentials(apis_port: int, credentials: SlotCredentials) -> Path:
    """Write (atomically, 0600) the credentials of the slot whose APIs server listens on `apis_port`."""
    _private_dir()
    path = credentials_path(apis_port)
    body = json.dumps({"guard": credentials.guard.get_secret_value(),
                       "control_secret": credentials.control_secret.get_secret_value(),
                       "control_port": credentials.control_port})
    return atomic_write_text(path, body)  # its temporary file comes from mkstemp: 0600 from the start


def create_credentials(apis_port: int) -> SlotCredentials:
    """New secrets for a slot about to start, saved where its other processes will look."""
    credentials = SlotCredentials()
    save_credentials(apis_port, credentials)
    return credentials


def load_credentials(apis_url: str) -> SlotCredentials | None:
    """The credentials of the slot whose APIs server is `apis_url`, or None if it has none here."""
    path = credentials_path(port_of(apis_url))
    try:
        return SlotCredentials.model_validate_json(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InfrastructureError(f"the slot credentials at {path} cannot be read ({type(exc).__name__}); "
                                  "restart the slot (`appworld-green world down` and `up`)") from None


def require_credentials(apis_url: str) -> SlotCredentials:
    found = load_credentials(apis_url)
    if found is None:
        raise InfrastructureError(f"no credentials for the world slot whose APIs server is {apis_url} "
                                  f"(looked for {credentials_path(port_of(apis_url))}): start the slot with "
                                  "`appworld-green world up` (or let `battle`/`eval` start one)")
    return found


def remove_credentials(apis_port: int) -> None:
    credentials_path(apis_port).unlink(missing_ok=True)


def _private_dir() -> Path:
    for directory in (PRIVATE_DIR, CREDENTIALS_DIR):
        directory.mkdir(mode=0o700, exist_ok=True)
        if directory.stat().st_uid != os.getuid():
            raise InfrastructureError(f"{directory} belongs to another user; remove it or set TMPDIR")
        os.chmod(directory, 0o700)
    return CREDENTIALS_DIR
