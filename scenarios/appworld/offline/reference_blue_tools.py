"""AgentBeats tool file that turns the SDK agent into the offline reference Blue (no model, no key)."""

from blue_agent import sdk_agent

sdk_agent.install("reference")
