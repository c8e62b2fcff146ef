"""Errors of the Blue Agents. They subclass the project's error tree (kernel.errors)."""

from __future__ import annotations

from kernel.errors import GatewayError, GreenError


class GatewayCallError(GatewayError):
    """The MCP gateway could not be reached or failed a call at the MCP level."""


class UndecodableAnswerError(GatewayCallError):
    """A tool's answer was not JSON (cut short): what AppWorld's requester raises decoding such a body."""


class AppWorldApiError(GreenError):
    """An AppWorld API answered with an error (what AppWorld's requester raises with raise_on_failure)."""

    def __init__(self, tool_name: str, message: str) -> None:
        super().__init__(f"{tool_name}: {message}")
        self.tool_name = tool_name
        self.api_message = message


class ReferenceSolutionError(GreenError):
    """A task's reference solution could not be loaded or does not define `solution(apis, requester)`."""
