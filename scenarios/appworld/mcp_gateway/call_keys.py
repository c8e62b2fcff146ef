"""A call's identity, for "the same call repeated": a keyed hash of its API and the arguments it forwards.

Recovery from a fault and retries are counted per call, not per API (`green_agent.trajectory.faults`): a later
page, another payee, is another call. The call log redacts secrets, so two logins with different passwords log
the same arguments; the key compares them by value. It is HMAC-SHA256 under a key drawn when the gateway starts
and never written, so a key says nothing of the values it covers (a hash of a password alone could be guessed
back from a list of passwords).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any

KEY_HEX_CHARS = 32


class CallKeys:
    """Keys of one gateway process (module docstring)."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def of(self, tool: str, arguments: dict[str, Any]) -> str:
        """The key of calling `tool` with `arguments` (as forwarded: the API's parameters only)."""
        canonical = json.dumps([tool, arguments], sort_keys=True, ensure_ascii=False, default=repr,
                               separators=(",", ":"))
        return hmac.new(self._key, canonical.encode("utf-8", "replace"), hashlib.sha256).hexdigest()[:KEY_HEX_CHARS]
