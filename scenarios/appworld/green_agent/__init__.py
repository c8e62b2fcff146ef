"""AppWorld Green Agent: orchestrates and scores AppWorld battles for AgentBeats."""

__version__ = "0.1.0"
