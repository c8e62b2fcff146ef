"""AgentBeats tool file that turns the SDK agent into the offline no-op Blue (no model, no key)."""

from green_agent.agentbeats import offline_blue

offline_blue.install("noop")
