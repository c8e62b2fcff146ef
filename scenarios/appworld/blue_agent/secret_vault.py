"""Keep AppWorld credentials out of the LLM Blue's native tool arguments.

The AgentBeats SDK posts every native tool call's arguments to the backend (shown in the battle
UI), so `call_appworld_tool` must never receive a password or an access token in clear. Instead:

- `supervisor__show_account_passwords` results are stored here and returned to the model with
  each password replaced by the placeholder `{{password:<account_name>}}`;
- `<app>__login` results are stored here and the token is returned as `{{access_token:<app>}}`;
- placeholders in later arguments are filled in just before the call goes to the gateway.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from kernel.api_names import api_name

_PLACEHOLDER = re.compile(r"\{\{(password|access_token):([a-z_]+)\}\}")
PASSWORDS_TOOL = "supervisor__show_account_passwords"


class MissingSecretError(KeyError):
    """A placeholder names a secret the vault does not hold yet."""


class SecretVault:
    """Passwords and access tokens seen by `call_appworld_tool`, per gateway endpoint."""

    def __init__(self) -> None:
        self._secrets: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def fill(self, value: Any) -> Any:
        """Return `value` with every `{{kind:app}}` placeholder in its strings replaced by the secret."""
        if isinstance(value, str):
            return _PLACEHOLDER.sub(self._lookup, value)
        if isinstance(value, dict):
            return {key: self.fill(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.fill(item) for item in value]
        return value

    def _lookup(self, match: re.Match[str]) -> str:
        kind, app = match.group(1), match.group(2)
        with self._lock:
            secret = self._secrets.get((kind, app))
        if secret is None:
            hint = f"call {PASSWORDS_TOOL} first" if kind == "password" else f"call {app}__login first"
            raise MissingSecretError(f"no {kind} for {app!r} yet: {hint}")
        return secret

    def capture(self, tool_name: str, response: Any) -> Any:
        """Store secrets found in a tool's response; return the response with placeholders instead."""
        if tool_name == PASSWORDS_TOOL and isinstance(response, list):
            return [self._capture_password(item) for item in response]
        if tool_name.endswith("__login") and isinstance(response, dict) and isinstance(response.get("access_token"), str):
            app = api_name(tool_name).partition(".")[0]
            with self._lock:
                self._secrets[("access_token", app)] = response["access_token"]
            return {**response, "access_token": "{{access_token:%s}}" % app}
        return response

    def _capture_password(self, item: Any) -> Any:
        if not (isinstance(item, dict) and isinstance(item.get("account_name"), str) and "password" in item):
            return item
        app = item["account_name"]
        with self._lock:
            self._secrets[("password", app)] = str(item["password"])
        return {**item, "password": "{{password:%s}}" % app}
