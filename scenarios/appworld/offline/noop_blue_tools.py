"""AgentBeats tool file that turns the SDK agent into the offline no-op Blue (no model, no key)."""

from blue_agent import sdk_agent

sdk_agent.install("noop")
