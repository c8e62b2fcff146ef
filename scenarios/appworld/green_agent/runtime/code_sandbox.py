"""Code mode's prerequisite, checked before a battle or run starts anything: a sandbox for agent code.

A code-mode battle's gateway runs the agent's code in a sandbox (`mcp_gateway.code.sandbox`: bubblewrap, or the
landlock fallback where namespaces are not allowed; `code_sandbox` may force one).
`check_code_sandbox` asks the same detector the gateway uses, so a machine without one fails at once with
the sentence saying what to install or allow (`SandboxUnavailable`, an infrastructure error: exit 3),
instead of every battle failing at its set-up; it returns the isolation's summary for the run's records.
"""

from __future__ import annotations

from mcp_gateway.code.sandbox import require_isolation
from kernel.settings import Interaction, Settings


def check_code_sandbox(interaction: Interaction | None, settings: Settings) -> str | None:
    """The isolation code will run under (None in tools mode). Raises SandboxUnavailable if there is none."""
    if interaction != "code":
        return None
    return require_isolation(settings.appworld_python, settings.unsafe_code_in_process, settings.code_sandbox).summary()
