"""The battle engine: one sequencer of the 11 steps (`sequencer`), its state (`state`), and the one builder
of a battle's configuration and live objects (`config`). The CLI/`eval` driver (`green_agent.local_battle`)
and the AgentBeats driver (`green_agent.agentbeats.session`) both run battles through it."""
